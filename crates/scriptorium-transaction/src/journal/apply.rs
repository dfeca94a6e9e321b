//! Rolling a committed journal forward: the second half of an install and the whole of
//! recovery, written once so that both do exactly the same idempotent steps.
//!
//! For each entry: if its staged copy is still in the journal, verify its hash and rename
//! it over the destination; if it is gone, it was installed already (recovery decides
//! before calling this whether a missing staged file means that). A delete removes the
//! destination only while it still holds the old bytes. Then every directory that holds
//! an entry is synced, and the journal is retired by unlinking its `COMMITTED`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::layout::{Journal, Layout};
use super::manifest::{Manifest, sha256};
use super::{QUARANTINE_DIR, check_parents, io_error};
use crate::error::{Error, ErrorCode};
use crate::vfs::{FileKind, Vfs, create_dir_all, kind_of, remove_tree};

/// Who is rolling forward: the crash-point names differ, and recovery first syncs every
/// ancestor (it cannot know which syncs the crashed process finished).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    Install,
    Recovery,
}

/// The error for a journal whose content contradicts its manifest.
pub(super) fn damaged(journal: &Journal, why: &str) -> Error {
    let journal = journal.committed();
    Error::new(ErrorCode::Io, format!("damaged transaction journal: {why}"))
        .with_path(journal.display().to_string())
        .with_detail("journal", journal.display().to_string())
        .with_detail("damaged", true)
}

/// Install every entry of `manifest` from `journal` and sync the directories holding them.
pub(super) fn roll_forward<V: Vfs + ?Sized>(
    vfs: &V,
    runtime_dir: &str,
    journal: &Journal,
    manifest: &Manifest,
    phase: Phase,
) -> Result<(), Error> {
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    if phase == Phase::Recovery {
        // The crashed process may have created a directory and died before syncing its
        // parent: make every existing ancestor durable before renaming into it, or a
        // power loss could keep the rename (emptying the journal slot) and lose the
        // directory that holds the file.
        let ancestors: BTreeSet<&Path> =
            manifest.entries.iter().flat_map(|entry| Path::new(&entry.path).ancestors().skip(1)).collect();
        for dir in ancestors {
            if kind_of(vfs, dir).map_err(io_error(dir))? == Some(FileKind::Dir) {
                vfs.sync_dir(dir).map_err(io_error(dir))?;
            }
        }
    }
    for (index, entry) in manifest.entries.iter().enumerate() {
        let dest = Path::new(&entry.path);
        let parent = dest.parent().unwrap_or_else(|| Path::new("")).to_path_buf();
        match entry.new {
            Some(new) => {
                let staged = journal.staged(index);
                if kind_of(vfs, &staged).map_err(io_error(&staged))? == Some(FileKind::File) {
                    let bytes = vfs.read(&staged).map_err(io_error(&staged))?;
                    if sha256(&bytes) != new {
                        return Err(damaged(journal, "a staged file does not match its manifest hash"));
                    }
                    check_parents(vfs, &entry.path)?;
                    create_dir_all(vfs, &parent).map_err(io_error(&parent))?;
                    set_aside_foreign(vfs, runtime_dir, journal, dest, entry.old, new)?;
                    vfs.rename(&staged, dest).map_err(io_error(dest))?;
                    match phase {
                        Phase::Install => crate::crashpoint!("install.after_rename"),
                        Phase::Recovery => crate::crashpoint!("recovery.after_rename"),
                    }
                }
            }
            None => {
                if kind_of(vfs, dest).map_err(io_error(dest))? == Some(FileKind::File)
                    && Some(sha256(&vfs.read(dest).map_err(io_error(dest))?)) == entry.old
                {
                    vfs.remove_file(dest).map_err(io_error(dest))?;
                    match phase {
                        Phase::Install => crate::crashpoint!("install.after_rename"),
                        Phase::Recovery => crate::crashpoint!("recovery.after_rename"),
                    }
                }
            }
        }
        dirs.insert(parent);
    }
    for dir in &dirs {
        if kind_of(vfs, dir).map_err(io_error(dir))? == Some(FileKind::Dir) {
            vfs.sync_dir(dir).map_err(io_error(dir))?;
        }
    }
    match phase {
        Phase::Install => crate::crashpoint!("install.synced"),
        Phase::Recovery => crate::crashpoint!("recovery.synced"),
    }
    Ok(())
}

/// Bytes at `dest` that are neither the transaction's old nor its new content were
/// written by someone outside the lock after the crash. The committed transaction still
/// wins (I1), but those bytes are moved to `<runtime-dir>/quarantine/…`, never lost.
fn set_aside_foreign<V: Vfs + ?Sized>(
    vfs: &V,
    runtime_dir: &str,
    journal: &Journal,
    dest: &Path,
    old: Option<[u8; 32]>,
    new: [u8; 32],
) -> Result<(), Error> {
    if kind_of(vfs, dest).map_err(io_error(dest))? != Some(FileKind::File) {
        return Ok(());
    }
    let current = sha256(&vfs.read(dest).map_err(io_error(dest))?);
    if Some(current) == old || current == new {
        return Ok(());
    }
    let target = Path::new(runtime_dir).join(QUARANTINE_DIR).join(format!("txn-{}", journal.id())).join(dest);
    let target_parent = target.parent().unwrap_or_else(|| Path::new(""));
    create_dir_all(vfs, target_parent).map_err(io_error(target_parent))?;
    vfs.rename(dest, &target).map_err(io_error(dest))?;
    vfs.sync_dir(target_parent).map_err(io_error(target_parent))
}

/// Retire a rolled-forward journal by unlinking its `COMMITTED`; every target is in place
/// and its directory synced, so nothing is left to redo.
///
/// Flat layout: the unlink is synced only when `sync` is set. An install leaves it
/// unsynced unless its manifest deletes a file: until the next sync of `txn/` (which every
/// install does before it touches a target) a power loss may bring the journal back, and
/// replaying it is harmless: every staged file is gone, so no target is written, and
/// recovery leaves a target whose bytes differ alone. A delete is the exception: a
/// resurrected journal could not tell a pending delete from a file recreated later with
/// the old bytes, so a manifest with a delete pays the sync.
///
/// Old directory layout: the unlink is synced, then the rest of the directory removed;
/// failing to remove the rest is harmless, since an uncommitted journal is deleted by
/// the next recovery.
pub(super) fn retire<V: Vfs + ?Sized>(vfs: &V, journal: &Journal, sync: bool) -> Result<(), Error> {
    let committed = journal.committed();
    vfs.remove_file(&committed).map_err(io_error(&committed))?;
    let dir = journal.dir();
    if sync || journal.layout() == Layout::Directory {
        vfs.sync_dir(&dir).map_err(io_error(&dir))?;
    }
    crate::crashpoint!("cleanup.uncommitted");
    if journal.layout() == Layout::Directory {
        let _ = remove_tree(vfs, &dir);
    }
    Ok(())
}
