//! The failure-mode rows of spec 02 §9 that belong to the writer runtime, each on a real
//! workspace: what is returned, what is archived, installed and marked, and the status.

use std::time::Duration;

use scriptorium_writer_runtime::{
    AgentError, AgentErrorKind, MemoryWriteFailureCode as Code, Message, RuntimeConfig, SessionStore, Timestamp,
    read_status,
};

use crate::support::{Fixture, Script, T0, TestResult, chain, config, owner_turn};

/// Every file under `memory/` except the runtime directory and Git history.
fn memory_files(fx: &Fixture) -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &std::path::Path, prefix: &str, out: &mut Vec<(String, Vec<u8>)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).expect("list").map(|e| e.expect("entry")).collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
            if name == ".scriptorium" || name == ".git" {
                continue;
            }
            if entry.path().is_dir() {
                walk(&entry.path(), &format!("{name}/"), out);
            } else {
                out.push((name, std::fs::read(entry.path()).expect("read")));
            }
        }
    }
    let mut out = Vec::new();
    walk(&fx.memory(), "", &mut out);
    out
}

#[test]
fn a_lock_held_by_another_process_is_a_retryable_concurrent_update_and_changes_nothing() -> TestResult {
    let fx = Fixture::new("busy", Script::Facts, config(8000))?;
    fx.store.append("s1", &chain("a", None, 3, 2, T0), T0)?;
    let before = memory_files(&fx);
    let holder = crate::crash::hold_lock(&fx.memory(), Duration::from_secs(4))?;
    let failure = fx.runtime.hook("s1", None, true).ok_or("the write succeeded")?;
    drop(holder);
    assert_eq!((failure.reason_code, failure.retryable), (Code::ConcurrentUpdate, true));
    assert_eq!(fx.writer.writes(), 0);
    assert_eq!(memory_files(&fx), before, "nothing archived");
    assert!(fx.marked("s1")?.is_empty());
    let status = read_status(fx.runtime.workspace());
    let last = status.last_failure.ok_or("no failure recorded")?;
    assert_eq!(
        (status.last_outcome, last.reason_code, last.retryable),
        (Some("failure"), Code::ConcurrentUpdate, true)
    );
    // Once the holder is gone, the same write goes through, archiving each turn once.
    assert_eq!(fx.runtime.hook("s1", None, true), None);
    assert_eq!(fx.marked("s1")?.len(), 3);
    let archive = std::fs::read_to_string(fx.memory().join("sources/openprogram/_v2/s1.md"))?;
    assert_eq!(archive.matches("source-id:openprogram/s1/a0").count(), 1);
    Ok(())
}

#[test]
fn a_writer_error_installs_nothing_marks_nothing_and_records_its_code() -> TestResult {
    let cases = [
        (
            AgentError { http_status: Some(429), ..AgentError::new(AgentErrorKind::Execution, "slow down") },
            Code::ModelRateLimit,
            true,
        ),
        (AgentError { http_status: Some(503), ..AgentError::default() }, Code::ModelProviderInternal, true),
        (AgentError { http_status: Some(401), ..AgentError::default() }, Code::ModelAuthentication, false),
        (AgentError { transport: true, ..AgentError::default() }, Code::ModelTransport, true),
        (
            AgentError { http_status: Some(429), quota_exhausted: true, ..AgentError::default() },
            Code::ModelRateLimit,
            false,
        ),
        (AgentError::new(AgentErrorKind::Precondition, "no model configured"), Code::WriterPreconditionFailed, false),
        (AgentError::new(AgentErrorKind::Execution, "stopped"), Code::ModelFailureUnknown, false),
        (AgentError { commit_rejected: true, ..AgentError::default() }, Code::CommitRejected, false),
    ];
    for (error, code, retryable) in cases {
        let fx = Fixture::new("agent-error", Script::Fail(error), config(8000))?;
        fx.store.append("s1", &chain("a", None, 2, 2, T0), T0)?;
        let failure = fx.runtime.hook("s1", None, true).ok_or("the write succeeded")?;
        assert_eq!((failure.reason_code, failure.retryable), (code, retryable));
        assert!(!fx.memory().join("topics/facts.md").exists(), "nothing installed");
        assert!(fx.marked("s1")?.is_empty(), "nothing marked");
        assert_eq!(fx.runtime.workspace().runtime_state().written_batch, None);
        let last = read_status(fx.runtime.workspace()).last_failure.ok_or("no failure recorded")?;
        assert_eq!((last.reason_code, last.retryable), (code, retryable));
        let bytes = std::fs::read_to_string(fx.memory().join(".scriptorium/writer-status.json"))?;
        assert!(!bytes.contains("slow down"), "the free-text reason is never persisted");
        // The batch is offered again on the next per-turn call (here idle an hour).
        *fx.writer.script.lock().map_err(|_| "script")? = Script::Facts;
        fx.clock.set(T0 + 7200.0);
        assert_eq!(fx.runtime.hook("s1", None, false), None, "{code:?}");
        assert_eq!(fx.marked("s1")?, ["a0", "a1"], "{code:?}");
        assert_eq!(fx.fact_count("a0"), 1);
    }
    Ok(())
}

