//! `scriptorium hook claude-code stop|session-end` over the real binary: the transcript's
//! new lines are imported, the hook returns within a second, and the write hook it started
//! in the background runs a whole pass against the scripted model server and installs.
//! End to end: the facts are found by `scriptorium search`, and `memory_get` on the block
//! shows the footnote that leads to the exact turn of the transcript.

use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::Digest as _;

use crate::claude_transcript::{assistant, user};
use crate::scripted_model::{serve, topic_writer};
use crate::{Run, TempDir, TestResult, run, scriptorium};

const KEY: &str = "sk-hook-test-SECRET-0123456789";
const SESSION: &str = "7f3a9c2e-5d1b-4e8a-9f00-1c2d3e4f5a6b";

/// Run `hook claude-code EVENT` with `input` on stdin and the writer model at `url`.
fn hook(
    home: &Path,
    workspace: &Path,
    event: &str,
    input: &Value,
    url: &str,
) -> Result<Run, Box<dyn std::error::Error>> {
    let mut child = scriptorium(home)
        .args(["hook", "claude-code", event, "--workspace"])
        .arg(workspace)
        .env("SCRIPTORIUM_CONFIG", home.join("no-config.toml"))
        .env("SCRIPTORIUM_WRITER_MODEL", "openai-compatible/test-model")
        .env("SCRIPTORIUM_WRITER_BASE_URL", url)
        .env("SCRIPTORIUM_WRITER_API_KEY", KEY)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    child.stdin.take().ok_or("stdin")?.write_all(input.to_string().as_bytes())?;
    let out = child.wait_with_output()?;
    Ok(Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// A two-turn transcript (2024, so the unforced gate finds it an hour old) under `home`.
fn transcript(dir: &TempDir) -> Result<std::path::PathBuf, std::io::Error> {
    let lines =
        user(SESSION, "u1", None, "2024-05-01T09:00:00.000Z", "I prefer oolong tea in the afternoon, never after six.")
            + &assistant(SESSION, "a1", "u1", "2024-05-01T09:00:04.000Z", "Noted: oolong in the afternoon.")
            + &user(SESSION, "u2", Some("a1"), "2024-05-01T09:01:00.000Z", "My bike is a green Brompton, 2019 model.")
            + &assistant(SESSION, "a2", "u2", "2024-05-01T09:01:03.000Z", "A green 2019 Brompton, got it.");
    dir.write(&format!(".claude/projects/-home-owner-project/{SESSION}.jsonl"), lines.as_bytes())
}

fn hook_input(event: &str, transcript: &Path) -> Value {
    json!({
        "session_id": SESSION, "transcript_path": transcript, "cwd": "/home/owner/project",
        "hook_event_name": event, "permission_mode": "default", "stop_hook_active": false, "reason": "prompt_input_exit",
    })
}

/// Wait until `file` exists (a background write installs it), at most a minute.
fn wait_for(file: &Path) -> Result<String, Box<dyn std::error::Error>> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Ok(text) = std::fs::read_to_string(file) {
            return Ok(text);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!("{} never appeared", file.display()).into())
}

fn pending_turns(home: &Path, workspace: &Path) -> Result<Value, Box<dyn std::error::Error>> {
    let out = run(scriptorium(home).args(["sessions", "--json", "--workspace"]).arg(workspace))?;
    Ok(out.json()?["sessions"].clone())
}

#[test]
fn stop_returns_before_the_first_model_reply_while_its_background_write_installs() -> TestResult {
    let dir = TempDir::new()?;
    let workspace = dir.path().join("memory");
    let transcript = transcript(&dir)?;
    // Every reply waits 3 s, so a hook that waited for the write could not return before
    // the first reply. (The 1 s goal itself is a figure, not a timed assertion: a loaded
    // machine must not fail this test.)
    let script = topic_writer(
        "topics/preferences.md",
        "Preferences",
        vec![("oolong", "The owner prefers oolong tea in the afternoon.")],
    );
    let reply_delay = Duration::from_millis(3_000);
    let (url, seen) = serve(script, reply_delay)?;
    let started = Instant::now();
    let out = hook(dir.path(), &workspace, "stop", &hook_input("Stop", &transcript), &url)?;
    let took = started.elapsed();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "", "Stop adds nothing");
    assert!(took < reply_delay, "the stop hook took {took:?}: it waited for the model");
    assert!(out.stderr.contains("write started in the background"), "{}", out.stderr);
    assert!(!workspace.join("topics/preferences.md").exists(), "the write cannot have finished yet");
    let sessions = pending_turns(dir.path(), &workspace)?;
    assert_eq!(sessions[0]["id"], format!("claude-code:{SESSION}"));
    assert_eq!(sessions[0]["pending_turns"], 4, "imported before the hook returned: {sessions}");

    // While the pass waits for the model it holds the write lock: a prompt still gets its
    // recall at once (here from the source the pass archived before calling the model).
    let deadline = Instant::now() + Duration::from_secs(30);
    while seen.lock().map_err(|_| "log")?.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let prompt =
        json!({"session_id": SESSION, "hook_event_name": "UserPromptSubmit", "prompt": "which tea in the afternoon?"});
    let started = Instant::now();
    let recalled = hook(dir.path(), &workspace, "user-prompt-submit", &prompt, &url)?;
    let took = started.elapsed();
    assert_eq!(recalled.code, Some(0), "{}", recalled.stderr);
    assert!(took <= Duration::from_secs(1), "the prompt hook waited {took:?} for the write");
    assert!(!workspace.join("topics/preferences.md").exists(), "the write was still running");
    assert!(recalled.stdout.contains("I prefer oolong tea in the afternoon"), "{}", recalled.stdout);

    let topic = wait_for(&workspace.join("topics/preferences.md"))?;
    assert!(topic.contains("The owner prefers oolong tea in the afternoon."), "{topic}");
    // The install marks the batch after the topic; wait for the marking too.
    let deadline = Instant::now() + Duration::from_secs(30);
    while pending_turns(dir.path(), &workspace)?[0]["pending_turns"] != 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(pending_turns(dir.path(), &workspace)?[0]["pending_turns"], 0);
    let requests = seen.lock().map_err(|_| "log")?.clone();
    assert!(requests[0].to_string().contains("I prefer oolong tea"), "the model saw the imported turn");

    // The same transcript again: nothing new, so the unforced hook starts nothing.
    let again = hook(dir.path(), &workspace, "Stop", &hook_input("Stop", &transcript), &url)?;
    assert_eq!(again.code, Some(0));
    assert!(!again.stderr.contains("write started"), "{}", again.stderr);
    let log = std::fs::read_to_string(workspace.join(".scriptorium/hook.log"))?;
    assert!(!log.contains(KEY), "the key reached the hook log");
    Ok(())
}

