//! The one way a read of the warm backend gets what it reads: refreshed by a walk when
//! the watcher cannot vouch that nothing changed since the last one, reused otherwise.

use std::collections::HashMap;
use std::ops::Deref;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use scriptorium_retrieval::Index;
use scriptorium_transaction::{FileClass, Listing, Scope as ListingScope};

use super::watch::Scope;
use super::{Warm, lock};
use crate::error::{Error, ErrorCode};

/// The retrieval index with the generation it was last refreshed at.
pub(crate) struct Indexed {
    index: Index,
    /// `None`: refresh before the next query.
    at: Option<u64>,
}

impl Indexed {
    pub(crate) fn new(index: Index) -> Indexed {
        Indexed { index, at: None }
    }
}

/// The index, fresh, locked for one query.
pub(crate) struct FreshIndex<'a>(MutexGuard<'a, Indexed>);

impl Deref for FreshIndex<'_> {
    type Target = Index;

    fn deref(&self) -> &Index {
        &self.0.index
    }
}

/// A value computed from the workspace, kept with the generation it was computed at.
pub(crate) struct Memo<T>(Mutex<Option<(u64, Arc<T>)>>);

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Memo(Mutex::new(None))
    }
}

impl<T> Memo<T> {
    /// The kept value when `generation` vouches for it, else `compute`'s (kept when it vouches).
    fn get(&self, generation: Option<u64>, compute: impl FnOnce() -> Result<T, Error>) -> Result<Arc<T>, Error> {
        if let Some(generation) = generation
            && let Some((at, value)) = lock(&self.0).as_ref()
            && *at == generation
        {
            return Ok(Arc::clone(value));
        }
        let value = Arc::new(compute()?);
        if let Some(generation) = generation {
            *lock(&self.0) = Some((generation, Arc::clone(&value)));
        }
        Ok(value)
    }
}

/// The visible files of the workspace's listing, in its order, with what readers derived
/// from them at the same generation.
pub(crate) struct Listed {
    /// Workspace-relative path and class of every visible file.
    pub(crate) files: Vec<(String, FileClass)>,
    /// Per topic path, what a tool counted in it (`memory_browse`'s blocks).
    blocks: Mutex<HashMap<String, usize>>,
}

impl Listed {
    /// `count(path)`, computed once per path and listing.
    pub(crate) fn blocks(&self, path: &str, count: impl FnOnce() -> usize) -> usize {
        if let Some(known) = lock(&self.blocks).get(path) {
            return *known;
        }
        let counted = count();
        lock(&self.blocks).insert(path.to_owned(), counted);
        counted
    }
}

/// What the file-derived part of `memory_status` renders, kept per generation.
pub(crate) type StatusCounts = Vec<(&'static str, String)>;

/// The caches the read tools share.
#[derive(Default)]
pub(crate) struct Memos {
    listed: Memo<Listed>,
    revision: Memo<String>,
    status: Memo<StatusCounts>,
}

impl Warm {
    /// The retrieval index, refreshed first unless the watcher vouches that no visible
    /// file changed since the last refresh. The generation is read before the walk, so an
    /// event during it makes the next query walk again.
    pub(crate) fn fresh_index(&self, root: &Path) -> Result<FreshIndex<'_>, Error> {
        let mut indexed = lock(&self.index);
        let generation = self.watch.generation(Scope::Visible);
        if generation.is_none() || indexed.at != generation {
            // A failed refresh vouches for nothing.
            indexed.at = None;
            indexed.index.refresh(root)?;
            indexed.at = generation;
        }
        Ok(FreshIndex(indexed))
    }

    /// The visible files, listed again unless the watcher vouches for the last listing.
    pub(crate) fn listed(&self, root: &Path) -> Result<Arc<Listed>, Error> {
        self.memos.listed.get(self.watch.generation(Scope::Visible), || {
            let listing = Listing::read_names(root, ListingScope::Root)
                .complete()
                .map_err(|error| Error::new(ErrorCode::Io, format!("cannot list the workspace: {error}")))?;
            let files = listing
                .files
                .iter()
                .filter(|file| file.class().is_visible())
                .filter_map(|file| Some((file.path()?.to_owned(), file.class())))
                .collect();
            Ok(Listed { files, blocks: Mutex::new(HashMap::new()) })
        })
    }

    /// The workspace's revision, hashed again (by the workspace's own stat-checked cache)
    /// unless the watcher vouches that no counted file changed.
    pub(crate) fn revision(&self) -> Result<Arc<String>, Error> {
        self.memos.revision.get(self.watch.generation(Scope::Tree), || Ok(self.runtime.workspace().revision()?))
    }

    /// `compute`'s counts of the visible files, reused while the watcher vouches for them.
    pub(crate) fn status_counts(
        &self,
        compute: impl FnOnce() -> Result<StatusCounts, Error>,
    ) -> Result<Arc<StatusCounts>, Error> {
        self.memos.status.get(self.watch.generation(Scope::Visible), compute)
    }
}
