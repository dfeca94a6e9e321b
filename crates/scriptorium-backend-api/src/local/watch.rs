//! The workspace watcher of a warm backend (decision "revision vs commit speed"): while it
//! can vouch that nothing changed, reads reuse what they computed at the same generation
//! instead of walking all files again; whenever it cannot vouch, they walk.
//!
//! Two generations move: `visible` with every change to a path a reader may see (what the
//! index, the listing and the counts depend on), `tree` also with hidden files (the
//! revision hashes those too). Internal paths (`.git/`, `.scriptorium*/`) move neither, so
//! the index's own cache writes and the journal leave the generations alone.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode, CreateKind, ModifyKind, RenameMode};
use notify::{Config, Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use scriptorium_transaction::{FileClass, classify, is_internal_name};

/// Which reads a generation serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The visible files: the index, the listing and the counts built from them.
    Visible,
    /// Every counted file, hidden ones too: the revision.
    Tree,
}

/// How long after a new directory appears the watcher cannot vouch: it watches the
/// directory only after reporting it, so a file written inside in between has no event.
/// Walking a little longer is always safe.
const SETTLE: Duration = Duration::from_secs(2);

/// What the event handler and the readers share.
#[derive(Debug)]
struct State {
    visible: AtomicU64,
    tree: AtomicU64,
    /// An error was reported: events may have been lost for good.
    broken: AtomicBool,
    /// Nanoseconds after `epoch` until which the watcher cannot vouch (see [`SETTLE`]).
    settle_until: AtomicU64,
    epoch: Instant,
}

impl State {
    fn new() -> State {
        State {
            visible: AtomicU64::new(0),
            tree: AtomicU64::new(0),
            broken: AtomicBool::new(false),
            settle_until: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Record one event; the flags are set before the generations move, so a reader that
    /// sees the new generation sees them too.
    fn apply(&self, touch: Touch) {
        match touch {
            Touch::Nothing => return,
            Touch::Hidden => {
                self.tree.fetch_add(1, Ordering::SeqCst);
                return;
            }
            Touch::Visible => {}
            Touch::NewDirectory => {
                let until = self.now().saturating_add(u64::try_from(SETTLE.as_nanos()).unwrap_or(u64::MAX));
                self.settle_until.fetch_max(until, Ordering::SeqCst);
            }
            Touch::Lost => self.broken.store(true, Ordering::SeqCst),
        }
        self.bump();
    }

    fn bump(&self) {
        self.tree.fetch_add(1, Ordering::SeqCst);
        self.visible.fetch_add(1, Ordering::SeqCst);
    }
}

/// What one event means for the generations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Touch {
    /// A read, or an internal path.
    Nothing,
    /// Only hidden files: the revision moves, no reader's view does.
    Hidden,
    /// A visible path, or one the handler cannot place.
    Visible,
    /// A directory that the watcher starts watching only after this event.
    NewDirectory,
    /// Events may be lost from now on (an error, the root itself gone or moved).
    Lost,
}

/// The watcher of one warm backend, if it could start.
pub(crate) struct Watch {
    state: Arc<State>,
    /// Kept alive for its thread; dropping it stops the watching. `None`: turned off, or
    /// the platform refused (no inotify, the watch or instance limit).
    watcher: Option<RecommendedWatcher>,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch").field("state", &self.state).field("watching", &self.watcher.is_some()).finish()
    }
}

impl Watch {
    /// Watch `root` recursively, unless `enabled` is false; a set-up failure leaves no
    /// watcher, and every read walks as without one.
    pub(crate) fn start(root: &Path, enabled: bool) -> Watch {
        let state = Arc::new(State::new());
        let watcher = if enabled { start_watcher(root, &state) } else { None };
        Watch { state, watcher }
    }

