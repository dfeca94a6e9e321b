//! `scriptorium mcp`: the real binary spoken to over its pipes, newline-delimited JSON-RPC,
//! on a copy of the example workspace.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{TempDir, TestResult, copy_tree, example_workspace, scriptorium};

/// A running `scriptorium mcp` and its pipes.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Session {
    fn start(workspace: &Path, env: &[(&str, &str)]) -> Result<Self, Box<dyn std::error::Error>> {
        let home = workspace.parent().ok_or("workspace has a parent")?;
        let mut cmd = scriptorium(home);
        cmd.arg("mcp").arg("--workspace").arg(workspace);
        // No configuration from the machine running the tests.
        cmd.env_remove("SCRIPTORIUM_BACKEND").env("SCRIPTORIUM_CONFIG", home.join("no-config.toml"));
        for (key, value) in env {
            cmd.env(key, value);
        }
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn()?;
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Session { child, stdin, stdout, next_id: 0 })
    }

    fn send_line(&mut self, line: &str) -> TestResult {
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        stdin.write_all(line.as_bytes())?;
        stdin.write_all(b"\n")?;
        stdin.flush()?;
        Ok(())
    }

    fn read_reply(&mut self) -> Result<Value, Box<dyn std::error::Error>> {
        let mut line = String::new();
        self.stdout.read_line(&mut line)?;
        assert!(line.ends_with('\n'), "one reply per line: {line:?}");
        Ok(serde_json::from_str(&line)?)
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, Box<dyn std::error::Error>> {
        self.next_id += 1;
        let id = self.next_id;
        self.send_line(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string())?;
        let reply = self.read_reply()?;
        assert_eq!(reply["jsonrpc"], "2.0");
        assert_eq!(reply["id"], json!(id), "{reply}");
        Ok(reply)
    }

    fn call(&mut self, name: &str, arguments: Value) -> Result<(String, bool), Box<dyn std::error::Error>> {
        let reply = self.request("tools/call", json!({"name": name, "arguments": arguments}))?;
        let result = &reply["result"];
        let content = result["content"].as_array().ok_or_else(|| format!("no content: {reply}"))?;
        assert_eq!(content.len(), 1, "{reply}");
        assert_eq!(content[0]["type"], "text");
        let text = content[0]["text"].as_str().ok_or("text")?.to_owned();
        Ok((text, result["isError"] == json!(true)))
    }

    fn handshake(&mut self) -> Result<Value, Box<dyn std::error::Error>> {
        let reply = self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "it", "version": "1"}}),
        )?;
        self.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)?;
        Ok(reply)
    }

    /// Close stdin and wait (polled, generous bound) for the exit status.
    fn close(mut self) -> Result<i32, Box<dyn std::error::Error>> {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status.code().unwrap_or(-1));
            }
            if Instant::now() > deadline {
                self.child.kill()?;
                return Err("mcp did not exit after stdin closed".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A copy of the example workspace in a fresh temp dir (kept alive by the returned guard).
fn example_copy() -> Result<(TempDir, PathBuf), Box<dyn std::error::Error>> {
    let dir = TempDir::new()?;
    let ws = dir.path().join("ws");
    copy_tree(&example_workspace(), &ws)?;
    Ok((dir, ws))
}

#[test]
fn a_session_lists_and_calls_every_reading_tool() -> TestResult {
    let (_dir, ws) = example_copy()?;
    let mut s = Session::start(&ws, &[])?;
    let init = s.handshake()?;
    assert_eq!(init["result"]["serverInfo"]["name"], "scriptorium");
    assert_eq!(init["result"]["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert!(init["result"]["capabilities"]["tools"].is_object(), "{init}");

    let list = s.request("tools/list", json!({}))?;
    let tools = list["result"]["tools"].as_array().ok_or("tools")?;
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "memory_search",
            "memory_grep",
            "memory_get",
            "memory_browse",
            "memory_update",
            "memory_promote",
            "memory_status"
        ]
    );
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(tool["description"].as_str().is_some_and(|d| !d.is_empty()));
    }

    let (text, err) = s.call("memory_search", json!({"query": "book club"}))?;
    assert!(!err, "{text}");
    assert!(text.contains("book-club"), "{text}");
    let (text, err) = s.call("memory_get", json!({"path": "topics/people/book-club.md"}))?;
    assert!(!err, "{text}");
    assert!(text.contains("first Thursday"), "{text}");
    let (text, err) = s.call("memory_browse", json!({}))?;
    assert!(!err, "{text}");
    assert!(text.contains("people"), "{text}");
    let (text, err) = s.call("memory_status", json!({}))?;
    assert!(!err, "{text}");
    let status: Value = serde_json::from_str(&text)?;
    assert_eq!(status["topic_files"], 2, "{text}");

    // A refused path is a tool error carrying the contract code, not a protocol error.
    let (text, err) = s.call("memory_get", json!({"path": "../x"}))?;
    assert!(err, "{text}");
    let answer: Value = serde_json::from_str(&text)?;
    assert_eq!(answer["ok"], false);
    assert_eq!(answer["error"]["code"], "PATH_OUTSIDE_WORKSPACE");

    let res = s.request("resources/list", json!({}))?;
    assert_eq!(res["result"]["resources"][0]["uri"], "memory://core", "{res}");
    let read = s.request("resources/read", json!({"uri": "memory://core"}))?;
    assert_eq!(read["result"]["contents"][0]["uri"], "memory://core", "{read}");
    let missing = s.request("resources/read", json!({"uri": "memory://nope"}))?;
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
    assert_eq!(s.close()?, 0);
    Ok(())
}

#[test]
fn an_update_installs_through_the_pipe() -> TestResult {
    let (_dir, ws) = example_copy()?;
    let mut s = Session::start(&ws, &[])?;
    s.handshake()?;
    let (status, _) = s.call("memory_status", json!({}))?;
    let revision = serde_json::from_str::<Value>(&status)?["revision"].clone();
    let request = json!({"memory_changes": [{
        "op": "create_record", "content": "The club votes on the next book.", "time": "2026-03-05",
        "sources": [{"source": "openprogram/group-bookclub/b1", "label": "vote"}],
        "destination": {"topic_path": "topics/people/voting.md", "headings": ["Voting"], "position": "end"}}],
        "base_revision": revision});
    let (text, err) = s.call("memory_update", request)?;
    assert!(!err, "{text}");
    let answer: Value = serde_json::from_str(&text)?;
    assert_eq!(answer["ok"], true, "{text}");
    let written = std::fs::read_to_string(ws.join("topics/people/voting.md"))?;
    assert!(written.contains("The club votes on the next book."), "{written}");
    let (text, _) = s.call("memory_get", json!({"path": "topics/people/voting.md"}))?;
    assert!(text.contains("votes on the next book"), "{text}");
    assert_eq!(s.close()?, 0);
    Ok(())
}

#[test]
fn bad_lines_and_unknown_names_get_errors_and_serving_goes_on() -> TestResult {
    let (_dir, ws) = example_copy()?;
    let mut s = Session::start(&ws, &[])?;
    s.handshake()?;
    s.send_line("{not json")?;
    let reply = s.read_reply()?;
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    assert_eq!(reply["id"], Value::Null);
    s.send_line("[1, 2]")?;
    let reply = s.read_reply()?;
    assert_eq!(reply["error"]["code"], -32600, "{reply}");

    let unknown = s.request("tools/call", json!({"name": "memory_nope", "arguments": {}}))?;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let method = s.request("no/such", json!({}))?;
    assert_eq!(method["error"]["code"], -32601, "{method}");
    let ping = s.request("ping", json!({}))?;
    assert_eq!(ping["result"], json!({}));
    let (_, err) = s.call("memory_status", json!({}))?;
    assert!(!err, "still serving after the bad lines");
    assert_eq!(s.close()?, 0);
    Ok(())
}

#[test]
fn stdin_closed_mid_session_exits_zero() -> TestResult {
    let (_dir, ws) = example_copy()?;
    let mut s = Session::start(&ws, &[])?;
    s.handshake()?;
    // A request line cut off without its newline, then EOF.
    s.stdin.as_mut().ok_or("stdin")?.write_all(br#"{"jsonrpc":"2.0","id":9,"method":"tools/li"#)?;
    assert_eq!(s.close()?, 0);
    Ok(())
}

#[test]
fn a_disabled_backend_lists_nothing_and_creates_no_workspace() -> TestResult {
    let dir = TempDir::new()?;
    let ws = dir.path().join("never");
    let mut s = Session::start(&ws, &[("SCRIPTORIUM_BACKEND", "none")])?;
    let init = s.handshake()?;
    assert_eq!(init["result"]["serverInfo"]["name"], "scriptorium");
    let list = s.request("tools/list", json!({}))?;
    assert_eq!(list["result"]["tools"], json!([]), "{list}");
    let res = s.request("resources/list", json!({}))?;
    assert_eq!(res["result"]["resources"], json!([]));
    let call = s.request("tools/call", json!({"name": "memory_status", "arguments": {}}))?;
    assert_eq!(call["error"]["code"], -32602, "{call}");
    assert_eq!(s.close()?, 0);
    assert!(!ws.exists(), "memory.backend = none created the workspace");
    Ok(())
}

#[test]
fn a_config_file_can_disable_the_backend() -> TestResult {
    let dir = TempDir::new()?;
    let ws = dir.path().join("never");
    let config = dir.write("config.toml", b"[memory]\nbackend = \"none\"\n")?;
    let mut cmd = scriptorium(dir.path());
    cmd.arg("mcp").arg("--workspace").arg(&ws).arg("--config").arg(&config).env_remove("SCRIPTORIUM_BACKEND");
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn()?;
    let mut stdin = child.stdin.take().ok_or("stdin")?;
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n")?;
    drop(stdin);
    let out = child.wait_with_output()?;
    assert_eq!(out.status.code(), Some(0));
    let reply: Value = serde_json::from_slice(&out.stdout)?;
    assert_eq!(reply["result"]["tools"], json!([]), "{reply}");
    assert!(!ws.exists());
    Ok(())
}

#[test]
fn the_core_render_report_is_a_resource() -> TestResult {
    let dir = TempDir::new()?;
    let ws = dir.path().join("ws");
    copy_tree(&crate::vectors().join("transaction/core-render/after"), &ws)?;
    let mut s = Session::start(&ws, &[])?;
    s.handshake()?;
    let list = s.request("resources/list", json!({}))?;
    let uris: Vec<&str> =
        list["result"]["resources"].as_array().ok_or("resources")?.iter().filter_map(|r| r["uri"].as_str()).collect();
    assert_eq!(uris, ["memory://core", "memory://core/report"]);
    let before = s.request("resources/read", json!({"uri": "memory://core/report"}))?;
    assert_eq!(before["result"]["contents"][0]["text"], "null", "no render yet: {before}");
    assert_eq!(before["result"]["contents"][0]["mimeType"], "application/json");
    assert_eq!(s.close()?, 0);

    // A repair renders core.md and writes its report; the resource is that file.
    let repair = crate::run(scriptorium(dir.path()).args(["check", "--repair", "--workspace"]).arg(&ws))?;
    assert_eq!(repair.code, Some(0), "{}", repair.stderr);
    let mut s = Session::start(&ws, &[])?;
    s.handshake()?;
    let after = s.request("resources/read", json!({"uri": "memory://core/report"}))?;
    let text = after["result"]["contents"][0]["text"].as_str().ok_or("text")?;
    assert_eq!(text, std::fs::read_to_string(ws.join(".scriptorium/core-report.json"))?);
    let report: Value = serde_json::from_str(text)?;
    assert_eq!(report["budget"], 2000);
    assert!(report["tokens_used"].as_u64().is_some_and(|used| used > 0), "{report}");
    assert_eq!(s.close()?, 0);
    Ok(())
}

#[test]
fn every_tool_answers_its_error_as_a_tool_error() -> TestResult {
    let (_dir, ws) = example_copy()?;
    let before = crate::run(scriptorium(&ws).args(["status", "--json", "--workspace"]).arg(&ws))?.json()?;
    let mut s = Session::start(&ws, &[])?;
    s.handshake()?;
    let cases = [
        ("memory_search", json!({"query": "book", "top_k": "many"}), "INVALID_ARGUMENT"),
        ("memory_grep", json!({"query": "book", "case_sensitive": "yes"}), "INVALID_ARGUMENT"),
        ("memory_get", json!({"path": ".scriptorium/runtime.json"}), "PATH_OUTSIDE_WORKSPACE"),
        ("memory_browse", json!({"prefix": 7}), "INVALID_ARGUMENT"),
        (
            "memory_update",
            json!({"base_revision": "0000", "changes": [{"path": "topics/people/book-club.md", "action": "delete"}]}),
            "CONCURRENT_UPDATE",
        ),
        ("memory_promote", json!({"source_id": "nope/x/y"}), "MEMORY_NOT_FOUND"),
    ];
    for (tool, arguments, code) in cases {
        let (text, err) = s.call(tool, arguments)?;
        assert!(err, "{tool}: {text}");
        let answer: Value = serde_json::from_str(&text)?;
        assert_eq!((answer["ok"].as_bool(), answer["error"]["code"].as_str()), (Some(false), Some(code)), "{tool}");
    }
    assert_eq!(s.close()?, 0);
    assert!(ws.join("topics/people/book-club.md").is_file(), "the refused delete changed nothing");
    let after = crate::run(scriptorium(&ws).args(["status", "--json", "--workspace"]).arg(&ws))?.json()?;
    assert_eq!(after["revision"], before["revision"]);

    // memory_status fails only when the workspace cannot open: a file where the root should be.
    let dir = TempDir::new()?;
    let file = dir.write("not-a-dir", b"plain file\n")?;
    let mut s = Session::start(&file, &[])?;
    s.handshake()?;
    let (text, err) = s.call("memory_status", json!({}))?;
    assert!(err, "{text}");
    let answer: Value = serde_json::from_str(&text)?;
    assert_eq!(answer["ok"], false, "{text}");
    assert!(answer["error"]["code"].as_str().is_some_and(|code| !code.is_empty()), "{text}");
    assert_eq!(s.close()?, 0);
    assert_eq!(std::fs::read(&file)?, b"plain file\n");
    Ok(())
}

#[test]
fn a_client_that_disconnects_mid_call_leaves_a_clean_exit_and_an_untorn_workspace() -> TestResult {
    let (_dir, ws) = example_copy()?;
    let mut s = Session::start(&ws, &[])?;
    s.handshake()?;
    let (status, _) = s.call("memory_status", json!({}))?;
    let revision = serde_json::from_str::<Value>(&status)?["revision"].clone();
    let request = json!({"memory_changes": [{
        "op": "create_record", "content": "The club votes on the next book.", "time": "2026-03-05",
        "sources": [{"source": "openprogram/group-bookclub/b1", "label": "vote"}],
        "destination": {"topic_path": "topics/people/voting.md", "headings": ["Voting"], "position": "end"}}],
        "base_revision": revision});
    s.send_line(
        &json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
        "params": {"name": "memory_update", "arguments": request}})
        .to_string(),
    )?;
    // Gone before the reply: both pipes closed while the update runs.
    let Session { mut child, stdin, stdout, .. } = s;
    drop(stdin);
    drop(stdout);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() > deadline {
            child.kill()?;
            return Err("mcp did not exit after the client went away".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "a vanished client is an ordinary end");
    // All or nothing: either the update is installed whole or not at all, and check is clean.
    let check = crate::run(scriptorium(&ws).args(["check", "--workspace"]).arg(&ws))?;
    assert_eq!(check.code, Some(0), "{}\n{}", check.stdout, check.stderr);
    let leftovers: Vec<String> = std::fs::read_dir(ws.join(".scriptorium/txn"))
        .map(|dir| dir.filter_map(|entry| entry.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    assert!(leftovers.is_empty(), "no staged transaction left: {leftovers:?}");
    // Nothing holds the write lock: the next writer installs at once.
    let installed = ws.join("topics/people/voting.md").is_file();
    let club = std::fs::read_to_string(ws.join("topics/people/book-club.md"))?;
    let changes = json!([{"path": "topics/people/book-club.md", "action": "write", "content": club.replacen("Thursday", "Thursday,", 1)}]);
    let edit = ws.parent().ok_or("parent")?.join("edit.json");
    std::fs::write(&edit, changes.to_string())?;
    let update = crate::run(scriptorium(&ws).args(["update", "--workspace"]).arg(&ws).arg("--changes").arg(&edit))?;
    assert_eq!(update.code, Some(0), "installed before: {installed}; {}", update.stderr);
    Ok(())
}
