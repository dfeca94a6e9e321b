//! `write`, `sessions` and the writer block of `status` on a real session store beside
//! a real workspace: pending turns are counted, a due session reports that no writer
//! model is configured with its code and records it, and nothing due is no failure.

use scriptorium_writer_runtime::{Message, SqliteStore, Timestamp};
use serde_json::json;

use crate::{TempDir, TestResult, run, scriptorium};

/// `<tmp>/memory` with a `topics/` directory, and `<tmp>/sessions.sqlite3` holding
/// session `s1` with two short turns.
fn setup() -> Result<TempDir, Box<dyn std::error::Error>> {
    let dir = TempDir::new()?;
    std::fs::create_dir_all(dir.path().join("memory/topics"))?;
    let store = SqliteStore::open(&dir.path().join("sessions.sqlite3"))?;
    let mut first = Message::text("m1", "user", "I like green tea");
    first.timestamp = Timestamp::Unix(1_714_557_600.0);
    let mut second = Message::text("m2", "assistant", "Noted");
    second.predecessor = Some("m1".into());
    second.timestamp = Timestamp::Unix(1_714_557_601.0);
    store.append("s1", &[first, second], 1_714_557_601.0)?;
    Ok(dir)
}

#[test]
fn sessions_lists_pending_turns_and_tokens() -> TestResult {
    let dir = setup()?;
    let workspace = dir.path().join("memory");
    let out = run(scriptorium(dir.path()).args(["sessions", "--json", "--workspace"]).arg(&workspace))?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let listed = out.json()?;
    assert_eq!(listed["sessions"][0]["id"], "s1");
    assert_eq!(listed["sessions"][0]["pending_turns"], 2);
    assert!(listed["sessions"][0]["pending_tokens"].as_u64().is_some_and(|tokens| tokens >= 5));
    Ok(())
}

#[test]
fn a_forced_write_reports_the_missing_writer_model_and_status_shows_it() -> TestResult {
    let dir = setup()?;
    let workspace = dir.path().join("memory");
    let forced = run(scriptorium(dir.path()).args(["write", "--all", "--force", "--workspace"]).arg(&workspace))?;
    assert_eq!(forced.code, Some(1));
    let line = forced.stderr.lines().next().ok_or("no error line")?;
    assert!(line.starts_with("error[WRITER_PRECONDITION_FAILED]: session s1"), "{line}");
    let status = run(scriptorium(dir.path()).args(["status", "--json", "--workspace"]).arg(&workspace))?;
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    let writer = &status.json()?["writer"];
    assert_eq!(writer["last_outcome"], "failure");
    assert_eq!(writer["last_failure"]["reason_code"], "WRITER_PRECONDITION_FAILED");
    assert_eq!(writer["last_failure"]["retryable"], false);
    assert_eq!(writer["pending_turns"], 2, "nothing was marked");
    Ok(())
}

#[test]
fn nothing_due_is_no_failure_and_an_unknown_store_file_is_refused() -> TestResult {
    let dir = setup()?;
    let workspace = dir.path().join("memory");
    let other = dir.path().join("empty.sqlite3");
    let out = run(scriptorium(dir.path())
        .args(["write", "--all", "--workspace"])
        .arg(&workspace)
        .arg("--sessions")
        .arg(&other))?;
    assert_eq!((out.code, out.stdout.as_str()), (Some(0), "nothing to write\n"));
    assert!(!other.exists(), "a missing store is not created");
    let foreign = dir.path().join("foreign.sqlite3");
    std::fs::write(&foreign, b"not a database, not at all, only text".repeat(50))?;
    let out =
        run(scriptorium(dir.path()).args(["sessions", "--workspace"]).arg(&workspace).arg("--sessions").arg(&foreign))?;
    assert_eq!(out.code, Some(1));
    assert!(out.stderr.starts_with("error[WRITER_SESSION_STORE_CORRUPT]:"), "{}", out.stderr);
    let status = run(scriptorium(dir.path())
        .args(["status", "--json", "--workspace"])
        .arg(&workspace)
        .arg("--sessions")
        .arg(&foreign))?;
    assert_eq!(status.json()?["writer"]["pending_turns"], json!(null), "any error: null");
    Ok(())
}
