//! The writer verbs with and without a configured model: each says what is missing with
//! its code, and `write` drives a whole pass against a scripted Chat Completions server
//! on loopback (it stands in for the remote model only), the key never reaching the
//! trajectory.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use scriptorium_writer_runtime::{Message, SqliteStore, Timestamp};
use serde_json::{Value, json};

use crate::{TempDir, TestResult, run, scriptorium};

const KEY: &str = "sk-cli-test-SECRET-0123456789";

fn setup() -> Result<TempDir, Box<dyn std::error::Error>> {
    let dir = TempDir::new()?;
    std::fs::create_dir_all(dir.path().join("memory/topics"))?;
    let store = SqliteStore::open(&dir.path().join("sessions.sqlite3"))?;
    let mut first = Message::text("m1", "user", "I like green tea");
    first.timestamp = Timestamp::Unix(1_714_557_600.0);
    store.append("s1", &[first], 1_714_557_600.0)?;
    Ok(dir)
}

#[test]
fn each_writer_verb_names_what_is_missing() -> TestResult {
    let dir = setup()?;
    let workspace = dir.path().join("memory");
    for verb in [vec!["sleep"], vec!["backfill"], vec!["promote", "telegram/g/m1"]] {
        let out = run(scriptorium(dir.path()).args(&verb).arg("--workspace").arg(&workspace))?;
        assert_eq!(out.code, Some(1), "{verb:?}: {}", out.stderr);
        assert!(out.stderr.starts_with("error[WRITER_PRECONDITION_FAILED]"), "{verb:?}: {}", out.stderr);
    }
    let out = run(scriptorium(dir.path()).args(["sleep", "--model", "nope", "--workspace"]).arg(&workspace))?;
    assert!(out.stderr.starts_with("error[WRITER_MODEL_SPEC_INVALID]"), "{}", out.stderr);
    let out = run(scriptorium(dir.path())
        .args(["backfill", "--model", "openai/gpt-4.1-mini", "--workspace"])
        .arg(&workspace))?;
    assert!(
        out.stderr.starts_with("error[WRITER_MODEL_KEY_MISSING]") && out.stderr.contains("OPENAI_API_KEY"),
        "{}",
        out.stderr
    );
    Ok(())
}

/// Each request the server saw: its authorization header and JSON body.
type Seen = Arc<Mutex<Vec<(String, Value)>>>;

/// A loopback server answering Chat Completions requests from `replies`, in order,
/// recording each request's authorization header and body.
fn serve(replies: Vec<Value>) -> Result<(String, Seen), std::io::Error> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}/v1", listener.local_addr()?);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for (reply, stream) in replies.into_iter().zip(listener.incoming()) {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().expect("clone the stream"));
            let (mut length, mut auth, mut line) = (0usize, String::new(), String::new());
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                let lower = line.to_ascii_lowercase();
                if let Some(value) = lower.strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
                if lower.starts_with("authorization:") {
                    auth = line["authorization:".len()..].trim().to_owned();
                }
                line.clear();
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            log.lock().expect("log").push((auth, serde_json::from_slice(&body).unwrap_or(Value::Null)));
            let text = reply.to_string();
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                text.len()
            );
            let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(text.as_bytes()));
        }
    });
    Ok((url, seen))
}

fn completion(message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-cli", "object": "chat.completion", "created": 1_764_633_600, "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
    })
}

#[test]
fn write_runs_a_whole_pass_against_the_configured_model() -> TestResult {
    let dir = setup()?;
    let workspace = dir.path().join("memory");
    let topic = "# Preferences\n\nThe owner likes green tea.[^e1]\n\n[^e1]: Time: `2024-05-01`; Sources: [tea](openprogram/s1/m1)\n";
    let call = json!({"file_path": "topics/preferences.md", "content": topic}).to_string();
    let (url, seen) = serve(vec![
        completion(
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "Write", "arguments": call}}]}),
            "tool_calls",
        ),
        completion(json!({"role": "assistant", "content": "Recorded."}), "stop"),
        completion(json!({"role": "assistant", "content": "Nothing to reorganize."}), "stop"),
    ])?;
    let out = run(scriptorium(dir.path())
        .env("SCRIPTORIUM_WRITER_API_KEY", KEY)
        .args([
            "write",
            "--all",
            "--force",
            "--json",
            "--model",
            "openai-compatible/test-model",
            "--base-url",
            &url,
            "--workspace",
        ])
        .arg(&workspace))?;
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.json()?["written"], json!(["s1"]));
    let written = std::fs::read_to_string(workspace.join("topics/preferences.md"))?;
    assert!(written.contains("The owner likes green tea."), "{written}");

    let sessions = run(scriptorium(dir.path()).args(["sessions", "--json", "--workspace"]).arg(&workspace))?;
    assert_eq!(sessions.json()?["sessions"][0]["pending_turns"], 0, "the turn is marked written");
    let requests = seen.lock().map_err(|_| "log")?.clone();
    assert_eq!(requests.len(), 3);
    assert!(requests.iter().all(|(auth, _)| auth == &format!("Bearer {KEY}")));
    assert_eq!(requests[0].1["model"], "test-model");
    let history = std::fs::read_to_string(workspace.join(".scriptorium/agent-history.jsonl"))?;
    assert_eq!(history.lines().count(), 2);
    assert!(!history.contains(KEY), "the key reached agent-history.jsonl");
    Ok(())
}