    /// The generation of `scope` while the watcher can vouch for it; `None` means walk.
    /// Read it before the walk and keep it with the result: an event during the walk
    /// then moves it, and the next read walks again.
    pub(crate) fn generation(&self, scope: Scope) -> Option<u64> {
        let counter = match scope {
            Scope::Visible => &self.state.visible,
            Scope::Tree => &self.state.tree,
        };
        let generation = counter.load(Ordering::SeqCst);
        let vouches = self.watcher.is_some()
            && !self.state.broken.load(Ordering::SeqCst)
            && self.state.settle_until.load(Ordering::SeqCst) <= self.state.now();
        vouches.then_some(generation)
    }

    /// Something changed that no event may report in time (this process's own writes):
    /// the next read of either scope walks.
    pub(crate) fn changed(&self) {
        self.state.bump();
    }

    /// Whether a watcher runs (the tests check they exercise one).
    #[cfg(test)]
    pub(crate) fn is_watching(&self) -> bool {
        self.watcher.is_some()
    }
}

fn start_watcher(root: &Path, state: &Arc<State>) -> Option<RecommendedWatcher> {
    // Events name paths under the root as the watcher made it absolute: so must we.
    let handler_root: PathBuf =
        if root.is_absolute() { root.to_path_buf() } else { std::env::current_dir().ok()?.join(root) };
    let handler_state = Arc::clone(state);
    let handler = move |event: notify::Result<Event>| handler_state.apply(touch(&handler_root, &event));
    // Readers never follow a link, so neither does the watch (a link to `/` would watch it all).
    let config = Config::default().with_follow_symlinks(false);
    let mut watcher = RecommendedWatcher::new(handler, config).ok()?;
    watcher.watch(root, RecursiveMode::Recursive).ok()?;
    Some(watcher)
}

/// What `event` under the watched `root` touches.
fn touch(root: &Path, event: &notify::Result<Event>) -> Touch {
    let event = match event {
        Ok(event) => event,
        Err(_) => return Touch::Lost,
    };
    if event.need_rescan() {
        return Touch::Visible;
    }
    if is_read(&event.kind) {
        return Touch::Nothing;
    }
    if event.paths.is_empty() {
        return Touch::Visible;
    }
    event
        .paths
        .iter()
        .map(|path| touch_path(root, &event.kind, path))
        .max_by_key(|touch| rank(*touch))
        .unwrap_or(Touch::Visible)
}

/// The strongest of several paths' touches wins.
fn rank(touch: Touch) -> u8 {
    match touch {
        Touch::Nothing => 0,
        Touch::Hidden => 1,
        Touch::Visible => 2,
        Touch::NewDirectory => 3,
        Touch::Lost => 4,
    }
}

/// Opening, reading and closing without writing change nothing (the watcher reports the
/// readers' own opens, the index's refresh and grep among them).
fn is_read(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Read | AccessKind::Open(_)) => true,
        EventKind::Access(AccessKind::Close(mode)) => matches!(mode, AccessMode::Read | AccessMode::Execute),
        _ => false,
    }
}

fn touch_path(root: &Path, kind: &EventKind, path: &Path) -> Touch {
    let Ok(relative) = path.strip_prefix(root) else { return Touch::Visible };
    if relative.as_os_str().is_empty() {
        // The root itself: gone or moved, nothing under it is watched where it now is.
        return match kind {
            EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(_)) => Touch::Lost,
            _ => Touch::Visible,
        };
    }
    if relative.components().next().is_some_and(|first| is_internal_name(first.as_os_str())) {
        return Touch::Nothing;
    }
    let appeared_directory = match kind {
        EventKind::Create(CreateKind::Folder | CreateKind::Any | CreateKind::Other) => true,
        EventKind::Modify(ModifyKind::Name(RenameMode::To | RenameMode::Both | RenameMode::Any)) => {
            std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir())
        }
        _ => false,
    };
    if appeared_directory {
        return Touch::NewDirectory;
    }
    match classify(relative.as_os_str().as_bytes()) {
        FileClass::Hidden => Touch::Hidden,
        _ => Touch::Visible,
    }
}

#[cfg(test)]
mod tests;
