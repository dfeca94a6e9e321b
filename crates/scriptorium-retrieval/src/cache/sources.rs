//! The workspace's `sources/` read on demand, as the [`SourceLookup`] that topic
//! citations resolve against when only some files are re-read.
//!
//! It must see exactly the files [`scan_workspace`](crate::scan_workspace) would hand
//! to [`Index::from_files`](crate::Index::from_files): `*.md` regular files under a real
//! `sources/` folder, reached without any symbolic link and outside the folders the
//! walk skips. Otherwise an incremental refresh could resolve a citation that a
//! rebuild would not, and the two indexes would differ.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use scriptorium_topic_markdown::SourceLookup;

use crate::scan::is_skipped_dir;

/// Source archives of the workspace at `root`, read when a citation names one.
#[derive(Debug)]
pub(crate) struct DiskSources {
    root: PathBuf,
}

impl DiskSources {
    pub(crate) fn new(root: &Path) -> Self {
        DiskSources { root: root.to_path_buf() }
    }
}

impl SourceLookup for DiskSources {
    fn read_source(&self, path: &str) -> std::io::Result<Option<Vec<u8>>> {
        if !path.starts_with("sources/") || !path.ends_with(".md") {
            return Ok(None);
        }
        let parts: Vec<&str> = path.split('/').collect();
        let mut on_disk = self.root.clone();
        for (at, part) in parts.iter().enumerate() {
            let last = at + 1 == parts.len();
            if part.is_empty() || *part == "." || *part == ".." || (!last && is_skipped_dir(part)) {
                return Ok(None);
            }
            on_disk.push(part);
            let meta = match std::fs::symlink_metadata(&on_disk) {
                Ok(meta) => meta,
                Err(err) if matches!(err.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => return Ok(None),
                Err(err) => return Err(err),
            };
            // `symlink_metadata` does not follow links: a link is neither file nor folder.
            let wanted = if last { meta.file_type().is_file() } else { meta.file_type().is_dir() };
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
