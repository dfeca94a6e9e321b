//! [`Workspace::install`]: the raw install, which keeps the committed-topics cache valid
//! across an install beside the topics.
//!
//! The writer runtime archives a batch and saves its counters with raw installs between
//! its updates. Each moves the revision, and a cache valid for one revision only would
//! then re-read and re-parse every topic file at the next update. So an install that
//! writes no topic file and only appends frames to v2 archives (plus runtime and derived
//! files) advances the cache to the new revision, by the rule an update's own install
//! follows for the frames it appends (`CommittedCache::installed_beside`). Anything else
//! under `topics/` or `sources/`, or any doubt about the tree it starts from, forgets the
//! cache: the next update reloads it.
//!
//! The tree must be the cache's when the install starts. Under the same hold of the write
//! lock, with no install since the cache last matched the tree (the lock's stamp says
//! so) and the revision cache still at the cache's revision, that is known without a
//! walk; otherwise the revision is computed, as an update's base check does. The
//! revision after is hashed from the bytes the caches hold, so a hand edit that raced
//! the install gives a revision the next walk does not find, and the next update reloads.

use std::collections::BTreeSet;
use std::path::Path;

use scriptorium_archive_format::appended_source_ids;
use scriptorium_topic_markdown::SourceResolver;

use crate::error::Error;
use crate::journal::{Changes, Installed, Recovery, RevisionMove};
use crate::lock::WriteLock;
use crate::runtime_state::RuntimeState;
use crate::update::StageSources;
use crate::vfs::Vfs;
use crate::workspace::Workspace;

impl Workspace {
    /// Install `changes` all-or-nothing (see [`journal::install`](crate::install)). The
    /// lock must be this workspace's; it is re-verified just before the commit point.
    ///
    /// When `changes` leave the topics alone and only append to v2 archives (besides
    /// runtime and derived files), the next update reuses what the last one read and
    /// parsed, and [`Installed::moved`] says how the revision moved.
    pub fn install(&self, lock: &WriteLock, changes: &Changes) -> Result<Installed, Error> {
        self.check_lock(lock)?;
        let mut cache = self.committed_cache();
        let kept = self.kept_across(lock, &cache, changes)?;
        // The tree changes from here on: the cache learns the result only after the install.
        cache.invalidate();
        let mut installed = self.install_files(lock, changes)?;
        let Some((from, beside)) = kept else { return Ok(installed) };
        let topics = cache.topics();
        let known = |path: &[u8]| {
            let path = std::str::from_utf8(path).ok()?;
            match changes.get(path) {
                Some(bytes) => bytes.as_deref(),
                None => topics.get(path).map(Vec::as_slice),
            }
        };
        // The memory is installed: a revision that cannot be had only costs the cache.
        let Ok(Some(to)) = self.revision_after_raw_install(changes.keys().map(String::as_str), &known) else {
            return Ok(installed);
        };
        cache.installed_beside(to.clone(), beside.appended.as_ref(), beside.runtime_state);
        cache.vouch(lock.stamp());
        let no_plan = std::collections::BTreeMap::new();
        if cache.settle(&SourceResolver::new(StageSources::new(self.vfs(), &no_plan))) {
            self.record_normal(&to);
        }
        installed.moved = Some(RevisionMove { from, to });
        Ok(installed)
    }

    /// The revision of the tree `changes` are about to be installed over and what they do
    /// to the committed cache, when the cache holds that tree and can be kept across them.
    fn kept_across(
        &self,
        lock: &WriteLock,
        cache: &crate::update::CommittedCache,
        changes: &Changes,
    ) -> Result<Option<(String, Beside)>, Error> {
        let Some(valid_at) = cache.valid_at() else { return Ok(None) };
        // An interrupted install finished now changes the tree behind the cache.
        if self.recover(lock)? != Recovery::default() {
            return Ok(None);
        }
        let Some(beside) = Beside::of(self.vfs(), &self.runtime_state_path(), changes) else { return Ok(None) };
        let unchanged = cache.vouched(lock.stamp()) && self.last_revision().as_deref() == Some(valid_at);
        let current = if unchanged { valid_at.to_owned() } else { self.revision()? };
        Ok((current == valid_at).then_some((current, beside)))
    }
}

/// What an install that the committed cache survives does to it.
struct Beside {
    /// The source ids of the frames it appends, when it appends any.
    appended: Option<BTreeSet<String>>,
    /// Whether the `runtime.json` it writes has a creation order, when it writes one.
    runtime_state: Option<bool>,
}

impl Beside {
    /// `None` when `changes` write a topic file or change a source file other than by
    /// appending frames to a v2 archive (or when that cannot be told).
    fn of<V: Vfs + ?Sized>(vfs: &V, runtime_state_path: &str, changes: &Changes) -> Option<Beside> {
        let mut beside = Beside { appended: None, runtime_state: None };
        for (path, bytes) in changes {
            let first = path.split('/').next().unwrap_or_default();
            if path.split('/').any(|c| c.is_empty() || c == "." || c == "..") || first.eq_ignore_ascii_case("topics") {
                return None;
            }
            if first.eq_ignore_ascii_case("sources") {
                let appended = appended_ids(vfs, path, bytes.as_deref()?)?;
                beside.appended.get_or_insert_with(BTreeSet::new).extend(appended);
            } else if path == runtime_state_path {
                // Parsed here, beside the install, so the next update need not.
                let ordered = bytes.as_deref().is_some_and(|bytes| RuntimeState::parse(bytes).has_creation_order());
                beside.runtime_state = Some(ordered);
            }
        }
        Some(beside)
    }
}

/// The source ids of the frames `new` appends to the v2 archive at `path`, when it does
/// only that ([`appended_source_ids`]).
fn appended_ids<V: Vfs + ?Sized>(vfs: &V, path: &str, new: &[u8]) -> Option<BTreeSet<String>> {
    if !path.starts_with("sources/") {
        return None;
    }
    let old = match vfs.read(Path::new(path)) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(_) => return None,
    };
    appended_source_ids(path, &old, new).map(|ids| ids.into_iter().collect())
}

#[cfg(test)]
mod tests;
