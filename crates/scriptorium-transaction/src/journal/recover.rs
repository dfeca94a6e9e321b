//! Recovery: restore a reference `-block-backup`, roll committed journals forward (or
//! back, when their commit never became durable), and delete everything else in `txn/`.
//!
//! A flat journal's commit is durable only once the sync of `txn/` after the commit
//! rename returned; until then a power loss may keep `<id>.COMMITTED` and lose some staged
//! names. So a committed flat journal is rolled forward when every staged file is still
//! there, or when some entry whose staged file is gone has its new bytes at its target
//! (a rename into place happened, which only follows that sync). Otherwise no target was
//! touched and the journal is deleted: the before-state stands.

use std::collections::BTreeSet;
use std::path::Path;

use super::apply::{Phase, damaged, retire, roll_forward};
use super::layout::{DIRECTORY_COMMITTED, Journal, Layout, committed_flat_id, flat_id};
use super::manifest::{Manifest, sha256};
use super::{Recovery, TXN_DIR, block_backup, check_install_path, io_error};
use crate::error::Error;
use crate::vfs::{FileKind, Vfs, kind_of, remove_tree};

/// Roll forward committed journals, delete uncommitted ones, and restore a reference
/// `<runtime-dir>-block-backup` directory. Call under the write lock; idempotent,
/// including after a crash or power loss of its own.
pub fn recover<V: Vfs + ?Sized>(vfs: &V, runtime_dir: &str) -> Result<Recovery, Error> {
    crate::crashpoint!("recovery.start");
    let mut report = Recovery { backup: block_backup::restore(vfs, runtime_dir)?, ..Recovery::default() };
    let txn = Path::new(runtime_dir).join(TXN_DIR);
    if kind_of(vfs, &txn).map_err(io_error(&txn))? != Some(FileKind::Dir) {
        return Ok(report);
    }
    let mut rolled_back = BTreeSet::new();
    for journal in committed_journals(vfs, &txn)? {
        let manifest = read_manifest(vfs, runtime_dir, &journal)?;
        let forward = match journal.layout() {
            // The old layout synced every staged name before its commit point.
            Layout::Directory => true,
            Layout::Flat => commit_was_durable(vfs, &journal, &manifest)?,
        };
        if forward {
            // The process that renamed the manifest may have died before syncing: make
            // the commit durable before installing anything, or a power loss during
            // recovery could keep installed files and lose the COMMITTED that explains
            // them.
            let dir = journal.dir();
            vfs.sync_dir(&dir).map_err(io_error(&dir))?;
            roll_forward(vfs, runtime_dir, &journal, &manifest, Phase::Recovery)?;
            retire(vfs, &journal, true)?;
            report.rolled_forward.push(journal.id().to_owned());
        } else {
            // Un-commit first: whatever of the rest a crash leaves is an uncommitted
            // journal, deleted below or by the next recovery.
            let committed = journal.committed();
            vfs.remove_file(&committed).map_err(io_error(&committed))?;
            rolled_back.insert(journal.id().to_owned());
        }
    }
    discard_leftovers(vfs, &txn, rolled_back, &mut report)?;
    Ok(report)
}

/// Every committed journal in `txn/`, of either layout, oldest first (ids sort by time).
fn committed_journals<V: Vfs + ?Sized>(vfs: &V, txn: &Path) -> Result<Vec<Journal>, Error> {
    let mut names: Vec<String> =
        vfs.list_dir(txn).map_err(io_error(txn))?.into_iter().filter_map(|name| name.into_string().ok()).collect();
    names.sort();
    let mut journals = Vec::new();
    for name in &names {
        let path = txn.join(name);
        match kind_of(vfs, &path).map_err(io_error(&path))? {
            Some(FileKind::Dir) => {
                let committed = path.join(DIRECTORY_COMMITTED);
                if kind_of(vfs, &committed).map_err(io_error(&committed))? == Some(FileKind::File) {
                    journals.push(Journal::new(txn, name, Layout::Directory));
                }
            }
            Some(FileKind::File) => {
                if let Some(id) = committed_flat_id(name) {
                    journals.push(Journal::new(txn, id, Layout::Flat));
                }
            }
            _ => {}
        }
    }
    journals.sort_by(|a, b| a.id().cmp(b.id()));
    Ok(journals)
}

/// The committed manifest of `journal`, every path checked installable.
fn read_manifest<V: Vfs + ?Sized>(vfs: &V, runtime_dir: &str, journal: &Journal) -> Result<Manifest, Error> {
    let committed = journal.committed();
    let bytes = vfs.read(&committed).map_err(io_error(&committed))?;
    let manifest = Manifest::parse(&bytes).ok_or_else(|| damaged(journal, "the manifest does not parse"))?;
    for entry in &manifest.entries {
        check_install_path(&entry.path, runtime_dir).map_err(|_| damaged(journal, "a path is not installable"))?;
    }
    Ok(manifest)
}

/// Whether a committed flat journal's commit reached the disk whole: every staged file
/// is present, or some entry was renamed into place (its staged file is gone and its
/// target holds the new bytes). A staged file gone with no target installed means the
/// sync of `txn/` never returned, so no target was touched.
///
/// A journal that was retired and came back after a power loss (its unlink not yet
/// synced) has every staged file gone; it rolls forward if any target still holds its new
/// bytes (nothing left to do) and is deleted otherwise: either way no target is written.
fn commit_was_durable<V: Vfs + ?Sized>(vfs: &V, journal: &Journal, manifest: &Manifest) -> Result<bool, Error> {
    let mut missing = false;
    for (index, entry) in manifest.entries.iter().enumerate() {
        let Some(new) = entry.new else { continue };
        let staged = journal.staged(index);
        if kind_of(vfs, &staged).map_err(io_error(&staged))? == Some(FileKind::File) {
            continue;
        }
        missing = true;
        let dest = Path::new(&entry.path);
        if kind_of(vfs, dest).map_err(io_error(dest))? == Some(FileKind::File)
            && sha256(&vfs.read(dest).map_err(io_error(dest))?) == new
        {
            return Ok(true);
        }
    }
    Ok(!missing)
}

/// Delete everything left in `txn/` (uncommitted journals of either layout, stray files),
/// then sync `txn/` so that the deletions, and those of the journals in `discarded`
/// (rolled back), hold.
fn discard_leftovers<V: Vfs + ?Sized>(
    vfs: &V,
    txn: &Path,
    mut discarded: BTreeSet<String>,
    report: &mut Recovery,
) -> Result<(), Error> {
    let mut names = vfs.list_dir(txn).map_err(io_error(txn))?;
    names.sort();
    for name in &names {
        let path = txn.join(name);
        remove_tree(vfs, &path).map_err(io_error(&path))?;
        discarded.insert(flat_id(&name.to_string_lossy()).to_owned());
    }
    if discarded.is_empty() {
        return Ok(());
    }
    report.discarded.extend(discarded.into_iter().filter(|id| !report.rolled_forward.contains(id)));
    vfs.sync_dir(txn).map_err(io_error(txn))
}
