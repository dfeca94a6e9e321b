//! The crash-safe install: a redo journal in `<runtime-dir>/txn/<id>/` whose commit point
//! is the rename of its manifest to `COMMITTED` (docs/durability.md has the numbered
//! order, every crash point and what recovery sees).
//!
//! [`install`] takes whole-file changes (new bytes, or `None` to delete) for any memory
//! path plus `<runtime-dir>/runtime.json`; [`recover`] rolls a committed journal forward,
//! deletes uncommitted ones and restores a reference `-block-backup` directory. Both
//! must run under the write lock; both are idempotent, including after a crash of
//! their own.

mod apply;
mod block_backup;
mod manifest;

use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use self::apply::{Phase, damaged, finish, roll_forward};
use self::manifest::{Entry, Manifest, sha256, staged_name};
use crate::derive::CORE_REPORT_FILE;
use crate::error::{Error, ErrorCode};
use crate::revision::{RUNTIME_STATE_FILE, is_internal_path};
use crate::vfs::{FileKind, Vfs, create_dir_all, kind_of, remove_tree};

pub use self::block_backup::BackupRecovery;

/// Whole-file changes keyed by workspace-relative `/`-separated path: the new bytes, or
/// `None` to delete the file.
pub type Changes = BTreeMap<String, Option<Vec<u8>>>;

/// The journal directory inside the runtime directory.
pub const TXN_DIR: &str = "txn";

/// Where recovery moves bytes it must not delete, inside the runtime directory.
pub const QUARANTINE_DIR: &str = "quarantine";

/// The manifest's name while the transaction is being staged.
const MANIFEST: &str = "MANIFEST";

/// The manifest's name once the transaction is committed.
const COMMITTED: &str = "COMMITTED";

/// What an install did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Installed {
    /// The journal id, or `None` when no file changed (nothing was written at all).
    pub journal: Option<String>,
    /// The paths whose bytes changed (created, replaced or deleted), in path order.
    pub changed: Vec<String>,
}

/// What recovery found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Recovery {
    /// Committed journals rolled forward (at most one in practice).
    pub rolled_forward: Vec<String>,
    /// Uncommitted journals deleted.
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
    let journal = txn.join(&id);

    let staged = stage(vfs, &txn, &journal, &manifest, changes)
        .and_then(|()| precommit())
        .and_then(|()| vfs.rename(&journal.join(MANIFEST), &journal.join(COMMITTED)).map_err(io_error(&journal)));
    if let Err(error) = staged {
        // Nothing outside the journal changed: discard it. If that fails too, the next
        // recovery deletes it (it has no COMMITTED).
        let _ = remove_tree(vfs, &journal);
        return Err(committed(error, false));
    }
    crate::crashpoint!("journal.committed");

    vfs.sync_dir(&journal)
        .map_err(io_error(&journal))
        .and_then(|()| roll_forward(vfs, runtime_dir, &journal, &manifest, Phase::Install))
        .and_then(|()| finish(vfs, &journal))
        .map_err(|error| committed(error, true))?;
    Ok(Installed { journal: Some(id), changed: manifest.entries.into_iter().map(|entry| entry.path).collect() })
}

/// Roll forward a committed journal, delete uncommitted ones, and restore a reference
/// `<runtime-dir>-block-backup` directory. Call under the write lock.
pub fn recover<V: Vfs + ?Sized>(vfs: &V, runtime_dir: &str) -> Result<Recovery, Error> {
    crate::crashpoint!("recovery.start");
    let mut report = Recovery { backup: block_backup::restore(vfs, runtime_dir)?, ..Recovery::default() };
    let txn = Path::new(runtime_dir).join(TXN_DIR);
    if kind_of(vfs, &txn).map_err(io_error(&txn))? != Some(FileKind::Dir) {
        return Ok(report);
    }
    let mut ids = vfs.list_dir(&txn).map_err(io_error(&txn))?;
    ids.sort();
    for id in &ids {
        let journal = txn.join(id);
        let committed = journal.join(COMMITTED);
        if kind_of(vfs, &committed).map_err(io_error(&committed))? != Some(FileKind::File) {
            continue;
        }
        let bytes = vfs.read(&committed).map_err(io_error(&committed))?;
        let manifest = Manifest::parse(&bytes).ok_or_else(|| damaged(&journal, "the manifest does not parse"))?;
        for entry in &manifest.entries {
            check_install_path(&entry.path, runtime_dir).map_err(|_| damaged(&journal, "a path is not installable"))?;
        }
        // The process that renamed the manifest may have died before syncing: make the
        // commit durable before installing anything, or a power loss during recovery
        // could keep installed files and lose the COMMITTED that explains them.
        vfs.sync_dir(&journal).map_err(io_error(&journal))?;
        roll_forward(vfs, runtime_dir, &journal, &manifest, Phase::Recovery)?;
        finish(vfs, &journal)?;
        report.rolled_forward.push(id.to_string_lossy().into_owned());
    }
    for id in &ids {
        let journal = txn.join(id);
        if kind_of(vfs, &journal).map_err(io_error(&journal))?.is_some() {
            remove_tree(vfs, &journal).map_err(io_error(&journal))?;
            report.discarded.push(id.to_string_lossy().into_owned());
        }
    }
    if !report.discarded.is_empty() {
        vfs.sync_dir(&txn).map_err(io_error(&txn))?;
    }
    Ok(report)
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
/// state file or the `core.md` render report of the runtime directory in use.
fn check_install_path(path: &str, runtime_dir: &str) -> Result<(), Error> {
    let plain = !path.is_empty()
        && !path.contains('\0')
        && path.split('/').all(|component| !component.is_empty() && component != "." && component != "..");
    if !plain {
        return Err(Error::new(ErrorCode::PathOutsideWorkspace, "not a plain workspace-relative path").with_path(path));
    }
    let state_file = format!("{runtime_dir}/{RUNTIME_STATE_FILE}");
    let core_report = format!("{runtime_dir}/{CORE_REPORT_FILE}");
    if is_internal_path(path) && path != state_file && path != core_report {
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

/// Steps 1–3 of the protocol: the journal directory, each staged file written and
/// synced, the manifest written and synced, then the journal's directory entries synced.
fn stage<V: Vfs + ?Sized>(
    vfs: &V,
    txn: &Path,
    journal: &Path,
    manifest: &Manifest,
    changes: &Changes,
) -> Result<(), Error> {
    create_dir_all(vfs, txn).map_err(io_error(txn))?;
    vfs.create_dir(journal).map_err(io_error(journal))?;
    for (index, entry) in manifest.entries.iter().enumerate() {
        let Some(Some(bytes)) = changes.get(&entry.path) else { continue };
        let staged = journal.join(staged_name(index));
        let mut file = vfs.create_file(&staged, bytes).map_err(io_error(&staged))?;
        crate::crashpoint!("stage.after_write");
        vfs.sync_file(&mut file).map_err(io_error(&staged))?;
        crate::crashpoint!("stage.after_fsync");
    }
    let path = journal.join(MANIFEST);
    let mut file = vfs.create_file(&path, &manifest.to_bytes()).map_err(io_error(&path))?;
    vfs.sync_file(&mut file).map_err(io_error(&path))?;
    // The staged names and the manifest's name must be durable before the commit point,
    // or a surviving COMMITTED could name files the disk lost; so must the journal's own
    // name in `txn/`.
    vfs.sync_dir(journal).map_err(io_error(journal))?;
    vfs.sync_dir(txn).map_err(io_error(txn))?;
    crate::crashpoint!("journal.manifest_synced");
    Ok(())
}

#[cfg(test)]
mod tests;
