//! Where a journal's files live.
//!
//! Installs write the flat layout: `txn/<id>.<k>.staged` and `txn/<id>.MANIFEST`, renamed
//! to `txn/<id>.COMMITTED` at the commit point, all in one directory so that one sync of
//! `txn/` makes the staged names, the manifest and the commit rename durable together.
//! Workspaces may still hold a journal of the older layout, a directory `txn/<id>/` with
//! `<k>.staged` and `COMMITTED`: recovery reads both.

use std::path::{Path, PathBuf};

use super::manifest::staged_name;

/// The manifest's name while the transaction is being staged.
const MANIFEST: &str = "MANIFEST";

/// The manifest's name once the transaction is committed.
const COMMITTED: &str = "COMMITTED";

/// How a journal's files are named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Layout {
    /// `txn/<id>.<name>`: what installs write.
    Flat,
    /// `txn/<id>/<name>`: written by older versions, only recovered.
    Directory,
}

/// One journal: its id and where its files are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Journal {
    txn: PathBuf,
    id: String,
    layout: Layout,
}

impl Journal {
    pub(super) fn new(txn: &Path, id: &str, layout: Layout) -> Journal {
        Journal { txn: txn.to_path_buf(), id: id.to_owned(), layout }
    }

    pub(super) fn id(&self) -> &str {
        &self.id
    }

    pub(super) fn layout(&self) -> Layout {
        self.layout
    }

    /// The directory whose entries name the journal's files (the one to sync).
    pub(super) fn dir(&self) -> PathBuf {
        match self.layout {
            Layout::Flat => self.txn.clone(),
            Layout::Directory => self.txn.join(&self.id),
        }
    }

    fn file(&self, name: &str) -> PathBuf {
        match self.layout {
            Layout::Flat => self.txn.join(format!("{}.{name}", self.id)),
            Layout::Directory => self.txn.join(&self.id).join(name),
        }
    }

    /// The staged copy of entry `index`.
    pub(super) fn staged(&self, index: usize) -> PathBuf {
        self.file(&staged_name(index))
    }

    /// The manifest before the commit point.
    pub(super) fn manifest(&self) -> PathBuf {
        self.file(MANIFEST)
    }

    /// The manifest after the commit point.
    pub(super) fn committed(&self) -> PathBuf {
        self.file(COMMITTED)
    }
}

/// The journal id a file name of `txn/` belongs to in the flat layout (ids hold no dot).
pub(super) fn flat_id(name: &str) -> &str {
    name.split_once('.').map_or(name, |(id, _)| id)
}

/// The id of a committed flat journal whose manifest is the file `name` of `txn/`.
pub(super) fn committed_flat_id(name: &str) -> Option<&str> {
    name.strip_suffix(COMMITTED)?.strip_suffix('.').filter(|id| !id.is_empty() && !id.contains('.'))
}

/// The name of the committed manifest inside an old-layout journal directory.
pub(super) const DIRECTORY_COMMITTED: &str = COMMITTED;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_layouts_name_their_files() {
        let txn = Path::new(".scriptorium/txn");
        let flat = Journal::new(txn, "00ab-01", Layout::Flat);
        assert_eq!(flat.staged(3), Path::new(".scriptorium/txn/00ab-01.3.staged"));
        assert_eq!(flat.committed(), Path::new(".scriptorium/txn/00ab-01.COMMITTED"));
        assert_eq!(flat.dir(), txn);
        let old = Journal::new(txn, "00ab-01", Layout::Directory);
        assert_eq!(old.manifest(), Path::new(".scriptorium/txn/00ab-01/MANIFEST"));
        assert_eq!(old.dir(), Path::new(".scriptorium/txn/00ab-01"));
        assert_eq!(committed_flat_id("00ab-01.COMMITTED"), Some("00ab-01"));
        assert_eq!(committed_flat_id("00ab-01.MANIFEST"), None);
        assert_eq!(committed_flat_id(".COMMITTED"), None);
        assert_eq!(committed_flat_id("a.b.COMMITTED"), None);
        assert_eq!(flat_id("00ab-01.0.staged"), "00ab-01");
        assert_eq!(flat_id("stray"), "stray");
    }
}
