//! The shipped backend over the layers below: one warm workspace handle (inside the writer
//! runtime, with its views cache) and one retrieval index, kept across calls, with a
//! file-system watcher so reads skip the stat walk while nothing changed.

mod fresh;
mod hand_edit;
mod once;
mod recall;

pub(crate) use self::recall::recalled;
mod watch;
mod writer;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use scriptorium_retrieval::Index;
use scriptorium_transaction::Workspace;
use scriptorium_writer_runtime::{
    MemoryWriteFailureCode, PassError, Runtime, RuntimeConfig, SESSIONS_FILE, SqliteStore, SystemClock, classify,
};

use crate::backend::MemoryBackend;
use crate::config::MemoryConfig;
use crate::error::{Error, ErrorCode};
use crate::fence::fence;
use crate::tier::{Capability, Tier, allows};
use crate::types::{Message, ReorganizeReport, ReorganizeStatus, SessionFailure, WriteFailure};

pub use self::hand_edit::HandEdit;
pub use self::once::recall_once;

use self::fresh::{Indexed, Memos};
use self::watch::Watch;

/// Set (to anything but `0`) to run without the watcher: every read walks the files, as on
/// a file system whose changes by other machines no local event reports.
pub const NO_WATCH_ENV: &str = "SCRIPTORIUM_NO_WATCH";

/// What a warm backend holds.
pub(crate) struct Warm {
    /// Owns the one `Workspace` handle (revision and committed-topic caches) and the views cache.
    pub(crate) runtime: Runtime,
    /// Refreshed by stat fingerprints when the watcher cannot vouch; only changed files are re-read.
    index: Mutex<Indexed>,
    /// Started before the index is first refreshed, so no change slips in between.
    watch: Watch,
    /// What the read tools derived from the files, per generation.
    memos: Memos,
}

/// What a tool handler of the local backend works with.
pub(crate) struct Host<'a> {
    /// The workspace root.
    pub(crate) root: &'a Path,
    /// The settings of this call.
    pub(crate) config: MemoryConfig,
    /// The warm workspace handle, runtime and index.
    pub(crate) warm: Arc<Warm>,
}

/// The local backend (`memory.backend = local`).
pub struct LocalBackend {
    root: PathBuf,
    sessions: PathBuf,
    config: Mutex<MemoryConfig>,
    warm: Mutex<Option<Arc<Warm>>>,
    /// Sessions this process initialized or wrote: `shutdown` force-writes them.
    seen: Mutex<BTreeSet<String>>,
    /// The session `initialize` named, the fallback of `write` without one.
    fallback: Mutex<String>,
    /// Whether the warm backend watches the workspace.
    watching: bool,
}

impl std::fmt::Debug for LocalBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalBackend").field("root", &self.root).field("sessions", &self.sessions).finish()
    }
}

