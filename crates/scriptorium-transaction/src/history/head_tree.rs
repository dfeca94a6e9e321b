//! `HEAD`'s tree, read once per commit: the raw bytes of every tree object under the
//! memory paths, keyed by directory, and every blob, keyed by file. A commit reuses a
//! subtree whose bytes it would write again unchanged (the same bytes are the same
//! object, so the id is exact), which spares hashing and looking up every unchanged
//! directory; the blobs feed the stat cache.

use std::collections::{BTreeMap, HashMap};

use gix::ObjectId;

use super::HISTORY_PATHS;

/// The trees and blobs of one commit's tree under the memory paths.
#[derive(Default)]
pub(super) struct HeadTree {
    /// Directory path (`""` for the root, else `topics/people`) → (tree id, raw bytes).
    trees: HashMap<String, (ObjectId, Vec<u8>)>,
    /// Workspace-relative file path → blob id.
    blobs: BTreeMap<String, ObjectId>,
}

impl HeadTree {
    /// Read `tree` and every tree below it that lies in the memory paths.
    pub(super) fn read(repo: &gix::Repository, tree: ObjectId) -> Result<HeadTree, gix::Error> {
        let mut head = HeadTree::default();
        let mut pending = vec![(String::new(), tree)];
        while let Some((prefix, id)) = pending.pop() {
            let object = repo.find_tree(id)?;
            for entry in object.decode()?.entries {
                let Ok(name) = std::str::from_utf8(entry.filename) else { continue };
                if prefix.is_empty() && !HISTORY_PATHS.contains(&name) {
                    continue;
                }
                let path = if prefix.is_empty() { name.to_owned() } else { format!("{prefix}/{name}") };
                if entry.mode.is_tree() {
                    pending.push((path, entry.oid.to_owned()));
                } else if entry.mode.is_blob() {
                    head.blobs.insert(path, entry.oid.to_owned());
                }
            }
            head.trees.insert(prefix, (id, object.detach().data));
        }
        Ok(head)
    }

    /// Every blob: workspace-relative path → id.
    pub(super) fn blobs(&self) -> &BTreeMap<String, ObjectId> {
        &self.blobs
    }

    /// [`HeadTree::blobs`], owned.
    pub(super) fn into_blobs(self) -> BTreeMap<String, ObjectId> {
        self.blobs
    }

    /// The id and raw bytes of the tree at directory `path` (`""` for the root).
    pub(super) fn tree(&self, path: &str) -> Option<(ObjectId, &[u8])> {
        self.trees.get(path).map(|(id, raw)| (*id, raw.as_slice()))
    }
}
