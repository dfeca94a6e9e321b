//! `scriptorium watch`: memory for agents without hooks. A long-running process that
//! watches Claude Code's transcript directories (the `notify` crate), imports each file as
//! it grows, runs the per-turn write hook for the sessions that gained turns, and keeps the
//! writer runtime's idle watcher (forced writes of sessions idle 30 min) and nightly
//! reorganize running. It logs to stderr; SIGTERM or SIGINT stops it within 2 s.
//! docs/watch.md has a systemd user unit.

mod files;
mod writes;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use clap::Args;
use notify::{RecursiveMode, Watcher as _};
use scriptorium_backend_api::layers::writer_runtime::import::{Format, import_paths};
use scriptorium_backend_api::layers::writer_runtime::{
    Background, BackgroundConfig, IngestCallback, IngestEvent, SqliteStore,
};

use self::writes::Writes;
use crate::Outcome;
use crate::error::{CliError, CliErrorCode};

/// Arguments of `watch`.
#[derive(Debug, Args)]
pub(crate) struct WatchArgs {
    /// The workspace root (default as for `check`; created on the first write).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// The session store (default: `sessions.sqlite3` beside the workspace directory).
    #[arg(long, value_name = "FILE")]
    pub(crate) sessions: Option<PathBuf>,
    /// A directory of Claude Code transcripts to watch (repeatable; default:
    /// `$CLAUDE_CONFIG_DIR/projects` and `~/.claude/projects`, those that exist).
    #[arg(long = "transcripts", value_name = "DIR")]
    pub(crate) transcripts: Vec<PathBuf>,
    /// Seconds between the idle watcher's scans (spec 02 §2.10: 300).
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    pub(crate) idle_poll: u64,
    /// The writer model (without one, `watch` imports only).
    #[command(flatten)]
    pub(crate) model: crate::model::ModelArgs,
}

/// How long a burst of file events may settle before the files are imported.
const SETTLE: Duration = Duration::from_millis(150);
/// Every so often everything is re-imported (cheap: unchanged files are skipped), in case
/// the platform dropped an event (an inotify queue overflow).
const RESCAN: Duration = Duration::from_secs(60);
/// How often the loop looks at the stop flag.
const TICK: Duration = Duration::from_millis(100);
/// How long stopping waits for the background threads before the process just exits.
const STOP_GRACE: Duration = Duration::from_millis(1_200);

fn failed(message: impl Into<String>) -> CliError {
    CliError::new(CliErrorCode::WatchFailed, message)
}

/// Import `paths` and queue the write hook for the sessions that gained turns.
fn import(store: &SqliteStore, paths: &[PathBuf], writes: Option<&Writes>) {
    match import_paths(store, Format::ClaudeCode, paths) {
        Ok(report) => {
            for problem in &report.problems {
                eprintln!("scriptorium watch: skipped {problem}");
            }
            if report.nodes_added > 0 || report.turns_extended > 0 {
                eprintln!(
                    "scriptorium watch: imported {} turns ({} nodes, {} replies extended) from {} files into {} sessions",
                    report.turns_added,
                    report.nodes_added,
                    report.turns_extended,
                    report.files_seen - report.files_unchanged,
                    report.sessions.len()
                );
                if let Some(writes) = writes {
                    writes.queue(&report.sessions);
                }
            }
        }
        Err(error) => {
            eprintln!("scriptorium watch: import failed: error[{}]: {}", error.code().as_str(), error.message())
        }
    }
}

/// The idle watcher's events, as log lines.
fn log_ingest() -> IngestCallback {
    Arc::new(|event: &IngestEvent| match event {
        IngestEvent::Started { session, messages } => {
            eprintln!("scriptorium watch: session {session} idle: forced write over {messages} messages");
        }
        IngestEvent::Ended { session, ok, reason, .. } => {
            let outcome = if *ok { "done".to_owned() } else { format!("failed: {reason}") };
            eprintln!("scriptorium watch: session {session}: forced write {outcome}");
        }
    })
}

