//! `scriptorium serve` under hostile requests: no or a wrong token, a foreign `Host` or
//! `Origin`, oversize and malformed bodies, path traversal in every spelling, links out
//! of the workspace. Each gets a clear status and a JSON body with a stable code, and the
//! workspace stays byte for byte as it was.

use serde_json::json;

use crate::TempDir;
use crate::serve_client::{BoxError, tree_hash};
use crate::serve_routes::{example_server, herbs};

type Result<T = ()> = std::result::Result<T, BoxError>;

/// A named request variant: its headers, and the status and code it must get.
type Case<'a> = (&'a str, Vec<(&'a str, String)>, u16, &'a str);

#[test]
fn requests_without_the_token_or_from_elsewhere_are_refused() -> Result {
    let dir = TempDir::new()?;
    let server = example_server(&dir, &[])?;
    let host = server.host();
    let auth = format!("Bearer {}", server.token);
    let before = tree_hash(&server.workspace, false)?;

    let cases: Vec<Case<'_>> = vec![
        ("no token", vec![("Host", host.clone())], 401, "CLI_HTTP_UNAUTHORIZED"),
        (
            "wrong token",
            vec![("Host", host.clone()), ("Authorization", format!("Bearer {}", "0".repeat(64)))],
            401,
            "CLI_HTTP_UNAUTHORIZED",
        ),
        (
            "token prefix",
            vec![("Host", host.clone()), ("Authorization", format!("Bearer {}", &server.token[..10]))],
            401,
            "CLI_HTTP_UNAUTHORIZED",
        ),
        (
            "basic auth",
            vec![("Host", host.clone()), ("Authorization", format!("Basic {}", server.token))],
            401,
            "CLI_HTTP_UNAUTHORIZED",
        ),
        (
            "wrong cookie",
            vec![("Host", host.clone()), ("Cookie", "scriptorium_token=abc".to_owned())],
            401,
            "CLI_HTTP_UNAUTHORIZED",
        ),
        (
            "rebinding host",
            vec![("Host", format!("evil.example:{}", server.addr.port())), ("Authorization", auth.clone())],
            403,
            "CLI_HTTP_FORBIDDEN_HOST",
        ),
        (
            "other port",
            vec![("Host", "127.0.0.1:1".to_owned()), ("Authorization", auth.clone())],
            403,
            "CLI_HTTP_FORBIDDEN_HOST",
        ),
        (
            "no port",
            vec![("Host", "localhost".to_owned()), ("Authorization", auth.clone())],
            403,
            "CLI_HTTP_FORBIDDEN_HOST",
        ),
        (
            "cross origin",
            vec![("Host", host.clone()), ("Authorization", auth.clone()), ("Origin", "http://evil.example".to_owned())],
            403,
            "CLI_HTTP_FORBIDDEN_ORIGIN",
        ),
        (
            "null origin",
            vec![("Host", host.clone()), ("Authorization", auth.clone()), ("Origin", "null".to_owned())],
            403,
            "CLI_HTTP_FORBIDDEN_ORIGIN",
        ),
        (
            "https origin",
            vec![("Host", host.clone()), ("Authorization", auth.clone()), ("Origin", format!("https://{host}"))],
            403,
            "CLI_HTTP_FORBIDDEN_ORIGIN",
        ),
        (
            "origin other port",
            vec![("Host", host.clone()), ("Authorization", auth.clone()), ("Origin", "http://127.0.0.1:1".to_owned())],
            403,
            "CLI_HTTP_FORBIDDEN_ORIGIN",
        ),
    ];
    for (name, headers, status, code) in &cases {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        for (method, target, body) in [
            ("GET", "/api/memory/status", None),
            ("GET", "/", None),
            ("GET", "/api/nothing", None),
            ("PUT", "/api/memory/topics/garden/herbs.md", Some(json!({"content": herbs("Sage.")}).to_string())),
            ("POST", "/api/tools/memory_update", Some("{}".to_owned())),
        ] {
            let reply = server.raw(method, target, &headers, body.as_deref().map(str::as_bytes))?;
            assert_eq!(reply.status, *status, "{name}: {method} {target}: {}", reply.text());
            assert_eq!(reply.code().as_deref(), Some(*code), "{name}: {method} {target}");
        }
    }
    // The right site with the right token passes, under any loopback name.
    let same_origin = format!("http://localhost:{}", server.addr.port());
    let ok = server.raw(
        "GET",
        "/api/memory/status",
        &[("Host", &format!("localhost:{}", server.addr.port())), ("Authorization", &auth), ("Origin", &same_origin)],
        None,
    )?;
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert_eq!(tree_hash(&server.workspace, false)?, before, "a refused request changed the workspace");
    Ok(())
}