/// `scriptorium mcp` given `requests` (after initialize); the replies by id.
fn mcp(home: &Path, workspace: &Path, requests: &[Value]) -> Result<Vec<Value>, Box<dyn std::error::Error>> {
    let mut child = scriptorium(home)
        .args(["mcp", "--workspace"])
        .arg(workspace)
        .env("SCRIPTORIUM_CONFIG", home.join("no-config.toml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut input = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}).to_string() + "\n";
    input += &(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string() + "\n");
    for request in requests {
        input += &(request.to_string() + "\n");
    }
    child.stdin.take().ok_or("stdin")?.write_all(input.as_bytes())?;
    let out = child.wait_with_output()?;
    Ok(String::from_utf8_lossy(&out.stdout).lines().filter_map(|line| serde_json::from_str(line).ok()).collect())
}

fn tool_text(reply: &Value) -> String {
    reply["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn end_to_end_a_transcript_becomes_cited_searchable_memory() -> TestResult {
    let dir = TempDir::new()?;
    let workspace = dir.path().join("memory");
    let transcript = transcript(&dir)?;
    let script = topic_writer(
        "topics/owner.md",
        "Owner",
        vec![
            ("oolong", "The owner prefers oolong tea in the afternoon."),
            ("Brompton", "The owner rides a green 2019 Brompton."),
        ],
    );
    let (url, _seen) = serve(script, Duration::ZERO)?;
    let out = hook(dir.path(), &workspace, "session-end", &hook_input("SessionEnd", &transcript), &url)?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let topic = wait_for(&workspace.join("topics/owner.md"))?;

    let found =
        run(scriptorium(dir.path()).args(["search", "Brompton bike", "--json", "--workspace"]).arg(&workspace))?;
    assert_eq!(found.code, Some(0), "{}", found.stderr);
    let found = found.json()?;
    let hits = found["results"].as_array().ok_or("results")?;
    assert!(hits.iter().any(|hit| hit.to_string().contains("green 2019 Brompton")), "{found}");

    // The block of the tea fact, and its footnote, through the agent's tool.
    let paragraph = topic.lines().find(|line| line.contains("oolong")).ok_or("no tea paragraph")?;
    let block =
        paragraph.rsplit_once(" ^").map(|(_, id)| id.trim().to_owned()).ok_or(format!("no block id: {topic}"))?;
    let replies = mcp(
        dir.path(),
        &workspace,
        &[json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "memory_get", "arguments": {"path": "topics/owner.md", "block_id": block}}})],
    )?;
    let got = tool_text(replies.iter().find(|r| r["id"] == 1).ok_or("no reply")?);
    assert!(got.contains("The owner prefers oolong tea in the afternoon."), "{got}");
    assert!(!got.contains("Brompton"), "only the block asked for: {got}");
    let footnote = got
        .lines()
        .find(|line| line.starts_with("[^") && line.contains("Sources:"))
        .ok_or(format!("no footnote: {got}"))?;
    // The link is the archive's path (relative to topics/) and the turn's frame anchor.
    let target = footnote.rsplit_once("](").map(|(_, t)| t.trim_end_matches(')')).ok_or("no link")?;
    let (file, anchor) = target.split_once('#').ok_or("no anchor")?;
    let archive = std::fs::read_to_string(workspace.join("topics").join(file))?;
    let at = archive.find(&format!("<a id=\"{anchor}\"></a>")).ok_or(format!("no {anchor} in {file}"))?;
    let frame = &archive[at..];
    let frame = frame[1..].find("<a id=\"source-").map_or(frame, |end| &frame[..=end]);
    assert!(frame.contains("I prefer oolong tea in the afternoon, never after six."), "{frame}");
    assert!(!frame.contains("Noted: oolong") && !frame.contains("Brompton"), "exactly one turn: {frame}");
    // The anchor is the frame's source id hashed (spec 01): this session's turn `u1`.
    let source_id = format!("openprogram/claude-code:{SESSION}/u1");
    let digest = sha2::Sha256::digest(source_id.as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    assert!(frame.contains(&format!("<!-- source-id:{source_id} -->")), "{frame}");
    assert_eq!(anchor, format!("source-{hex}"));
    assert!(frame.contains("<!-- speaker-id:owner%2Flocal -->"), "the person at the terminal is the owner: {frame}");
    Ok(())
}