/// The writer side: the per-turn worker and the idle/nightly threads, when a model is configured.
fn start_writer(root: &Path, sessions: &Path, args: &WatchArgs) -> Result<Option<(Writes, Background)>, CliError> {
    let writer = match crate::model::writer(&args.model) {
        Ok(writer) => writer,
        Err(no_writer) => {
            eprintln!("scriptorium watch: {} ({}); importing only", no_writer.message, no_writer.code);
            return Ok(None);
        }
    };
    let runtime = crate::model::runtime(root, sessions.to_path_buf(), Arc::new(writer))
        .map_err(|error| failed(format!("{}: {}", error.code, error.message)))?;
    let runtime = Arc::new(runtime);
    let writes =
        Writes::start(Arc::clone(&runtime)).map_err(|err| failed(format!("cannot start the writer: {err}")))?;
    let config =
        BackgroundConfig { poll_interval: Duration::from_secs(args.idle_poll.max(1)), ..BackgroundConfig::default() };
    let background = Background::start(runtime, config, log_ingest())
        .map_err(|err| failed(format!("cannot start the idle watcher: {err}")))?;
    Ok(Some((writes, background)))
}

/// Run `watch` until SIGTERM or SIGINT.
pub(crate) fn run(args: &WatchArgs) -> Result<Outcome, CliError> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop))
            .map_err(|err| CliError::new(CliErrorCode::Internal, format!("cannot handle signal {signal}: {err}")))?;
    }
    let (root, _) = crate::workspace::resolve(args.workspace.as_deref())?;
    let sessions = crate::writer_cmd::sessions_path(&root, args.sessions.as_deref());
    let dirs: Vec<PathBuf> = if args.transcripts.is_empty() {
        scriptorium_backend_api::layers::writer_runtime::import::default_paths(Format::ClaudeCode)
    } else {
        args.transcripts.iter().map(|dir| crate::workspace::expand_home(dir)).collect()
    };
    if dirs.is_empty() {
        return Err(failed("no Claude Code transcript directory (~/.claude/projects): pass --transcripts DIR"));
    }
    let store = SqliteStore::open(&sessions)
        .map_err(|error| failed(format!("{}: {}: {}", sessions.display(), error.code().as_str(), error.message())))?;

    let (events, inbox) = channel();
    let mut watcher =
        notify::recommended_watcher(events).map_err(|err| failed(format!("cannot watch files: {err}")))?;
    for dir in &dirs {
        watcher
            .watch(dir, RecursiveMode::Recursive)
            .map_err(|err| failed(format!("{}: cannot watch: {err}", dir.display())))?;
        eprintln!("scriptorium watch: watching {}", dir.display());
    }
    let writer = start_writer(&root, &sessions, args)?;
    let writes = writer.as_ref().map(|(writes, _)| writes);
    import(&store, &dirs, writes);
    eprintln!("scriptorium watch: ready (workspace {}, sessions {})", root.display(), sessions.display());

    let mut pending: BTreeSet<PathBuf> = BTreeSet::new();
    let mut last_event = Instant::now();
    let mut last_scan = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        match inbox.recv_timeout(TICK) {
            Ok(Ok(event)) => {
                let event: notify::Event = event;
                if !event.kind.is_access() {
                    pending.extend(event.paths.into_iter().filter(|path| files::wanted(path, &dirs)));
                    last_event = Instant::now();
                }
            }
            Ok(Err(err)) => eprintln!("scriptorium watch: file watch: {err}"),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if !pending.is_empty() && last_event.elapsed() >= SETTLE {
            let paths: Vec<PathBuf> = std::mem::take(&mut pending).into_iter().collect();
            import(&store, &paths, writes);
        } else if last_scan.elapsed() >= RESCAN {
            import(&store, &dirs, writes);
            last_scan = Instant::now();
        }
    }
    eprintln!("scriptorium watch: stopping");
    drop(watcher);
    shut_down(writer);
    Ok(Outcome::Clean)
}

/// Stop the writer threads, waiting at most [`STOP_GRACE`]: a write pass in progress may
/// be in a model call for minutes, and an interrupted one is recovered on the next open.
fn shut_down(writer: Option<(Writes, Background)>) {
    let Some((writes, background)) = writer else { return };
    let (done, finished) = channel();
    let stopper = std::thread::spawn(move || {
        let worker = writes.close();
        background.stop();
        if let Some(worker) = worker {
            let _ = worker.join();
        }
        let _ = done.send(());
    });
    if finished.recv_timeout(STOP_GRACE).is_ok() {
        let _ = stopper.join();
    } else {
        eprintln!("scriptorium watch: a write is still running; it resumes on the next start");
    }
}