#[test]
fn the_page_trades_the_token_for_a_strict_cookie() -> Result {
    let dir = TempDir::new()?;
    let server = example_server(&dir, &[])?;
    let host = server.host();
    let wrong = server.raw("GET", "/?token=ffff", &[("Host", &host)], None)?;
    assert_eq!((wrong.status, wrong.code().as_deref()), (401, Some("CLI_HTTP_UNAUTHORIZED")));
    let set = server.raw("GET", &format!("/?token={}", server.token), &[("Host", &host)], None)?;
    assert_eq!(set.status, 303);
    assert_eq!(set.headers.get("location").map(String::as_str), Some("/"));
    let cookie = set.headers.get("set-cookie").ok_or("no cookie")?;
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
    let pair = cookie.split(';').next().ok_or("cookie pair")?.to_owned();
    let page = server.raw("GET", "/", &[("Host", &host), ("Cookie", &pair)], None)?;
    assert_eq!(page.status, 200);
    let api =
        server.raw("GET", "/api/memory/topics", &[("Host", &host), ("Cookie", &format!("other=1; {pair}"))], None)?;
    assert_eq!(api.status, 200, "the cookie opens the API for the page");
    // The token file is the owner's alone.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(server.workspace.join(".scriptorium/http-token"))?.permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    Ok(())
}

#[test]
fn oversize_and_malformed_bodies_are_refused() -> Result {
    let dir = TempDir::new()?;
    let server = example_server(&dir, &["--max-body", "4096"])?;
    let before = tree_hash(&server.workspace, false)?;
    let big = json!({"content": herbs(&"Basil. ".repeat(2000))});
    let reply = server.call("PUT", "/api/memory/topics/garden/herbs.md", Some(&big))?;
    assert_eq!((reply.status, reply.code().as_deref()), (413, Some("CLI_HTTP_BODY_TOO_LARGE")), "{}", reply.text());
    let reply = server.call("POST", "/api/memory/changes", Some(&json!({"patch": "x".repeat(10_000)})))?;
    assert_eq!(reply.status, 413);

    let host = server.host();
    let auth = format!("Bearer {}", server.token);
    let headers = [("Host", host.as_str()), ("Authorization", auth.as_str()), ("Content-Type", "application/json")];
    for body in [&b"{"[..], b"not json", b"{\"content\": }", b"\xff\xfe", b""] {
        for (method, target) in [
            ("PUT", "/api/memory/topics/garden/herbs.md"),
            ("POST", "/api/memory/changes"),
            ("POST", "/api/sessions/s/messages"),
            ("POST", "/api/tools/memory_get"),
        ] {
            let reply = server.raw(method, target, &headers, Some(body))?;
            assert_eq!(
                (reply.status, reply.code().as_deref()),
                (400, Some("CLI_HTTP_BAD_JSON")),
                "{method} {target} {body:?}"
            );
        }
    }
    for body in [json!([]), json!("text"), json!(7)] {
        let reply = server.call("PUT", "/api/memory/topics/garden/herbs.md", Some(&body))?;
        assert_eq!((reply.status, reply.code().as_deref()), (400, Some("INVALID_ARGUMENT")), "{body}");
    }
    assert_eq!(tree_hash(&server.workspace, false)?, before);
    Ok(())
}

