//! The crash-safe install: a redo journal of files `<runtime-dir>/txn/<id>.*` whose commit
//! point is the rename of `<id>.MANIFEST` to `<id>.COMMITTED` followed by one sync of
//! `txn/` (docs/durability.md has the numbered order, every crash point and what recovery
//! sees).
//!
//! [`install`] takes whole-file changes (new bytes, or `None` to delete) for any memory
//! path plus `<runtime-dir>/runtime.json`; [`recover`] rolls a committed journal forward,
//! deletes uncommitted ones and restores a reference `-block-backup` directory. Both
//! must run under the write lock; both are idempotent, including after a crash of
//! their own.

mod apply;
mod block_backup;
mod layout;
mod manifest;
mod recover;

use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use self::apply::{Phase, retire, roll_forward};
use self::layout::{Journal, Layout};
use self::manifest::{Entry, Manifest, sha256};
use crate::derive::CORE_REPORT_FILE;
use crate::error::{Error, ErrorCode};
use crate::promote::TRUST_AUDIT_FILE;
use crate::revision::{RUNTIME_STATE_FILE, is_internal_path};
use crate::vfs::{FileKind, Vfs, create_dir_all, kind_of};

pub use self::block_backup::BackupRecovery;
pub use self::recover::recover;

/// Whole-file changes keyed by workspace-relative `/`-separated path: the new bytes, or
/// `None` to delete the file.
pub type Changes = BTreeMap<String, Option<Vec<u8>>>;

/// The journal directory inside the runtime directory.
pub const TXN_DIR: &str = "txn";

/// Where recovery moves bytes it must not delete, inside the runtime directory.
pub const QUARANTINE_DIR: &str = "quarantine";

/// What an install did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Installed {
    /// The journal id, or `None` when no file changed (nothing was written at all).
    pub journal: Option<String>,
    /// The paths whose bytes changed (created, replaced or deleted), in path order.
    pub changed: Vec<String>,
    /// The revisions before and after, when [`Workspace::install`](crate::Workspace::install)
    /// knew the tree it installed over without walking it again (`None` otherwise, and
    /// for every other install).
    pub moved: Option<RevisionMove>,
}

/// How an install moved the workspace's revision: a cache that held the tree at `from`
/// holds it at `to` except at the installed paths.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RevisionMove {
    /// The revision of the tree the install started from.
    pub from: String,
    /// The revision right after it.
    pub to: String,
}

impl RevisionMove {
    /// A move from revision `from` to `to`.
    pub fn new(from: impl Into<String>, to: impl Into<String>) -> Self {
        RevisionMove { from: from.into(), to: to.into() }
    }
}

/// What recovery found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Recovery {
    /// Committed journals rolled forward (in practice one, or two when a power loss also
    /// brought back the previous, already installed one).
    pub rolled_forward: Vec<String>,
    /// Journals deleted: uncommitted ones, and committed ones whose commit never became
    /// durable as a whole (a power loss before the sync of `txn/`).
    pub discarded: Vec<String>,
    /// What was done with a reference `-block-backup` directory, if one was found.
    pub backup: Option<BackupRecovery>,
}

impl Recovery {
    /// Whether there was nothing to recover.
    pub fn is_clean(&self) -> bool {
        self.rolled_forward.is_empty() && self.discarded.is_empty() && self.backup.is_none()
    }
}

/// Map an I/O error on `path` into a `TXN_IO` error naming it.
pub(crate) fn io_error(path: &Path) -> impl FnOnce(io::Error) -> Error + '_ {
    move |error| Error::from(error).with_path(path.display().to_string())
}

/// Install `changes` all-or-nothing, under the write lock the caller holds.
///
/// Recovers any leftover journal first. `precommit` runs after everything is staged and
/// synced and just before the commit point; an error from it (for example the lock's
/// inode check) abandons the transaction. On an I/O error the error's details carry
/// `committed`: `false` means the workspace is unchanged; `true` means the commit point
/// was passed and the transaction will be completed by the next recovery.
pub fn install<V: Vfs + ?Sized>(
    vfs: &V,
    runtime_dir: &str,
    changes: &Changes,
    precommit: &dyn Fn() -> Result<(), Error>,
) -> Result<Installed, Error> {
    recover(vfs, runtime_dir)?;
    let manifest = plan(vfs, runtime_dir, changes)?;
    if manifest.entries.is_empty() {
        return Ok(Installed::default());
    }
    let id = new_id();
    let txn = Path::new(runtime_dir).join(TXN_DIR);
    let journal = Journal::new(&txn, &id, Layout::Flat);

    let staged = stage(vfs, &txn, &journal, &manifest, changes)
        .and_then(|()| precommit())
        .and_then(|()| vfs.rename(&journal.manifest(), &journal.committed()).map_err(io_error(&journal.committed())));
    if let Err(error) = staged {
        // Nothing outside the journal changed: discard it. If that fails too, the next
        // recovery deletes it (it has no COMMITTED).
        discard(vfs, &journal, &manifest);
        return Err(committed(error, false));
    }
    crate::crashpoint!("journal.committed");

    // The one sync of `txn/` makes the staged names, the manifest and the commit rename
    // durable together; no target is touched before it returns.
    vfs.sync_dir(&txn)
        .map_err(io_error(&txn))
        .and_then(|()| roll_forward(vfs, runtime_dir, &journal, &manifest, Phase::Install))
        .and_then(|()| retire(vfs, &journal, manifest.has_delete()))
        .map_err(|error| committed(error, true))?;
    Ok(Installed {
        journal: Some(id),
        changed: manifest.entries.into_iter().map(|entry| entry.path).collect(),
        moved: None,
    })
}

