//! Read-only access to the files an append plan depends on, so that planning stays
//! free of I/O: the transaction layer implements [`ArchiveTree`] on the real file
//! system, tests and tools use [`MemoryTree`].

use std::collections::{BTreeMap, BTreeSet};
use std::io;

use crate::write::AppendPlan;

/// The workspace tree as the archive writer sees it. Paths are workspace-relative,
/// `/`-separated, without a leading `/`; the empty path is the workspace root.
///
/// Implementations own the file-system policy: a real tree must refuse (return an
/// error for) any path that leaves `sources/` through a symbolic link.
pub trait ArchiveTree {
    /// The bytes of the file at `path`, or `Ok(None)` when there is none.
    fn read_file(&self, path: &str) -> io::Result<Option<Vec<u8>>>;

    /// The names of the entries of the directory at `path` (any order), or `Ok(None)`
    /// when there is no such directory.
    fn list_dir(&self, path: &str) -> io::Result<Option<Vec<String>>>;
}

/// An in-memory tree of files keyed by workspace-relative path; directories exist
/// implicitly as the prefixes of file paths.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryTree {
    files: BTreeMap<String, Vec<u8>>,
}

impl MemoryTree {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// Put a file at `path`, returning the bytes it replaced.
    pub fn insert(&mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Option<Vec<u8>> {
        self.files.insert(path.into(), bytes.into())
    }

    /// Remove the file at `path`, returning its bytes.
    pub fn remove(&mut self, path: &str) -> Option<Vec<u8>> {
        self.files.remove(path)
    }

    /// The bytes of the file at `path`.
    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(Vec::as_slice)
    }

    /// Every file, in path order.
    pub fn files(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.files.iter().map(|(path, bytes)| (path.as_str(), bytes.as_slice()))
    }

    /// The number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether the tree holds no file.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Install every file of `plan`, as a committed transaction would.
    pub fn apply(&mut self, plan: &AppendPlan) {
        for file in &plan.files {
            self.files.insert(file.path.clone(), file.bytes.clone());
        }
    }
}

impl ArchiveTree for MemoryTree {
    fn read_file(&self, path: &str) -> io::Result<Option<Vec<u8>>> {
        Ok(self.files.get(path).cloned())
    }

    fn list_dir(&self, path: &str) -> io::Result<Option<Vec<String>>> {
        let prefix = if path.is_empty() { String::new() } else { format!("{path}/") };
        let names: BTreeSet<&str> = self
            .files
            .range(prefix.clone()..)
            .map(|(key, _)| key)
            .take_while(|key| key.starts_with(&prefix))
            .filter_map(|key| key.get(prefix.len()..)?.split('/').next())
            .filter(|name| !name.is_empty())
            .collect();
        if names.is_empty() && !path.is_empty() {
            return Ok(None);
        }
        Ok(Some(names.into_iter().map(str::to_owned).collect()))
    }
}
