//! The idle-session watcher (spec 02 §2.10) and the nightly reorganize hook (§8.1): the
//! only background threads in the workspace (architecture invariant). A [`Background`]
//! handle stops both promptly.
//!
//! A scan holds `.scriptorium/session-end.lock` without waiting, pages through every
//! session, force-writes each one idle past the allowance whose `updated_at` has no
//! terminal outcome in `.scriptorium/session-end.json`, tells the embedding program
//! through an [`IngestEvent`] callback, and persists each terminal outcome at once.

use std::collections::BTreeMap;
use std::fs::TryLockError;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use scriptorium_transaction::{Vfs, write_atomic};
use serde_json::{Map, Value};

use crate::error::{Error, ErrorCode};
use crate::pass::Runtime;
use crate::status::{open_lock, state_error};

/// The watcher's state file in the runtime directory.
pub const SESSION_END_FILE: &str = "session-end.json";

/// Its lock file.
pub const SESSION_END_LOCK: &str = "session-end.lock";

/// How often the watcher scans (spec 02 §2.10: 300 s).
pub const POLL_INTERVAL: Duration = Duration::from_secs(300);

/// How long a session must be idle before it is force-written (30 min).
pub const IDLE_SECONDS: f64 = 1800.0;

/// The local hour of the nightly reorganize.
pub const NIGHTLY_HOUR: u32 = 3;

/// What the watcher tells the embedding program (`memory.ingest_started` / `_ended`,
/// origin `system`, metadata `{"session": id}`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IngestEvent {
    /// A forced write of `session` starts over `messages` messages.
    Started {
        /// The session.
        session: String,
        /// How many messages its head branch holds.
        messages: usize,
    },
    /// The forced write ended, whatever its outcome.
    Ended {
        /// The session.
        session: String,
        /// Whether nothing is owed.
        ok: bool,
        /// Whether a failure may succeed later.
        retryable: bool,
        /// The failure's diagnostic, or empty.
        reason: String,
    },
}

/// The callback the embedding program subscribes with.
pub type IngestCallback = Arc<dyn Fn(&IngestEvent) + Send + Sync>;

/// What one scan did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanReport {
    /// Sessions force-written (whatever the outcome).
    pub written: Vec<String>,
    /// Sessions given up on for their current `updated_at` (non-retryable failure).
    pub given_up: Vec<String>,
    /// Sessions left for the next poll (retryable failure).
    pub deferred: Vec<String>,
}

/// Run one scan now (spec 02 §2.10).
pub fn scan_idle_sessions(runtime: &Runtime, on_event: &dyn Fn(&IngestEvent)) -> Result<ScanReport, Error> {
    let workspace = runtime.workspace();
    let lock = open_lock(&workspace.runtime_dir().join(SESSION_END_LOCK))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            return Err(Error::new(ErrorCode::ScanBusy, "another process is scanning for idle sessions"));
        }
        Err(TryLockError::Error(error)) => return Err(state_error(error, "cannot lock the watcher state")),
    }
    let path = Path::new(workspace.runtime_dir_name()).join(SESSION_END_FILE);
    let mut state = match workspace.vfs().read(&path) {
        Ok(bytes) => parse_state(&bytes)?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
        Err(error) => {
            return Err(Error::new(ErrorCode::WatcherStateCorrupt, "cannot read session-end.json").with_source(error));
        }
    };
    let now = runtime.clock().now();
    let mut report = ScanReport::default();
    let sessions = runtime.all_sessions().map_err(|error| Error::new(ErrorCode::SessionStoreIo, error.to_string()))?;
    for session in sessions {
        let updated = session.updated_at;
        if updated == 0.0 || updated > now - IDLE_SECONDS || state.get(&session.id) == Some(&updated) {
            continue;
        }
        let Ok(messages) = runtime.store().get_branch(&session.id, None) else { continue };
        if !messages.is_empty() {
            on_event(&IngestEvent::Started { session: session.id.clone(), messages: messages.len() });
            let left = runtime.hook(&session.id, Some(&messages), true);
            on_event(&IngestEvent::Ended {
                session: session.id.clone(),
                ok: left.is_none(),
                retryable: left.as_ref().is_some_and(|f| f.retryable),
                reason: left.as_ref().map(|f| f.reason.clone()).unwrap_or_default(),
            });
            report.written.push(session.id.clone());
            match left {
                Some(failure) if failure.retryable => {
                    report.deferred.push(session.id.clone());
                    continue;
                }
                Some(_) => report.given_up.push(session.id.clone()),
                None => {}
            }
        }
        // A terminal outcome is persisted before the next session.
        state.insert(session.id.clone(), updated);
        write_atomic(workspace.vfs(), &path, &render_state(&state))
            .map_err(|error| state_error(error, "cannot write session-end.json"))?;
    }
    Ok(report)
}