#[test]
fn a_writer_that_cannot_be_built_fails_after_archiving_marks_nothing_and_is_offered_again() -> TestResult {
    let cases = [
        (AgentErrorKind::Precondition, Code::WriterPreconditionFailed),
        (AgentErrorKind::Other, Code::WriterFailureUnknown),
    ];
    for (kind, code) in cases {
        let fx = Fixture::new("unbuilt", Script::Fail(AgentError::new(kind, "no model configured")), config(8000))?;
        fx.store.append("s1", &chain("a", None, 2, 2, T0), T0)?;
        fx.clock.set(T0 + 7200.0);
        let failure = fx.runtime.hook("s1", None, false).ok_or("the write succeeded")?;
        assert_eq!((failure.reason_code, failure.retryable), (code, false));
        // Raised inside the pass after archiving: the records are in the archive, nothing
        // is installed in the topics, nothing is marked.
        let archive = std::fs::read_to_string(fx.memory().join("sources/openprogram/_v2/s1.md"))?;
        assert_eq!(archive.matches("source-id:openprogram/s1/a").count(), 2);
        assert!(!fx.memory().join("topics/facts.md").exists());
        assert!(fx.marked("s1")?.is_empty());
        let last = read_status(fx.runtime.workspace()).last_failure.ok_or("no failure recorded")?;
        assert_eq!((last.reason_code, last.retryable), (code, false));
        // Per-turn: the next turn offers the batch again, archived once.
        *fx.writer.script.lock().map_err(|_| "script")? = Script::Facts;
        fx.store.append("s1", &chain("b", Some("a1"), 1, 2, T0 + 10.0), T0 + 10.0)?;
        assert_eq!(fx.runtime.hook("s1", None, false), None);
        assert_eq!(fx.marked("s1")?, ["a0", "a1", "b0"]);
        let archive = std::fs::read_to_string(fx.memory().join("sources/openprogram/_v2/s1.md"))?;
        assert_eq!(archive.matches("source-id:openprogram/s1/a0").count(), 1);
    }
    Ok(())
}

#[test]
fn an_organize_failure_after_the_install_keeps_the_batch_installed_and_marked_and_is_reported() -> TestResult {
    let fx = Fixture::new("organize-fails", Script::Facts, config(8000))?;
    let error = AgentError { http_status: Some(503), ..AgentError::new(AgentErrorKind::Execution, "down") };
    *fx.writer.organize_error.lock().map_err(|_| "organize error")? = Some(error);
    fx.store.append("s1", &chain("a", None, 3, 2, T0), T0)?;
    // The first write of a fresh workspace is followed by a global organize, which fails.
    let failure = fx.runtime.hook("s1", None, true).ok_or("the organize failure was not reported")?;
    assert_eq!((failure.reason_code, failure.retryable), (Code::ModelProviderInternal, true));
    assert_eq!(fx.writer.organize_runs.load(std::sync::atomic::Ordering::SeqCst), 1);
    for id in ["a0", "a1", "a2"] {
        assert_eq!(fx.fact_count(id), 1, "installed: {id}");
    }
    assert_eq!(fx.marked("s1")?, ["a0", "a1", "a2"], "marked");
    let state = fx.runtime.workspace().runtime_state();
    assert_eq!((state.written_batch, state.local_batches, state.write_commits_since_global), (None, 1, 1));
    let status = read_status(fx.runtime.workspace());
    assert_eq!((status.last_outcome, status.last_success_at), (Some("failure"), None), "success is not recorded");
    assert_eq!(status.last_failure.map(|f| f.reason_code), Some(Code::ModelProviderInternal));
    // Nothing is re-offered: the next call owes nothing and calls no model.
    assert_eq!(fx.runtime.hook("s1", None, true), None);
    assert_eq!(fx.writer.writes(), 1);
    // The next pass with a new turn continues, and its organize runs again.
    *fx.writer.organize_error.lock().map_err(|_| "organize error")? = None;
    fx.store.append("s1", &chain("b", Some("a2"), 1, 2, T0 + 10.0), T0 + 10.0)?;
    assert_eq!(fx.runtime.hook("s1", None, true), None);
    assert_eq!((fx.writer.writes(), fx.fact_count("a0"), fx.fact_count("b0")), (2, 1, 1));
    assert_eq!(fx.writer.organize_runs.load(std::sync::atomic::Ordering::SeqCst), 2);
    let state = fx.runtime.workspace().runtime_state();
    assert_eq!((state.write_commits_since_global, state.last_global_at.is_some()), (0, true));
    Ok(())
}

#[test]
fn a_forced_write_of_given_messages_the_store_lacks_is_session_nodes_unavailable() -> TestResult {
    let fx = Fixture::new("no-nodes", Script::Facts, config(8000))?;
    let rows = chain("a", None, 2, 2, T0);
    let failure = fx.runtime.hook("gone", Some(&rows), true).ok_or("no failure")?;
    assert_eq!((failure.reason_code, failure.retryable), (Code::SessionNodesUnavailable, false));
    // The batch itself was written once; nothing could be marked in the store.
    assert_eq!((fx.writer.writes(), fx.fact_count("a0"), fx.fact_count("a1")), (1, 1, 1));
    assert!(fx.store.get_session("gone")?.is_none());
    Ok(())
}

