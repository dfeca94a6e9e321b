//! Recovery of the Python reference's interrupted install (spec 01 §1.6, 04 §C2).
//!
//! The reference moves each committed item into `<runtime-dir>-block-backup/<same path>`,
//! moves each staged item into place, then deletes the backup; nothing is synced and a
//! crash leaves the backup behind. Found on open (under the lock), it is resolved so:
//!
//! - **Interrupted** (some *key* item — `sources`, `topics`, `<runtime-dir>/runtime.json`
//!   — sits in the backup with nothing in its place): roll back. Phase 1 moves every
//!   item that has a backup and is occupied (a newly installed one) into quarantine, and
//!   syncs; phase 2 moves every backed-up item back, and syncs. Phase 1 completes before
//!   phase 2 starts, so a crash at any point is recognised as interrupted again and the
//!   rerun finishes the same rollback.
//! - **Completed** (every key item in place: the crash hit the backup's deletion): keep
//!   the installed state.
//!
//! Either way, what remains of the backup is moved to
//! `<runtime-dir>/quarantine/block-backup-<id>/`, never deleted. Only key items decide,
//! because derived items (`core.md`, `timeline/`, …) may legitimately vanish in an
//! install and would make a completed install look interrupted.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::{QUARANTINE_DIR, io_error};
use crate::error::Error;
use crate::revision::RUNTIME_STATE_FILE;
use crate::vfs::{FileKind, Vfs, create_dir_all, kind_of};

/// The items the reference installs, in its order (spec 01 §1.6), before the runtime
/// state file, which is appended with the runtime directory in use.
const ITEMS: &[&str] =
    &["sources", "topics", "timeline", "recent_events.jsonl", "commitments.jsonl", "relations.json", "core.md"];

/// What recovery did with a reference backup directory.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BackupRecovery {
    /// Whether the interrupted install was rolled back (otherwise it had completed).
    pub rolled_back: bool,
    /// The items moved back from the backup, key items last.
    pub restored: Vec<String>,
    /// Where the rest of the backup (and any rolled-back new items) now lives.
    pub quarantine: String,
}

/// Resolve `<runtime_dir>-block-backup` if it exists.
pub(super) fn restore<V: Vfs + ?Sized>(vfs: &V, runtime_dir: &str) -> Result<Option<BackupRecovery>, Error> {
    let backup = PathBuf::from(format!("{runtime_dir}-block-backup"));
    if kind_of(vfs, &backup).map_err(io_error(&backup))? != Some(FileKind::Dir) {
        return Ok(None);
    }
    let state_file = format!("{runtime_dir}/{RUNTIME_STATE_FILE}");
    let items: Vec<&str> = ITEMS.iter().copied().chain([state_file.as_str()]).collect();
    let mut backed_up = Vec::new();
    for item in &items {
        if kind_of(vfs, &backup.join(item)).map_err(io_error(&backup))?.is_some() {
            backed_up.push(*item);
        }
    }
    sync_earlier_attempts(vfs, runtime_dir, &items)?;
    let is_key = |item: &str| matches!(item, "sources" | "topics") || item == state_file;
    let mut interrupted = false;
    for item in &backed_up {
        if is_key(item) && kind_of(vfs, Path::new(item)).map_err(io_error(Path::new(item)))?.is_none() {
            interrupted = true;
        }
    }

    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_nanos());
    let quarantine = Path::new(runtime_dir).join(QUARANTINE_DIR).join(format!("block-backup-{nanos:024x}"));
    let mut restored = Vec::new();
    if interrupted {
        let mut moved_aside = Vec::new();
        for item in &backed_up {
            let place = Path::new(item);
            if kind_of(vfs, place).map_err(io_error(place))?.is_some() {
                let aside = quarantine.join("installed").join(item);
                move_to(vfs, place, &aside)?;
                moved_aside.push(aside);
                crate::crashpoint!("backup.quarantined");
            }
        }
        for aside in &moved_aside {
            sync_parent(vfs, aside)?;
        }
        sync_parents(vfs, &backed_up)?;
        // Other items first, synced, then the key items: a key item must never be
        // durable in place while another item is still only in the backup, or a crash
        // would make the rollback look finished.
        for key in [false, true] {
            for item in backed_up.iter().filter(|item| is_key(item) == key) {
                move_to(vfs, &backup.join(item), Path::new(item))?;
                restored.push((*item).to_owned());
                crate::crashpoint!("backup.restored");
            }
            sync_parents(vfs, &backed_up)?;
        }
    }
    let rest = quarantine.join("backup");
    move_to(vfs, &backup, &rest)?;
    sync_parent(vfs, &rest)?;
    vfs.sync_dir(Path::new("")).map_err(io_error(Path::new("")))?;
    Ok(Some(BackupRecovery {
        rolled_back: interrupted,
        restored,
        quarantine: quarantine.to_string_lossy().into_owned(),
    }))
}

/// An earlier attempt of this recovery may have moved items and died before syncing;
/// the decision below reads the live state, so make that state durable first: the
/// directories holding items in place, and the destinations of earlier phase-1 moves
/// (`<runtime-dir>/quarantine/block-backup-*/installed[/<runtime-dir>]`).
fn sync_earlier_attempts<V: Vfs + ?Sized>(vfs: &V, runtime_dir: &str, items: &[&str]) -> Result<(), Error> {
    let quarantine = Path::new(runtime_dir).join(QUARANTINE_DIR);
    if kind_of(vfs, &quarantine).map_err(io_error(&quarantine))? == Some(FileKind::Dir) {
        for name in vfs.list_dir(&quarantine).map_err(io_error(&quarantine))? {
            if !name.to_string_lossy().starts_with("block-backup-") {
                continue;
            }
            let attempt = quarantine.join(name);
            for dir in [attempt.clone(), attempt.join("installed"), attempt.join("installed").join(runtime_dir)] {
                if kind_of(vfs, &dir).map_err(io_error(&dir))? == Some(FileKind::Dir) {
                    vfs.sync_dir(&dir).map_err(io_error(&dir))?;
                }
            }
        }
    }
    sync_parents(vfs, items)
}

/// Rename `from` to `to`, creating the parents of `to`.
fn move_to<V: Vfs + ?Sized>(vfs: &V, from: &Path, to: &Path) -> Result<(), Error> {
    let parent = to.parent().unwrap_or_else(|| Path::new(""));
    create_dir_all(vfs, parent).map_err(io_error(parent))?;
    vfs.rename(from, to).map_err(io_error(from))
}

fn sync_parent<V: Vfs + ?Sized>(vfs: &V, path: &Path) -> Result<(), Error> {
    let parent = path.parent().unwrap_or_else(|| Path::new(""));
    vfs.sync_dir(parent).map_err(io_error(parent))
}

/// Sync the directories that hold the items in place (the root, and the runtime
/// directory for the state file).
fn sync_parents<V: Vfs + ?Sized>(vfs: &V, items: &[&str]) -> Result<(), Error> {
    let mut parents: Vec<&Path> = items.iter().map(|item| Path::new(*item).parent().unwrap_or(Path::new(""))).collect();
    parents.sort();
    parents.dedup();
    for parent in parents {
        if kind_of(vfs, parent).map_err(io_error(parent))? == Some(FileKind::Dir) {
            vfs.sync_dir(parent).map_err(io_error(parent))?;
        }
    }
    Ok(())
}
