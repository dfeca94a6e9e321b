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

/// One source archive [`Workspace::repair_rewritten_sources`] brought back to its
/// committed bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RestoredSource {
    /// The archive, workspace-relative.
    pub path: String,
    /// The length of the committed bytes it now holds again.
    pub restored_bytes: usize,
    /// Where the altered bytes (from the first difference to the end) now are,
    /// workspace-relative; `None` when the file was removed (nothing to keep).
    pub quarantined: Option<String>,
}

impl Workspace {
    /// Restore every committed source archive that no longer starts with its committed
    /// bytes ([`History::rewritten_sources`](crate::History::rewritten_sources)) to those
    /// bytes, first copying the altered bytes (from the first difference on) to
    /// `<runtime-dir>/quarantine/`, all archives in one journal install. A workspace
    /// without history has nothing to compare against and is left as it is.
    pub fn repair_rewritten_sources(&self) -> Result<Vec<RestoredSource>, Error> {
        let lock = self.lock(INTERACTIVE_LOCK_TIMEOUT)?;
        self.recover(&lock)?;
        let Some(history) = crate::History::open_existing(self.root())? else { return Ok(Vec::new()) };
        let mut changes = Changes::new();
        let mut restored = Vec::new();
        let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        for source in history.rewritten_sources()? {
            let quarantined = match &source.current {
                Some(bytes) => {
                    let altered = bytes.get(source.first_difference..).unwrap_or_default();
                    let name = format!(
                        "{}/{QUARANTINE_DIR}/source-rewrite-{stamp:x}/{}",
                        self.runtime_dir_name(),
                        source.path
                    );
                    let target = Path::new(&name);
                    if let Some(parent) = target.parent() {
                        create_dir_all(self.vfs(), parent).map_err(io_error(parent))?;
                    }
                    write_atomic(self.vfs(), target, altered).map_err(io_error(target))?;
                    Some(name)
                }
                None => None,
            };
            restored.push(RestoredSource {
                path: source.path.clone(),
                restored_bytes: source.committed.len(),
                quarantined,
            });
            changes.insert(source.path, Some(source.committed));
        }
        if !changes.is_empty() {
            self.install(&lock, &changes)?;
        }
        Ok(restored)
    }
}
