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