/// A poisoned lock only means a panic elsewhere; the data it guards stays usable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl LocalBackend {
    /// A backend for the workspace at `root` and the session store at `sessions`
    /// (default: `sessions.sqlite3` beside the workspace). Nothing is opened or created
    /// until a hook needs it.
    pub fn new(root: impl Into<PathBuf>, sessions: Option<PathBuf>, config: MemoryConfig) -> Self {
        let root = root.into();
        let sessions = sessions.unwrap_or_else(|| root.parent().unwrap_or(&root).join(SESSIONS_FILE));
        LocalBackend {
            root,
            sessions,
            config: Mutex::new(config),
            warm: Mutex::new(None),
            seen: Mutex::new(BTreeSet::new()),
            fallback: Mutex::new(String::new()),
            watching: std::env::var_os(NO_WATCH_ENV).is_none_or(|value| value.is_empty() || value == "0"),
        }
    }

    /// This backend with the watcher on or off (default: on unless [`NO_WATCH_ENV`] is set).
    /// Off, or when the platform refuses one, every read walks the files.
    #[must_use]
    pub fn with_watcher(mut self, enabled: bool) -> Self {
        self.watching = enabled;
        self
    }

    /// Memory changed in a way the watcher may not report in time (a write through another
    /// handle of this process, a file system without events): the next read walks. The
    /// backend's own writes call it themselves.
    pub fn invalidate(&self) {
        if let Some(warm) = lock(&self.warm).as_ref() {
            warm.watch.changed();
        }
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The settings in use.
    pub fn config(&self) -> MemoryConfig {
        lock(&self.config).clone()
    }

    /// New settings, live: recall and core read them on the next call; a change of the
    /// writer's settings rebuilds the runtime (the workspace handle with it) on next use.
    pub fn set_config(&self, config: MemoryConfig) {
        let mut current = lock(&self.config);
        let writer_changed = current.writer_model != config.writer_model
            || current.writer_base_url != config.writer_base_url
            || current.writer_enabled != config.writer_enabled
            || current.trigger_tokens != config.trigger_tokens;
        *current = config;
        drop(current);
        if writer_changed {
            *lock(&self.warm) = None;
        }
    }

    /// Open (creating when missing) the workspace, the session store and the index, once.
    fn warm(&self) -> Result<Arc<Warm>, Error> {
        let mut slot = lock(&self.warm);
        if let Some(warm) = slot.as_ref() {
            return Ok(Arc::clone(warm));
        }
        let config = self.config();
        let runtime = self.runtime(&config, None)?;
        let watch = Watch::start(&self.root, self.watching);
        let index = Index::open(&self.root)?;
        let warm = Arc::new(Warm { runtime, index: Mutex::new(Indexed::new(index)), watch, memos: Memos::default() });
        *slot = Some(Arc::clone(&warm));
        Ok(warm)
    }

    /// A writer runtime over a new workspace handle, with `model` instead of the configured one.
    fn runtime(&self, config: &MemoryConfig, model: Option<&str>) -> Result<Runtime, Error> {
        let workspace = Workspace::open(&self.root)?;
        let store = SqliteStore::open(&self.sessions)?;
        let agent = writer::agent(model.unwrap_or(&config.writer_model), &config.writer_base_url);
        let runtime_config = RuntimeConfig {
            enabled: config.writer_enabled,
            trigger_tokens: config.trigger_tokens,
            ..RuntimeConfig::default()
        };
        Ok(Runtime::new(workspace, Arc::new(store), agent, Arc::new(SystemClock), runtime_config))
    }

    /// The fallback session when `session_id` is empty; remembered for `shutdown`.
    fn session(&self, session_id: &str) -> String {
        let session = if session_id.is_empty() { lock(&self.fallback).clone() } else { session_id.to_owned() };
        if !session.is_empty() {
            lock(&self.seen).insert(session.clone());
        }
        session
    }
}

/// A write that could not even start, as the closed failure set says it.
fn unstarted(error: &Error) -> WriteFailure {
    let code = MemoryWriteFailureCode::from_name(error.code().as_str())
        .unwrap_or(MemoryWriteFailureCode::WriterFailureUnknown);
    let retryable = matches!(error.code(), ErrorCode::Io | ErrorCode::ConcurrentUpdate);
    WriteFailure::new(code, retryable, error.to_string())
}

fn failed_report(error: &PassError) -> ReorganizeReport {
    let failure = classify(error);
    ReorganizeReport {
        error: Some((failure.reason_code.as_str().to_owned(), failure.reason)),
        ..ReorganizeReport::status(ReorganizeStatus::Failed)
    }
}

impl MemoryBackend for LocalBackend {
    fn name(&self) -> &str {
        "local"
    }

    /// Remember the session and warm the workspace, the store and the index, so the
    /// first turn pays nothing; a workspace that cannot open is left for later hooks.
    fn initialize(&self, session_id: &str) {
        if !session_id.is_empty() {
            *lock(&self.fallback) = session_id.to_owned();
            lock(&self.seen).insert(session_id.to_owned());
        }
        // The first refresh walks every file; done here, the first search only asks the
        // watcher whether anything changed since.
        if let Ok(warm) = self.warm() {
            let _ = warm.fresh_index(&self.root);
        }
    }

    fn shutdown(&self) -> Vec<SessionFailure> {
        let sessions: Vec<String> = std::mem::take(&mut *lock(&self.seen)).into_iter().collect();
        if sessions.is_empty() {
            return Vec::new();
        }
        let warm = match self.warm() {
            Ok(warm) => warm,
            Err(error) => {
                let failure = unstarted(&error);
                return sessions
                    .into_iter()
                    .map(|session_id| SessionFailure { session_id, failure: failure.clone() })
                    .collect();
            }
        };
        sessions
            .into_iter()
            .filter_map(|session_id| {
                let failure = warm.runtime.hook(&session_id, None, true);
                warm.watch.changed();
                failure.map(|failure| SessionFailure { session_id, failure })
            })
            .collect()
    }

