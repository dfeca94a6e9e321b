//! Sources are append-only against history: every archive `HEAD` holds must still start
//! with its committed bytes. [`History::rewritten_sources`] finds the ones that do not
//! (changed in place or removed); `Workspace::repair_rewritten_sources` restores them.

use std::path::Path;

use super::History;
use crate::error::{Error, ErrorCode};

/// A committed source archive whose file no longer starts with its committed bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RewrittenSource {
    /// The archive, workspace-relative (`sources/…`).
    pub path: String,
    /// The bytes `HEAD` holds for it.
    pub committed: Vec<u8>,
    /// The bytes on disk now; `None` when the file is gone (or is no longer a regular file).
    pub current: Option<Vec<u8>>,
    /// The offset of the first byte that differs from the committed bytes (the length of
    /// the common prefix); 0 for a removed file.
    pub first_difference: usize,
}

impl History {
    /// Every archive under `sources/` in `HEAD`'s tree whose file on disk does not start
    /// with its committed bytes, in path order. Reads only; empty before the first commit.
    /// `GIT_UNAVAILABLE` when `HEAD`'s tree or a blob cannot be read, `TXN_IO` when a
    /// file cannot be read.
    pub fn rewritten_sources(&self) -> Result<Vec<RewrittenSource>, Error> {
        let unavailable = |why: String| Error::new(ErrorCode::GitUnavailable, why);
        let Some(head) = self.head_id().map_err(unavailable)? else { return Ok(Vec::new()) };
        let tree = self.commit_tree(head).map_err(|e| unavailable(format!("cannot read the HEAD commit: {e}")))?;
        let blobs = self.blobs(tree).map_err(|e| unavailable(format!("cannot read the HEAD tree: {e}")))?;
        let mut rewritten = Vec::new();
        for (path, id) in blobs.into_iter().filter(|(path, _)| path.starts_with("sources/")) {
            let committed = self
                .repo
                .find_blob(id)
                .map_err(|e| unavailable(format!("cannot read the committed bytes of {path}: {e}")))?
                .data
                .clone();
            let current = read_regular(&self.root.join(&path)).map_err(|e| Error::from(e).with_path(path.as_str()))?;
            let first_difference = match &current {
                Some(bytes) if bytes.starts_with(&committed) => continue,
                Some(bytes) => bytes.iter().zip(&committed).take_while(|(a, b)| a == b).count(),
                None => 0,
            };
            rewritten.push(RewrittenSource { path, committed, current, first_difference });
        }
        Ok(rewritten)
    }
}

/// The bytes of a regular file (not followed through a symlink); `None` when absent.
fn read_regular(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_file() => std::fs::read(path).map(Some),
        Ok(_) => Ok(None),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}