/// Remove the files of an abandoned (never committed) journal, best effort.
fn discard<V: Vfs + ?Sized>(vfs: &V, journal: &Journal, manifest: &Manifest) {
    let _ = vfs.remove_file(&journal.manifest());
    for (index, entry) in manifest.entries.iter().enumerate() {
        if entry.new.is_some() {
            let _ = vfs.remove_file(&journal.staged(index));
        }
    }
}

/// Add the `committed` detail to an I/O error (other codes are the caller's business).
fn committed(error: Error, committed: bool) -> Error {
    if error.code() == ErrorCode::Io { error.with_detail("committed", committed) } else { error }
}

/// A journal id: nanoseconds since the epoch then random bits, so ids sort by time.
fn new_id() -> String {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_nanos());
    format!("{nanos:024x}-{:08x}", crate::random::u64() & 0xffff_ffff)
}

/// Whether `path` may be installed: a plain relative path that is memory, or the runtime
/// state file, the `core.md` render report or the trust audit log of the runtime
/// directory in use.
fn check_install_path(path: &str, runtime_dir: &str) -> Result<(), Error> {
    let plain = !path.is_empty()
        && !path.contains('\0')
        && path.split('/').all(|component| !component.is_empty() && component != "." && component != "..");
    if !plain {
        return Err(Error::new(ErrorCode::PathOutsideWorkspace, "not a plain workspace-relative path").with_path(path));
    }
    let state_file = format!("{runtime_dir}/{RUNTIME_STATE_FILE}");
    let core_report = format!("{runtime_dir}/{CORE_REPORT_FILE}");
    let trust_audit = format!("{runtime_dir}/{TRUST_AUDIT_FILE}");
    if is_internal_path(path) && path != state_file && path != core_report && path != trust_audit {
        return Err(Error::new(ErrorCode::ReadOnlyPath, "internal paths are not installable").with_path(path));
    }
    Ok(())
}

/// Every proper ancestor of `path` must be a directory or missing: writing through a
/// link could leave the workspace, and a file in the way is a caller's mistake.
fn check_parents<V: Vfs + ?Sized>(vfs: &V, path: &str) -> Result<(), Error> {
    let path = Path::new(path);
    for ancestor in path.ancestors().skip(1).collect::<Vec<_>>().into_iter().rev() {
        if ancestor.as_os_str().is_empty() {
            continue;
        }
        match kind_of(vfs, ancestor).map_err(io_error(ancestor))? {
            None => return Ok(()),
            Some(FileKind::Dir) => {}
            Some(FileKind::Symlink) => {
                return Err(Error::new(ErrorCode::PathOutsideWorkspace, "a parent directory is a symbolic link")
                    .with_path(path.display().to_string()));
            }
            Some(_) => {
                return Err(Error::new(ErrorCode::InvalidArgument, "a parent of the path is not a directory")
                    .with_path(path.display().to_string()));
            }
        }
    }
    Ok(())
}

/// Validate every change and compare it with the current bytes; unchanged files and
/// deletes of missing files drop out.
fn plan<V: Vfs + ?Sized>(vfs: &V, runtime_dir: &str, changes: &Changes) -> Result<Manifest, Error> {
    let mut entries = Vec::with_capacity(changes.len());
    for (path, bytes) in changes {
        check_install_path(path, runtime_dir)?;
        check_parents(vfs, path)?;
        let dest = Path::new(path);
        let old = match kind_of(vfs, dest).map_err(io_error(dest))? {
            None => None,
            Some(FileKind::File) => Some(sha256(&vfs.read(dest).map_err(io_error(dest))?)),
            Some(FileKind::Symlink) => {
                return Err(Error::new(ErrorCode::PathOutsideWorkspace, "the path is a symbolic link").with_path(path));
            }
            Some(_) => return Err(Error::new(ErrorCode::InvalidArgument, "the path is not a file").with_path(path)),
        };
        let new = bytes.as_deref().map(sha256);
        if old != new {
            entries.push(Entry { path: path.clone(), old, new });
        }
    }
    Ok(Manifest { entries })
}

/// Steps 2–3 of the protocol: each staged file written and synced, then the manifest
/// written and synced, all in `txn/`. Their names become durable with the commit rename,
/// in the one sync of `txn/` after it.
fn stage<V: Vfs + ?Sized>(
    vfs: &V,
    txn: &Path,
    journal: &Journal,
    manifest: &Manifest,
    changes: &Changes,
) -> Result<(), Error> {
    create_dir_all(vfs, txn).map_err(io_error(txn))?;
    for (index, entry) in manifest.entries.iter().enumerate() {
        let Some(Some(bytes)) = changes.get(&entry.path) else { continue };
        let staged = journal.staged(index);
        let mut file = vfs.create_file(&staged, bytes).map_err(io_error(&staged))?;
        crate::crashpoint!("stage.after_write");
        vfs.sync_file(&mut file).map_err(io_error(&staged))?;
        crate::crashpoint!("stage.after_fsync");
    }
    let path = journal.manifest();
    let mut file = vfs.create_file(&path, &manifest.to_bytes()).map_err(io_error(&path))?;
    vfs.sync_file(&mut file).map_err(io_error(&path))?;
    crate::crashpoint!("journal.manifest_synced");
    Ok(())
}

#[cfg(test)]
mod tests;