#[test]
fn path_traversal_in_every_form_is_forbidden_and_changes_nothing() -> Result {
    let dir = TempDir::new()?;
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside)?;
    std::fs::write(outside.join("secret.md"), "# Secret\n\nDo not read.\n")?;
    let server = example_server(&dir, &[])?;
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outside.join("secret.md"), server.workspace.join("topics/garden/leak.md"))?;
        std::os::unix::fs::symlink(&outside, server.workspace.join("topics/linked"))?;
    }
    std::fs::create_dir_all(server.workspace.join(".git"))?;
    std::fs::write(server.workspace.join(".git/notes.md"), "private\n")?;
    let before = tree_hash(&server.workspace, true)?;
    let outside_before = tree_hash(&outside, true)?;

    let spellings = [
        "../outside/secret.md",
        "..%2Foutside%2Fsecret.md",
        "%2e%2e/%2e%2e/outside/secret.md",
        "%2E%2E%2F%2E%2E%2Foutside%2Fsecret.md",
        "..%252F..%252Foutside%252Fsecret.md",
        "..%5C..%5Coutside%5Csecret.md",
        "%2Fetc%2Fpasswd.md",
        "/etc/passwd.md",
        "garden/../../.git/notes.md",
        "../.git/notes.md",
        "%2e%2e/.git/notes.md",
        "../.scriptorium/http-token",
        "..%2F.scriptorium%2Fhttp-token",
        "../sources/openprogram/_v2/sess-garden.md",
        "..%2Fsources%2Fopenprogram%2F_v2%2Fsess-garden.md",
        ".git/x.md",
        "garden/.hidden.md",
        "garden/leak.md",
        "linked/secret.md",
        "garden/a%00.md",
    ];
    for spelling in spellings {
        let target = format!("/api/memory/topics/{spelling}");
        for (method, body) in
            [("GET", None), ("PUT", Some(json!({"content": herbs("Overwritten.")}))), ("DELETE", None)]
        {
            let reply = server.call(method, &target, body.as_ref())?;
            assert_eq!(reply.status, 403, "{method} {target}: {}", reply.text());
            assert_eq!(reply.code().as_deref(), Some("PATH_OUTSIDE_WORKSPACE"), "{method} {target}");
            assert!(!reply.text().contains("Do not read") && !reply.text().contains(&server.token));
        }
    }
    for path in [
        "../outside/secret.md",
        "/etc/passwd",
        ".git/notes.md",
        ".scriptorium/http-token",
        "sources/openprogram/_v2/sess-garden.md",
        "topics/linked/secret.md",
    ] {
        let restore =
            server.call("POST", "/api/memory/restore", Some(&json!({"path": path, "commit": "0".repeat(40)})))?;
        assert_eq!(restore.status, 403, "restore {path}: {}", restore.text());
        let validate = server.call("POST", "/api/memory/validate", Some(&json!({"path": path, "content": "x"})))?;
        assert_eq!(validate.status, 403, "validate {path}: {}", validate.text());
        let history = server.get(&format!("/api/memory/history?path={}", path.replace('/', "%2F")))?;
        assert!(matches!(history.status, 403 | 200), "history {path}");
        if history.status == 200 {
            assert_eq!(history.json(), json!([]), "history {path}");
        }
    }
    for handle in [
        "../../../outside/secret.md%23source-0",
        "..%2F.git%2Fnotes.md%23source-0",
        "sources/..%2F..%2Foutside%2Fsecret.md%23x",
    ] {
        assert_eq!(server.get(&format!("/api/memory/source?handle={handle}"))?.status, 403, "source {handle}");
    }
    for tool_path in ["../outside/secret.md", ".git/notes.md", ".scriptorium/http-token", "topics/linked/secret.md"] {
        let reply = server.call("POST", "/api/tools/memory_get", Some(&json!({"path": tool_path})))?;
        assert_eq!(reply.status, 403, "memory_get {tool_path}: {}", reply.text());
    }
    assert_eq!(
        tree_hash(&server.workspace, true)?
            .into_iter()
            .filter(|(p, _)| !p.starts_with(".scriptorium/"))
            .collect::<Vec<_>>(),
        before.into_iter().filter(|(p, _)| !p.starts_with(".scriptorium/")).collect::<Vec<_>>(),
        "the workspace changed"
    );
    assert_eq!(tree_hash(&outside, true)?, outside_before, "a file outside the workspace changed");
    Ok(())
}

#[test]
fn the_topics_directory_itself_is_forbidden_and_changes_nothing() -> Result {
    let dir = TempDir::new()?;
    let server = example_server(&dir, &[])?;
    let before = tree_hash(&server.workspace, false)?;
    // Spec 02 §8.4: PUT and DELETE on the topics directory itself are 403, in every
    // spelling of "no file below topics/".
    for spelling in ["", ".", "./", "%2e", "%2E", "%2e%2f", "%2E/", "%252e", "./.", "garden/..", "garden/%2e%2e", "/"] {
        let target = format!("/api/memory/topics/{spelling}");
        for (method, body) in
            [("PUT", Some(json!({"content": herbs("Overwritten.")}))), ("DELETE", None), ("GET", None)]
        {
            let reply = server.call(method, &target, body.as_ref())?;
            assert_eq!(reply.status, 403, "{method} {target}: {}", reply.text());
            assert_eq!(reply.code().as_deref(), Some("PATH_OUTSIDE_WORKSPACE"), "{method} {target}");
        }
    }
    assert_eq!(tree_hash(&server.workspace, false)?, before, "the workspace changed");
    Ok(())
}

#[test]
fn binding_beyond_loopback_needs_the_flag_and_warns() -> Result {
    let dir = TempDir::new()?;
    let ws = dir.path().join("memory");
    crate::copy_tree(&crate::example_workspace(), &ws)?;
    let refused = crate::run(
        crate::scriptorium(dir.path())
            .args(["serve", "--addr", "0.0.0.0:0", "--workspace"])
            .arg(&ws)
            .env("SCRIPTORIUM_CONFIG", dir.path().join("no-config.toml")),
    )?;
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(
        refused.stderr.starts_with("error[CLI_USAGE]: ") && refused.stderr.contains("--allow-non-loopback"),
        "{}",
        refused.stderr
    );
    assert!(!ws.join(".scriptorium/http-token").exists(), "a refused start keeps no token");

    let server = crate::serve_client::Server::start(&ws, &["--addr", "0.0.0.0:0", "--allow-non-loopback"], &[])?;
    let log = server.stderr.lock().map(|l| l.clone()).unwrap_or_default();
    assert!(log.contains("warning: listening on 0.0.0.0:0, not loopback"), "{log}");
    // Loopback names still pass the Host guard; a foreign name still does not.
    assert_eq!(server.get("/api/memory/status")?.status, 200);
    let auth = format!("Bearer {}", server.token);
    let foreign = server.raw(
        "GET",
        "/api/memory/status",
        &[("Host", &format!("evil.example:{}", server.addr.port())), ("Authorization", &auth)],
        None,
    )?;
    assert_eq!(foreign.status, 403);
    Ok(())
}
