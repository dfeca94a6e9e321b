//! [`Workspace::repair_archives`]: decision Q4's repair of a v2 archive whose scan stops
//! before the end of the file. The unreadable tail is copied to the quarantine first
//! (nothing is deleted), then the archive is truncated to its valid prefix through the
//! journal, so a crash leaves either the old file or the truncated one — and the tail
//! is safe in the quarantine in both cases.

use std::path::Path;

use scriptorium_archive_format::{is_v2_source_path, parse};

use crate::error::Error;
use crate::journal::{Changes, QUARANTINE_DIR, io_error};
use crate::lock::INTERACTIVE_LOCK_TIMEOUT;
use crate::update::read_tree;
use crate::vfs::{create_dir_all, write_atomic};
use crate::workspace::Workspace;

/// One archive [`Workspace::repair_archives`] truncated.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RepairedArchive {
    /// The archive, workspace-relative.
    pub path: String,
    /// The length of the valid prefix it was truncated to.
    pub kept_bytes: usize,
    /// Where the removed tail now is, workspace-relative.
    pub quarantined: String,
}

impl Workspace {
    /// Move the unreadable tail of every incomplete v2 archive under `sources/` to
    /// `<runtime-dir>/quarantine/` and truncate the archive to its valid prefix (decision
    /// Q4), all archives in one journal install. Archives that are not UTF-8 are left for
    /// a person to look at. Returns what was repaired, in path order.
    pub fn repair_archives(&self) -> Result<Vec<RepairedArchive>, Error> {
        let lock = self.lock(INTERACTIVE_LOCK_TIMEOUT)?;
        self.recover(&lock)?;
        let mut changes = Changes::new();
        let mut repaired = Vec::new();
        let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        for (path, bytes) in read_tree(self.vfs(), "sources")? {
            if !is_v2_source_path(&path) {
                continue;
            }
            let Ok(text) = std::str::from_utf8(&bytes) else { continue };
            let parsed = parse(text, &path);
            if parsed.is_complete() {
                continue;
            }
            let kept = parsed.valid_prefix_len(bytes.len());
            let (prefix, tail) = bytes.split_at_checked(kept).unwrap_or((&bytes, &[]));
            let quarantined = format!("{}/{QUARANTINE_DIR}/archive-tail-{stamp:x}/{path}", self.runtime_dir_name());
            let target = Path::new(&quarantined);
            if let Some(parent) = target.parent() {
                create_dir_all(self.vfs(), parent).map_err(io_error(parent))?;
            }
            write_atomic(self.vfs(), target, tail).map_err(io_error(target))?;
            changes.insert(path.clone(), Some(prefix.to_vec()));
            repaired.push(RepairedArchive { path, kept_bytes: kept, quarantined });
        }
        self.install(&lock, &changes)?;
        Ok(repaired)
    }
}
