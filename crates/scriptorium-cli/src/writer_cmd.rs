//! `scriptorium write` and `scriptorium sessions`, and the writer block of `status`
//! (spec 02 §2.11): the session store beside the workspace, pending turns per session,
//! and the write hook with the configured writer model ([`crate::model`]). Without a
//! model, a due session reports that failure with its code (the runtime's classifier),
//! and the failure is recorded in writer status.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use scriptorium_backend_api::layers::writer_runtime::{
    AgentError, AgentErrorKind, Clock, DEFAULT_TRIGGER_TOKENS, PassError, SESSIONS_FILE, STATUS_FILE, SessionStore,
    SqliteStore, SystemClock, WriteFailure, all_sessions, classify, first_batch, marked_ids, pending_turns,
    read_status_file, record_failure, records, session_pending, unforced_gate, unwritten,
};

use crate::Outcome;
use crate::cli::{SessionsArgs, WriteArgs};
use crate::error::CliError;
use crate::output::{print, print_json};
use crate::workspace::Workspace;

/// The session store file: `--sessions`, else `sessions.sqlite3` in the state directory
/// that holds the workspace (its parent).
pub(crate) fn sessions_path(root: &Path, flag: Option<&Path>) -> PathBuf {
    match flag {
        Some(path) => crate::workspace::expand_home(path),
        None => root.parent().unwrap_or(root).join(SESSIONS_FILE),
    }
}

/// The workspace id, read only: without a valid id file nothing counts as marked.
pub(crate) fn workspace_id(root: &Path) -> Option<String> {
    scriptorium_backend_api::inspect::workspace_id(root)
}

/// Open the store if its file exists; `Ok(None)` when there is none yet.
fn open_store(path: &Path) -> Result<Option<SqliteStore>, scriptorium_backend_api::layers::writer_runtime::Error> {
    if !path.exists() {
        return Ok(None);
    }
    SqliteStore::open(path).map(Some)
}

/// A layer failure as the one stderr line, reported like a rejected transaction.
fn report_layer_error(code: &str, message: &str) -> Outcome {
    eprintln!("error[{code}]: {message}");
    Outcome::Findings
}

fn pass_error_line(error: &PassError) -> (String, String) {
    match error {
        PassError::Store(error) => (error.code().as_str().to_owned(), error.message().to_owned()),
        other => {
            let failure = classify(other);
            (failure.reason_code.as_str().to_owned(), failure.reason)
        }
    }
}

/// Run `sessions`: every session with its pending turns and tokens.
pub(crate) fn sessions(args: &SessionsArgs) -> Result<Outcome, CliError> {
    let workspace = Workspace::locate(args.workspace.as_deref())?;
    let path = sessions_path(&workspace.root, args.sessions.as_deref());
    let store = match open_store(&path) {
        Ok(store) => store,
        Err(error) => {
            return Ok(report_layer_error(error.code().as_str(), &format!("{}: {}", path.display(), error.message())));
        }
    };
    let id = workspace_id(&workspace.root);
    let mut rows = Vec::new();
    if let Some(store) = &store {
        let listed = match all_sessions(store) {
            Ok(listed) => listed,
            Err(error) => {
                let (code, message) = pass_error_line(&error);
                return Ok(report_layer_error(&code, &message));
            }
        };
        for session in listed {
            match session_pending(store, &session.id, id.as_deref(), 0) {
                Ok((turns, tokens)) => rows.push((session, Some((turns, tokens)))),
                Err(_) => rows.push((session, None)),
            }
        }
    }
    if args.json {
        let list: Vec<Value> = rows
            .iter()
            .map(|(session, pending)| {
                json!({
                    "id": session.id, "updated_at": session.updated_at, "archived": session.archived,
                    "pending_turns": pending.map(|p| p.0), "pending_tokens": pending.map(|p| p.1),
                })
            })
            .collect();
        print_json(&json!({"sessions_file": path.display().to_string(), "sessions": list}))?;
        return Ok(Outcome::Clean);
    }
    let mut out = format!("session store: {}\n", path.display());
    if rows.is_empty() {
        out.push_str("no sessions\n");
    }
    for (session, pending) in &rows {
        let pending =
            pending.map_or_else(|| "pending unknown".to_owned(), |(t, k)| format!("{t} pending turns, {k} tokens"));
        let archived = if session.archived { " (archived)" } else { "" };
        out.push_str(&format!("{}{archived}: {pending}\n", session.id));
    }
    print(&out)?;
    Ok(Outcome::Clean)
}

/// Whether the head branch of `session` is due for an unforced write now.
fn unforced_due(store: &SqliteStore, session: &str, id: Option<&str>, now: f64) -> Result<bool, PassError> {
    let rows = store.get_branch(session, None)?;
    let all = records(session, &rows, 0)?;
    let marked = id.map(|id| marked_ids(&rows, id)).unwrap_or_default();
    let pending = unwritten(&all, &marked);
    Ok(!pending.is_empty() && unforced_gate(first_batch(pending, DEFAULT_TRIGGER_TOKENS), DEFAULT_TRIGGER_TOKENS, now))
}

