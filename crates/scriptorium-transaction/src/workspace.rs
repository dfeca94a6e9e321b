//! [`Workspace`]: open (or create) a memory workspace on the real file system (spec 01
//! §1.2, §1.3, §1.8), recover it, and give access to the lock, the revision, the runtime
//! state and the crash-safe install.
//!
//! Opening takes the write lock once, for the steps that change the tree: recovery of
//! any interrupted install, the superseded-layout migration, `topics/` and `sources/`,
//! and the workspace id. The once-per-process file-mode migration waits for the first
//! install, and Git history for the first update, so a rejected edit changes neither.

mod install;
mod layout;

use std::fs::DirBuilder;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::archive_tree::WorkspaceTree;
use crate::error::{Error, ErrorCode};
use crate::journal::{self, Changes, Installed, Recovery, TXN_DIR, io_error};
use crate::lock::{INTERACTIVE_LOCK_TIMEOUT, LOCK_FILE, WriteLock};
use crate::revision::{RUNTIME_STATE_FILE, runtime_dir_name};
use crate::runtime_state::RuntimeState;
use crate::vfs::{DIR_MODE, RealVfs, Vfs, create_dir_all};

pub use self::layout::{SUPERSEDED_DIR, SUPERSEDED_ITEMS, WORKSPACE_ID_FILE, is_valid_workspace_id};

/// An open memory workspace.
#[derive(Debug)]
pub struct Workspace {
    vfs: RealVfs,
    runtime_dir: &'static str,
    recovery: Recovery,
    workspace_id: String,
    /// What the last revision computation hashed, so the next one resumes where the
    /// tree first differs (`revision/cache.rs`).
    pub(crate) revision_cache: std::sync::Mutex<crate::revision::RevisionCache>,
    /// The committed topics, their units and baseline as of the last update, so the next
    /// one re-reads and re-parses only what changed (`update/stage/committed.rs`).
    pub(crate) committed_cache: std::sync::Mutex<crate::update::CommittedCache>,
    /// The history commit this handle last verified or published (`History::open_verified`).
    verified_history: std::sync::Mutex<Option<String>>,
}

impl Workspace {
    /// Open the workspace at `root`, creating it if needed, waiting up to the interactive
    /// lock timeout (10 s) for the write lock.
    pub fn open(root: impl Into<PathBuf>) -> Result<Workspace, Error> {
        Self::open_with_timeout(root, INTERACTIVE_LOCK_TIMEOUT)
    }

    /// Open the workspace at `root`, waiting at most `lock_timeout` for the write lock
    /// (`CONCURRENT_UPDATE` when it is not obtained).
    pub fn open_with_timeout(root: impl Into<PathBuf>, lock_timeout: Duration) -> Result<Workspace, Error> {
        let root = root.into();
        DirBuilder::new().recursive(true).mode(DIR_MODE).create(&root).map_err(io_error(&root))?;
        let vfs = RealVfs::new(root);
        let runtime_dir = runtime_dir_name(&vfs)?;
        create_dir_all(&vfs, Path::new(runtime_dir)).map_err(io_error(Path::new(runtime_dir)))?;

        let lock = WriteLock::acquire(&vfs.root().join(runtime_dir), lock_timeout)?;
        let recovery = journal::recover(&vfs, runtime_dir)?;
        layout::ensure_layout(&vfs)?;
        let workspace_id = layout::ensure_workspace_id(&vfs, runtime_dir)?;
        let txn = Path::new(runtime_dir).join(TXN_DIR);
        create_dir_all(&vfs, &txn).map_err(io_error(&txn))?;
        drop(lock);
        Ok(Workspace {
            vfs,
            runtime_dir,
            recovery,
            workspace_id,
            revision_cache: Default::default(),
            committed_cache: Default::default(),
            verified_history: Default::default(),
        })
    }

    /// History for a commit under the lock, verified in full once per handle: later
    /// commits skip the object check while `HEAD` is the commit this handle last saw.
    pub(crate) fn history_for_commit(&self) -> Result<crate::History, Error> {
        let mut verified = self.verified_history.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let history = crate::History::open_verified(self.root(), verified.as_deref())?;
        *verified = history.head();
        Ok(history)
    }

    /// Record that this handle published `commit`, so the next commit trusts it.
    pub(crate) fn history_published(&self, commit: &str) {
        *self.verified_history.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(commit.to_owned());
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        self.vfs.root()
    }

    /// The runtime directory's name (`.scriptorium`, or `.nativemem` where that exists).
    pub fn runtime_dir_name(&self) -> &'static str {
        self.runtime_dir
    }

    /// The runtime directory's path.
    pub fn runtime_dir(&self) -> PathBuf {
        self.root().join(self.runtime_dir)
    }

    /// The workspace-relative path of the runtime state file, as used in [`Changes`].
    pub fn runtime_state_path(&self) -> String {
        format!("{}/{RUNTIME_STATE_FILE}", self.runtime_dir)
    }

    /// The file system operations rooted at this workspace.
    pub fn vfs(&self) -> &RealVfs {
        &self.vfs
    }

    /// What recovery did when the workspace was opened.
    pub fn recovery(&self) -> &Recovery {
        &self.recovery
    }

    /// The workspace id (`w-` and 8 hex digits).
    pub fn workspace_id(&self) -> &str {
        &self.workspace_id
    }

    /// Take the write lock, waiting at most `timeout`.
    pub fn lock(&self, timeout: Duration) -> Result<WriteLock, Error> {
        WriteLock::acquire(&self.runtime_dir(), timeout)
    }

    /// The runtime state; a missing or unreadable file gives the default.
    pub fn runtime_state(&self) -> RuntimeState {
        self.vfs
            .read(Path::new(&self.runtime_state_path()))
            .map(|bytes| RuntimeState::parse(&bytes))
            .unwrap_or_default()
    }

    /// The archive writer's view of this workspace.
    pub fn archive_tree(&self) -> WorkspaceTree<'_, RealVfs> {
        WorkspaceTree::new(&self.vfs)
    }

    /// Recover any interrupted install (normally done by [`Workspace::open`] and before
    /// every install).
    pub fn recover(&self, lock: &WriteLock) -> Result<Recovery, Error> {
        self.check_lock(lock)?;
        journal::recover(&self.vfs, self.runtime_dir)
    }

    /// [`Workspace::install`] without a word to the committed cache, for a caller that
    /// keeps it itself (an update) or has forgotten it.
    pub(crate) fn install_files(&self, lock: &WriteLock, changes: &Changes) -> Result<Installed, Error> {
        self.check_lock(lock)?;
        // The once-per-process mode migration runs at the first install, not at open,
        // so that opening (and a rejected edit) changes no file mode.
        layout::migrate_modes_once(&self.vfs);
        lock.installing();
        journal::install(&self.vfs, self.runtime_dir, changes, &|| lock.verify())
    }

    fn check_lock(&self, lock: &WriteLock) -> Result<(), Error> {
        if lock.path() == self.runtime_dir().join(LOCK_FILE) {
            Ok(())
        } else {
            Err(Error::new(ErrorCode::InvalidArgument, "the write lock belongs to another workspace")
                .with_path(lock.path().display().to_string()))
        }
    }
}

#[cfg(test)]
mod tests;