#[test]
fn a_status_file_that_cannot_be_written_never_changes_a_writes_result() -> TestResult {
    let fx = Fixture::new("status-fails", Script::Facts, config(8000))?;
    fx.store.append("s1", &chain("a", None, 2, 2, T0), T0)?;
    // A directory where the status file goes: every status write fails.
    let status = fx.memory().join(".scriptorium/writer-status.json");
    std::fs::create_dir_all(status.join("blocker"))?;
    assert_eq!(fx.runtime.hook("s1", None, true), None);
    assert_eq!(fx.marked("s1")?, ["a0", "a1"]);
    *fx.writer.script.lock().map_err(|_| "script")? =
        Script::Fail(AgentError { http_status: Some(401), ..AgentError::default() });
    fx.store.append("s1", &chain("b", Some("a1"), 1, 2, T0 + 10.0), T0 + 10.0)?;
    let failure = fx.runtime.hook("s1", None, true).ok_or("no failure")?;
    assert_eq!((failure.reason_code, failure.retryable), (Code::ModelAuthentication, false));
    assert!(status.is_dir(), "the blocker is untouched");
    Ok(())
}

#[test]
fn an_unreadable_runtime_json_reads_as_empty_state_and_counting_starts_again() -> TestResult {
    let fx = Fixture::new("runtime-json", Script::Facts, config(8000))?;
    fx.store.append("s1", &chain("a", None, 2, 2, T0), T0)?;
    assert_eq!(fx.runtime.hook("s1", None, true), None);
    let path = fx.memory().join(".scriptorium/runtime.json");
    std::fs::write(&path, b"{ not json")?;
    assert_eq!(fx.runtime.workspace().runtime_state().local_batches, 0, "read as empty state");
    fx.store.append("s1", &chain("b", Some("a1"), 1, 2, T0 + 10.0), T0 + 10.0)?;
    assert_eq!(fx.runtime.hook("s1", None, true), None);
    assert_eq!(fx.marked("s1")?, ["a0", "a1", "b0"]);
    assert_eq!((fx.fact_count("a0"), fx.fact_count("b0")), (1, 1), "nothing written twice");
    assert_eq!(fx.runtime.workspace().runtime_state().local_batches, 1, "the counters were reset");
    Ok(())
}

#[test]
fn a_forced_write_with_nothing_accepted_is_writer_no_progress_and_unforced_is_silent() -> TestResult {
    let fx = Fixture::new("no-progress", Script::Nothing, config(8000))?;
    fx.store.append("s1", &chain("a", None, 2, 2, T0), T0)?;
    fx.clock.set(T0 + 7200.0);
    assert_eq!(fx.runtime.hook("s1", None, false), None, "unforced: silent");
    assert_eq!(fx.writer.writes(), 1);
    let failure = fx.runtime.hook("s1", None, true).ok_or("no failure")?;
    assert_eq!((failure.reason_code, failure.retryable), (Code::WriterNoProgress, false));
    assert!(fx.marked("s1")?.is_empty());
    Ok(())
}

#[test]
fn a_missing_session_id_fails_before_anything_is_read() -> TestResult {
    let fx = Fixture::new("no-session", Script::Facts, RuntimeConfig::default())?;
    let failure = fx.runtime.hook("", None, true).ok_or("no failure")?;
    assert_eq!((failure.reason_code, failure.retryable), (Code::MissingSessionId, false));
    Ok(())
}

#[test]
fn a_node_without_id_or_a_stamped_node_without_authority_is_a_precondition_failure() -> TestResult {
    let fx = Fixture::new("precondition", Script::Facts, config(8000))?;
    let mut no_id = owner_turn("", None, "user", "hello", T0);
    no_id.id = String::new();
    let mut stamped = Message::text("m1", "user", "hello");
    stamped.timestamp = Timestamp::Unix(T0);
    stamped.metadata.insert("authority_schema".into(), serde_json::json!(1));
    for rows in [vec![no_id], vec![stamped]] {
        for force in [false, true] {
            let failure = fx.runtime.hook("s1", Some(&rows), force).ok_or("no failure")?;
            assert_eq!((failure.reason_code, failure.retryable), (Code::WriterPreconditionFailed, false));
        }
    }
    assert_eq!(fx.writer.writes(), 0);
    // An unstamped node without authority is legacy history and is written.
    let legacy = vec![Message { timestamp: Timestamp::Unix(T0), ..Message::text("m2", "user", "legacy words") }];
    fx.store.append("s2", &legacy, T0)?;
    assert_eq!(fx.runtime.hook("s2", None, true), None);
    assert_eq!(fx.marked("s2")?, ["m2"]);
    assert!(fx.store.get_branch("s2", None)?.len() == 1);
    Ok(())
}
