//! `Stop` and `SessionEnd`: bring the transcript's new lines into the session store, then
//! start the write hook (`scriptorium write`) detached and return at once. `Stop` ends
//! every assistant turn and runs the unforced hook (spec 02 §2.6: it writes once enough
//! is pending or the turns are an hour old); `SessionEnd` forces the write.

use std::ffi::OsString;
use std::path::Path;

use scriptorium_backend_api::layers::writer_runtime::SqliteStore;
use scriptorium_backend_api::layers::writer_runtime::import::{Format, import_paths};
// Aliased so the lines below stay as they are (the hook files change only in their `use` lines).
use scriptorium_backend_api::layers::transaction as scriptorium_transaction;

use super::event::Event;
use super::input::HookInput;
use super::log::Log;
use super::{ClaudeCodeArgs, detach};

/// Import, then start the write; every failure is logged.
pub(crate) fn run(
    event: Event,
    root: &Path,
    sessions: Option<&Path>,
    args: &ClaudeCodeArgs,
    input: &HookInput,
    log: &Log,
) {
    let name = event.claude_name();
    let Some(session) = import(root, sessions, input, log, event) else { return };
    if !root.join("topics").is_dir()
        && !root.join("sources").is_dir()
        && let Err(error) = scriptorium_transaction::Workspace::open(root)
    {
        return log.line(&format!("{name}: cannot create the workspace {}: {error}", root.display()));
    }
    // The workspace (and its runtime directory, where the log lives) may be new.
    let log = &Log::for_workspace(root);
    let program = match std::env::current_exe() {
        Ok(program) => program,
        Err(err) => return log.line(&format!("{name}: cannot find this program to start the write: {err}")),
    };
    let mut argv: Vec<OsString> = vec!["write".into(), "--workspace".into(), root.into()];
    if let Some(sessions) = sessions {
        argv.extend(["--sessions".into(), sessions.into()]);
    }
    argv.extend(["--session".into(), session.clone().into()]);
    if event == Event::SessionEnd {
        argv.push("--force".into());
    }
    if let Some(model) = &args.model.model {
        argv.extend(["--model".into(), model.into()]);
    }
    if let Some(url) = &args.model.base_url {
        argv.extend(["--base-url".into(), url.into()]);
    }
    match detach::spawn(&program, &argv, log.file()) {
        Ok(pid) => log.line(&format!("{name}: session {session}: write started in the background (pid {pid})")),
        Err(err) => log.line(&format!("{name}: session {session}: cannot start the write: {err}")),
    }
}

/// The session the importer files a Claude Code transcript under: `claude-code:<file stem>`.
fn session_of(transcript: &Path) -> Option<String> {
    transcript.file_stem().map(|stem| format!("claude-code:{}", stem.to_string_lossy()))
}

/// The transcript's new lines into the store (created when missing); the session to write.
/// An unforced `Stop` with nothing new has nothing to write; a `SessionEnd` writes what is owed.
fn import(root: &Path, sessions: Option<&Path>, input: &HookInput, log: &Log, event: Event) -> Option<String> {
    let name = event.claude_name();
    let Some(transcript) = &input.transcript_path else {
        log.line(&format!("{name}: no transcript_path in the hook input"));
        return None;
    };
    let store_path = crate::writer_cmd::sessions_path(root, sessions);
    if let Some(parent) = store_path.parent() {
        // The store's directory holds the workspace too; it is the first write of a new setup.
        let _ = std::fs::create_dir_all(parent);
    }
    let store = match SqliteStore::open(&store_path) {
        Ok(store) => store,
        Err(error) => {
            log.line(&format!("{name}: {}: {}: {}", store_path.display(), error.code().as_str(), error.message()));
            return None;
        }
    };
    let report = match import_paths(&store, Format::ClaudeCode, std::slice::from_ref(transcript)) {
        Ok(report) => report,
        Err(error) => {
            log.line(&format!("{name}: import failed: {}: {}", error.code().as_str(), error.message()));
            return None;
        }
    };
    for problem in &report.problems {
        log.line(&format!("{name}: skipped {problem}"));
    }
    let session = report.sessions.iter().next().cloned().or_else(|| session_of(transcript))?;
    if report.sessions.is_empty() && event == Event::Stop {
        return None;
    }
    log.line(&format!("{name}: session {session}: imported {} new turns", report.turns_added));
    Some(session)
}
