//! The web page's files as served: each asset with its content type and the security
//! headers, the token rule on the page, and what the files themselves may not contain
//! (no external address, no HTML parsing of strings, no inline script).

use std::path::PathBuf;

use crate::TempDir;
use crate::serve_client::BoxError;
use crate::serve_routes::example_server;

type Result<T = ()> = std::result::Result<T, BoxError>;

/// The page's source files, name and text, as they are in the repository.
fn asset_files() -> Result<Vec<(String, String)>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/web");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).ok_or("file name")?.to_owned();
        files.push((name, std::fs::read_to_string(&path)?));
    }
    files.sort();
    assert!(files.len() >= 4, "the page has its files: {:?}", files.iter().map(|f| &f.0).collect::<Vec<_>>());
    Ok(files)
}

fn assert_security_headers(target: &str, headers: &std::collections::BTreeMap<String, String>) {
    let policy = headers.get("content-security-policy").map(String::as_str).unwrap_or("");
    assert!(policy.starts_with("default-src 'self'"), "{target}: {policy:?}");
    assert!(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"), "{target}: {policy:?}");
    assert!(policy.contains("frame-ancestors 'none'"), "{target}: {policy:?}");
    assert_eq!(headers.get("x-content-type-options").map(String::as_str), Some("nosniff"), "{target}");
    assert_eq!(headers.get("x-frame-options").map(String::as_str), Some("DENY"), "{target}");
    assert_eq!(headers.get("referrer-policy").map(String::as_str), Some("no-referrer"), "{target}");
}

#[test]
fn web_assets_are_served_with_their_type_and_the_security_headers() -> Result {
    let dir = TempDir::new()?;
    let server = example_server(&dir, &[])?;
    for (name, text) in asset_files()? {
        let (target, kind) = match name.rsplit_once('.').map(|(_, ext)| ext) {
            Some("html") => ("/".to_owned(), "text/html"),
            Some("js") => (format!("/assets/{name}"), "text/javascript"),
            Some("css") => (format!("/assets/{name}"), "text/css"),
            other => return Err(format!("{name}: an asset of unknown kind {other:?}").into()),
        };
        let reply = server.get(&target)?;
        assert_eq!(reply.status, 200, "{target}: {}", reply.text());
        let content_type = reply.headers.get("content-type").map(String::as_str).unwrap_or("");
        assert!(content_type.starts_with(kind) && content_type.contains("charset=utf-8"), "{target}: {content_type}");
        assert_eq!(reply.text(), text, "{target} serves the file in the repository");
        assert_security_headers(&target, &reply.headers);
    }
    let missing = server.get("/assets/nothing.js")?;
    assert_eq!((missing.status, missing.code().as_deref()), (404, Some("CLI_HTTP_NOT_FOUND")));
    let escape = server.get("/assets/..%2Fsrc%2Fmain.rs")?;
    assert_eq!(escape.status, 404, "{}", escape.text());
    // The JSON routes and the refusals carry the headers too.
    let status = server.get("/api/memory/status")?;
    assert_security_headers("/api/memory/status", &status.headers);
    let refused = server.raw("GET", "/", &[("Host", &server.host())], None)?;
    assert_security_headers("refused /", &refused.headers);
    Ok(())
}

#[test]
fn web_page_needs_the_token_and_trades_it_for_a_cookie() -> Result {
    let dir = TempDir::new()?;
    let server = example_server(&dir, &[])?;
    let host = server.host();
    for target in ["/", "/assets/app.js", "/assets/style.css"] {
        let bare = server.raw("GET", target, &[("Host", &host)], None)?;
        assert_eq!((bare.status, bare.code().as_deref()), (401, Some("CLI_HTTP_UNAUTHORIZED")), "{target}");
        let wrong = server.raw("GET", target, &[("Host", &host), ("Cookie", "scriptorium_token=00ff")], None)?;
        assert_eq!(wrong.status, 401, "{target}");
    }
    assert_eq!(server.raw("GET", "/?token=00ff", &[("Host", &host)], None)?.status, 401);

    let trade = server.raw("GET", &format!("/?token={}", server.token), &[("Host", &host)], None)?;
    assert_eq!(trade.status, 303);
    assert_eq!(trade.headers.get("location").map(String::as_str), Some("/"));
    let cookie = trade.headers.get("set-cookie").ok_or("set-cookie")?;
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
    let pair = cookie.split(';').next().ok_or("cookie pair")?;
    for target in ["/", "/assets/app.js", "/api/memory/topics"] {
        let reply = server.raw("GET", target, &[("Host", &host), ("Cookie", pair)], None)?;
        assert_eq!(reply.status, 200, "{target} with the cookie: {}", reply.text());
    }
    Ok(())
}

#[test]
fn web_assets_name_nothing_outside_the_server() -> Result {
    // The SVG namespace is an identifier, not an address anything is fetched from.
    const SVG_NAMESPACE: &str = "http://www.w3.org/2000/svg";
    for (name, text) in asset_files()? {
        let without = text.replace(SVG_NAMESPACE, "");
        for needle in ["http:", "https:", "//cdn", "src=\"//", "href=\"//", "@import", "url(", "ws://", "wss://"] {
            assert!(!without.contains(needle), "{name} names {needle:?}, but the page loads only its own files");
        }
    }
    Ok(())
}

#[test]
fn web_scripts_never_parse_strings_as_html_or_code() -> Result {
    let files = asset_files()?;
    let names: Vec<&str> = files.iter().map(|(name, _)| name.as_str()).collect();
    for (name, text) in &files {
        if name.ends_with(".js") {
            for needle in [
                "innerHTML",
                "outerHTML",
                "insertAdjacentHTML",
                "document.write",
                "eval(",
                "new Function",
                "createContextualFragment",
                "DOMParser",
                "srcdoc",
                "javascript:",
            ] {
                assert!(!text.contains(needle), "{name} uses {needle:?}: memory text must enter the page as text");
            }
            // Every module it imports is one of the served files.
            for line in text.lines().filter(|line| line.starts_with("import ")) {
                let target = line.rsplit_once("'./").and_then(|(_, rest)| rest.split_once('\'')).map(|(t, _)| t);
                let target = target.ok_or_else(|| format!("{name}: import not of ./x.js: {line}"))?;
                assert!(names.contains(&target), "{name} imports {target}, which is not in assets/web");
            }
        }
        if name.ends_with(".html") {
            let lower = text.to_ascii_lowercase();
            for (at, _) in lower.match_indices("<script") {
                let tag = &lower[at..lower[at..].find('>').map_or(lower.len(), |end| at + end)];
                assert!(tag.contains(" src=\"/assets/"), "{name}: inline script {tag:?} (the policy forbids it)");
            }
            assert!(!lower.contains("<style") && !lower.contains(" style="), "{name}: inline style");
            assert!(!lower.contains(" onclick=") && !lower.contains(" onload="), "{name}: inline handler");
        }
    }
    Ok(())
}