    fn system_prompt(&self, tier: Option<Tier>) -> String {
        // The callers of spec 02 §1.4 pass no tier; a tier that cannot read memory gets none.
        if tier.is_some() && !allows(tier, Capability::MemoryRead) {
            return String::new();
        }
        if !self.config().core_inject {
            return String::new();
        }
        recall::core(&self.root)
    }

    fn search(&self, query: &str, _session_id: &str, tier: Option<Tier>) -> String {
        if query.trim().is_empty() || !allows(tier, Capability::MemoryRead) {
            return String::new();
        }
        let config = self.config();
        let Ok(warm) = self.warm() else { return String::new() };
        fence(&recall::recall(&warm, &self.root, query, &config))
    }

    fn write(&self, messages: Option<&[Message]>, session_id: &str, force: bool) -> Option<WriteFailure> {
        let session = self.session(session_id);
        match self.warm() {
            Ok(warm) => {
                let failure = warm.runtime.hook(&session, messages, force);
                warm.watch.changed();
                failure
            }
            Err(error) => Some(unstarted(&error)),
        }
    }

    fn extract_before_discard(&self, messages: &[Message]) -> String {
        let query = messages.iter().map(|message| message.content.text()).collect::<Vec<_>>().join("\n");
        if query.trim().is_empty() {
            return String::new();
        }
        let config = self.config();
        let Ok(warm) = self.warm() else { return String::new() };
        fence(&recall::recall(&warm, &self.root, &query, &config))
    }

    fn tools(&self) -> &'static [crate::tools::ToolSpec] {
        crate::tools::TOOLS
    }

    fn call_tool(&self, name: &str, arguments: &serde_json::Value, caller: &crate::tools::Caller) -> String {
        let warm = match self.warm() {
            Ok(warm) => warm,
            Err(error) => return crate::tools::tx_error(&error),
        };
        let host = Host { root: &self.root, config: self.config(), warm };
        let answer = crate::tools::call(&host, name, arguments, caller);
        // A tool that may write (memory_update, memory_promote) makes the next read walk.
        if crate::tools::tool(name).is_some_and(|spec| spec.capability != Capability::MemoryRead) {
            host.warm.watch.changed();
        }
        answer
    }

    fn reorganize(&self, model: Option<&str>) -> ReorganizeReport {
        let report = self.reorganize_once(model);
        self.invalidate();
        report
    }
}

impl LocalBackend {
    /// [`MemoryBackend::reorganize`] before the next read is told to walk.
    fn reorganize_once(&self, model: Option<&str>) -> ReorganizeReport {
        let config = self.config();
        let result = match model.filter(|model| *model != config.writer_model) {
            Some(model) => match self.runtime(&config, Some(model)) {
                Ok(runtime) => runtime.reorganize(),
                Err(error) => {
                    return ReorganizeReport {
                        error: Some((error.code().as_str().to_owned(), error.message().to_owned())),
                        ..ReorganizeReport::status(ReorganizeStatus::Failed)
                    };
                }
            },
            None => match self.warm() {
                Ok(warm) => warm.runtime.reorganize(),
                Err(error) => {
                    return ReorganizeReport {
                        error: Some((error.code().as_str().to_owned(), error.message().to_owned())),
                        ..ReorganizeReport::status(ReorganizeStatus::Failed)
                    };
                }
            },
        };
        match result {
            Ok(report) => {
                use scriptorium_writer_runtime::ReorganizeStatus as Lower;
                let status = match report.status {
                    Lower::Disabled => ReorganizeStatus::Disabled,
                    Lower::Empty => ReorganizeStatus::Empty,
                    Lower::Ok => ReorganizeStatus::Ok,
                    Lower::Busy => ReorganizeStatus::Busy,
                };
                ReorganizeReport { status, topics: report.topics, changed_files: report.changed_files, error: None }
            }
            Err(error) => failed_report(&error),
        }
    }
}