/// Run `write`: the write hook for one session or all of them.
pub(crate) fn write(args: &WriteArgs) -> Result<Outcome, CliError> {
    let workspace = Workspace::locate(args.workspace.as_deref())?;
    let path = sessions_path(&workspace.root, args.sessions.as_deref());
    let store = match open_store(&path) {
        Ok(store) => store,
        Err(error) => {
            return Ok(report_layer_error(error.code().as_str(), &format!("{}: {}", path.display(), error.message())));
        }
    };
    let id = workspace_id(&workspace.root);
    let now = SystemClock.now();
    let mut due = Vec::new();
    if let Some(store) = &store {
        let targets: Vec<String> = match &args.session {
            Some(session) => vec![session.clone()],
            None => match all_sessions(store) {
                Ok(listed) => listed.into_iter().map(|s| s.id).collect(),
                Err(error) => {
                    let (code, message) = pass_error_line(&error);
                    return Ok(report_layer_error(&code, &message));
                }
            },
        };
        for session in targets {
            let owed = if args.force {
                session_pending(store, &session, id.as_deref(), 0).map(|(turns, _)| turns > 0)
            } else {
                unforced_due(store, &session, id.as_deref(), now)
            };
            match owed {
                Ok(true) => due.push(session),
                Ok(false) => {}
                Err(error) => {
                    let (code, message) = pass_error_line(&error);
                    return Ok(report_layer_error(&code, &format!("session {session}: {message}")));
                }
            }
        }
    }
    if due.is_empty() {
        if args.json {
            print_json(&json!({"written": [], "failures": []}))?;
        } else {
            print("nothing to write\n")?;
        }
        return Ok(Outcome::Clean);
    }
    let writer = match crate::model::writer(&args.model) {
        Ok(writer) => writer,
        Err(no_writer) => {
            // The spec's "writer cannot be built" row, classified by the runtime.
            let failure = classify(&PassError::Agent(AgentError::new(AgentErrorKind::Precondition, no_writer.message)));
            if let Ok(opened) = scriptorium_backend_api::layers::transaction::Workspace::open(&workspace.root) {
                // Best effort, as every status write.
                let _ = record_failure(&opened, now, failure.reason_code, failure.retryable);
            }
            let failures: Vec<(String, WriteFailure)> =
                due.into_iter().map(|session| (session, failure.clone())).collect();
            return report_writes(args.json, &[], &failures);
        }
    };
    let runtime = match crate::model::runtime(&workspace.root, path, Arc::new(writer)) {
        Ok(runtime) => runtime,
        Err(error) => return Ok(report_layer_error(&error.code, &error.message)),
    };
    let mut written = Vec::new();
    let mut failures = Vec::new();
    for session in due {
        match runtime.hook(&session, None, args.force) {
            None => written.push(session),
            Some(failure) => failures.push((session, failure)),
        }
    }
    report_writes(args.json, &written, &failures)
}

/// Print what `write` did: the sessions written, then one `error[CODE]` line per failure.
fn report_writes(json: bool, written: &[String], failures: &[(String, WriteFailure)]) -> Result<Outcome, CliError> {
    if json {
        let list: Vec<Value> = failures
            .iter()
            .map(|(session, failure)| {
                json!({"session": session, "reason_code": failure.reason_code.as_str(), "retryable": failure.retryable})
            })
            .collect();
        print_json(&json!({"written": written, "failures": list}))?;
    } else {
        let mut out = String::new();
        for session in written {
            out.push_str(&format!("session {session}: written\n"));
        }
        print(&out)?;
    }
    for (session, failure) in failures {
        eprintln!("error[{}]: session {session}: {}", failure.reason_code, failure.reason);
    }
    Ok(if failures.is_empty() { Outcome::Clean } else { Outcome::Findings })
}

/// The `writer` block of `status` (spec 02 §2.11): the persisted status and
/// `pending_turns` (null on any error).
pub(crate) fn status_block(root: &Path, runtime_dir: &str, sessions: Option<&Path>) -> Value {
    let status = read_status_file(&root.join(runtime_dir).join(STATUS_FILE));
    let path = sessions_path(root, sessions);
    let pending = match open_store(&path) {
        Ok(None) => Some(0),
        Ok(Some(store)) => pending_turns(&store, workspace_id(root).as_deref(), 0).ok(),
        Err(_) => None,
    };
    let mut block = status.to_json();
    if let Value::Object(map) = &mut block {
        map.insert("pending_turns".to_owned(), json!(pending));
    }
    block
}

/// The writer block as status lines.
pub(crate) fn describe_block(block: &Value) -> String {
    let outcome = block["last_outcome"].as_str().unwrap_or("none");
    let mut out = format!("writer: last outcome {outcome}");
    if let Some(at) = block["last_success_at"].as_str() {
        out.push_str(&format!(", last success {at}"));
    }
    if let Some(failure) = block["last_failure"].as_object() {
        out.push_str(&format!(
            ", last failure {} at {}{}",
            failure.get("reason_code").and_then(Value::as_str).unwrap_or("?"),
            failure.get("at").and_then(Value::as_str).unwrap_or("?"),
            if failure.get("retryable").and_then(Value::as_bool) == Some(true) { " (retryable)" } else { "" }
        ));
    }
    match block["pending_turns"].as_u64() {
        Some(turns) => out.push_str(&format!("; {turns} pending turns\n")),
        None => out.push_str("; pending turns unknown\n"),
    }
    out
}