fn parse_state(bytes: &[u8]) -> Result<BTreeMap<String, f64>, Error> {
    let corrupt = || Error::new(ErrorCode::WatcherStateCorrupt, "session-end.json is not an object of numbers");
    let Ok(Value::Object(members)) = serde_json::from_slice::<Value>(bytes) else { return Err(corrupt()) };
    members.into_iter().map(|(id, at)| Ok((id, at.as_f64().ok_or_else(corrupt)?))).collect()
}

/// `json.dumps(state, indent=2)` without a trailing LF.
fn render_state(state: &BTreeMap<String, f64>) -> Vec<u8> {
    let members: Map<String, Value> = state
        .iter()
        .filter_map(|(id, at)| Some((id.clone(), Value::from(serde_json::Number::from_f64(*at)?))))
        .collect();
    serde_json::to_vec_pretty(&Value::Object(members)).unwrap_or_else(|_| b"{}".to_vec())
}

/// Seconds from `now` to the next `hour`:00 at the fixed offset `offset_seconds`.
pub fn seconds_until_hour(now: f64, hour: u32, offset_seconds: i32) -> f64 {
    let local = now + f64::from(offset_seconds);
    let day_second = local.rem_euclid(86_400.0);
    let target = f64::from(hour.min(23)) * 3600.0;
    let wait = target - day_second;
    if wait > 0.0 { wait } else { wait + 86_400.0 }
}

/// Settings of the background threads.
#[derive(Clone, Debug)]
pub struct BackgroundConfig {
    /// The watcher's poll period; the first scan comes one period after the start.
    pub poll_interval: Duration,
    /// Run the idle watcher.
    pub watcher: bool,
    /// Run the nightly reorganize.
    pub nightly: bool,
    /// The local hour of the nightly reorganize.
    pub nightly_hour: u32,
}

impl Default for BackgroundConfig {
    fn default() -> Self {
        BackgroundConfig { poll_interval: POLL_INTERVAL, watcher: true, nightly: true, nightly_hour: NIGHTLY_HOUR }
    }
}

/// The running background threads; [`Background::stop`] (or dropping it) ends them.
#[derive(Debug)]
pub struct Background {
    stop: Arc<(Mutex<bool>, Condvar)>,
    threads: Vec<JoinHandle<()>>,
}

impl Background {
    /// Start the idle watcher and the nightly reorganize over `runtime`.
    pub fn start(
        runtime: Arc<Runtime>,
        config: BackgroundConfig,
        on_event: IngestCallback,
    ) -> std::io::Result<Background> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let mut threads = Vec::new();
        if config.watcher {
            let (runtime, stop, poll) = (runtime.clone(), stop.clone(), config.poll_interval);
            threads.push(std::thread::Builder::new().name("scriptorium-idle-watcher".into()).spawn(move || {
                while !wait_or_stop(&stop, poll) {
                    // A busy or corrupt state is retried next poll; the embedding program
                    // sees outcomes through the callback.
                    let _ = scan_idle_sessions(&runtime, &*on_event);
                }
            })?);
        }
        if config.nightly {
            let (runtime, stop, hour) = (runtime.clone(), stop.clone(), config.nightly_hour);
            threads.push(std::thread::Builder::new().name("scriptorium-nightly".into()).spawn(move || {
                loop {
                    let wait = seconds_until_hour(runtime.clock().now(), hour, runtime.utc_offset_seconds());
                    if wait_or_stop(&stop, Duration::from_secs_f64(wait)) {
                        return;
                    }
                    let _ = runtime.reorganize();
                }
            })?);
        }
        Ok(Background { stop, threads })
    }

    /// Ask the threads to stop and wait for them (a scan in progress finishes first).
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        let (flag, condvar) = &*self.stop;
        *flag.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = true;
        condvar.notify_all();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.halt();
    }
}

/// Wait `timeout` unless stopped first; `true` when stopped.
fn wait_or_stop(stop: &(Mutex<bool>, Condvar), timeout: Duration) -> bool {
    let (flag, condvar) = stop;
    let guard = flag.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (guard, _) = condvar
        .wait_timeout_while(guard, timeout, |stopped| !*stopped)
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    *guard
}

#[cfg(test)]
mod tests;
