//! The workspace's `sources/` on the real file system, as the
//! [`SourceLookup`] that topic citations resolve against.
//!
//! The topic layer does no I/O; this adapter reads an archive only when a citation
//! names it (the resolver then keeps its scan), and applies the file-system policy of
//! spec 01 §6.5: a target must reach a regular file under `sources/` *not via a
//! symlink*, so a link inside `sources/` can never make a citation resolve against a
//! file outside it.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use scriptorium_topic_markdown::SourceLookup;

/// Source archives read on demand from `<root>/sources/`.
#[derive(Debug)]
pub(crate) struct WorkspaceSources {
    root: PathBuf,
}

impl WorkspaceSources {
    /// The sources of the workspace at `root`.
    pub(crate) fn new(root: &Path) -> Self {
        WorkspaceSources { root: root.to_path_buf() }
    }
}

impl SourceLookup for WorkspaceSources {
    fn read_source(&self, path: &str) -> std::io::Result<Option<Vec<u8>>> {
        let mut parts = path.split('/');
        if parts.next() != Some("sources") {
            return Ok(None);
        }
        // `sources/` itself is taken as the workspace has it (followed if it is a link),
        // exactly as the archives section lists it, so both sections see the same files.
        let mut on_disk = self.root.join("sources");
        let mut rest = parts.peekable();
        if rest.peek().is_none() {
            return Ok(None);
        }
        while let Some(part) = rest.next() {
            if !is_plain_component(part) {
                return Ok(None);
            }
            on_disk.push(part);
            let meta = match std::fs::symlink_metadata(&on_disk) {
                Ok(meta) => meta,
                // A missing file, or a "directory" that is really a file, names nothing.
                Err(err) if matches!(err.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => return Ok(None),
                Err(err) => return Err(err),
            };
            let last = rest.peek().is_none();
            let wanted = if last { meta.file_type().is_file() } else { meta.file_type().is_dir() };
            // `symlink_metadata` does not follow links: a link is neither file nor dir.
            if !wanted {
                return Ok(None);
            }
        }
        match std::fs::read(&on_disk) {
            Ok(bytes) => Ok(Some(bytes)),
            // Removed between the check and the read: the same as never there.
            Err(err) if err.kind() == ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err),
        }
    }
}

/// A component that names one entry of its directory: not empty, `.` or `..`, and
/// free of the separators the platform would split it on.
fn is_plain_component(part: &str) -> bool {
    !part.is_empty() && part != "." && part != ".." && !(cfg!(windows) && (part.contains('\\') || part.contains(':')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_components_below_sources() {
        assert!(is_plain_component("t.md"));
        for bad in ["", ".", ".."] {
            assert!(!is_plain_component(bad), "{bad:?}");
        }
    }
}
