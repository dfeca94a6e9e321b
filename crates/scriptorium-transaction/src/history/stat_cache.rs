//! The Git index as a stat cache, as Git itself uses it: a memory file whose stat data
//! (size, mtime, ctime, inode, device, owner) equals its index entry's has the blob id
//! recorded there, so a checkpoint need not read and hash it again (spec 03 P10).
//!
//! An entry is trusted only if it is not racy (its mtime is older than the index file's,
//! Git's racy-git rule) and its id is the blob `HEAD`'s tree holds at the same path: the
//! tree's objects are the ones verification checked, so a reused id never names an
//! object lost in a crash. Any doubt — no index, a damaged one, another branch's entry —
//! means the file is read and hashed, as before.

use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

use gix::ObjectId;
use gix::index::entry::stat::Time;
use gix::index::entry::{Mode, Stat};

/// A file whose mtime is this recent when it is hashed may still be changing within
/// the file system's timestamp granularity: its stat is not recorded.
const SETTLE: Duration = Duration::from_secs(2);

/// The trusted entries of the index: path → (stat, blob id). Hashed, not ordered: a
/// commit looks up every file of the workspace once.
#[derive(Default)]
pub(super) struct StatCache {
    entries: HashMap<String, (Stat, ObjectId)>,
}

impl StatCache {
    /// Read `<git_dir>/index`, keeping the non-racy entries of regular files whose id is
    /// the blob of `head` (path → blob id of `HEAD`'s tree) at that path.
    pub(super) fn load(git_dir: &Path, head: &BTreeMap<String, ObjectId>) -> StatCache {
        let options = gix::index::decode::Options::default();
        let Ok(index) = gix::index::File::at(git_dir.join("index"), gix::hash::Kind::Sha1, false, options) else {
            return StatCache::default();
        };
        let stat_options =
            gix::index::entry::stat::Options { trust_ctime: true, check_stat: true, use_nsec: true, use_stdev: true };
        let entries = index
            .entries()
            .iter()
            .filter(|entry| entry.mode == Mode::FILE && entry.stage_raw() == 0)
            .filter(|entry| !entry.stat.is_racy(index.timestamp(), stat_options))
            .filter_map(|entry| {
                let path = std::str::from_utf8(entry.path(&index)).ok()?;
                (head.get(path) == Some(&entry.id)).then(|| (path.to_owned(), (entry.stat, entry.id)))
            })
            .collect();
        StatCache { entries }
    }

    /// The cached blob id of `path` if `stat` still matches its entry.
    pub(super) fn lookup(&self, path: &str, stat: &Stat) -> Option<ObjectId> {
        self.entries.get(path).filter(|(cached, _)| cached == stat).map(|(_, id)| *id)
    }
}

/// The index stat of a file, as Git records it (real ctime, truncated to 32 bits).
pub(super) fn stat_of(metadata: &std::fs::Metadata) -> Stat {
    let time = |secs: i64, nsecs: i64| Time {
        secs: u32::try_from(secs).unwrap_or(0),
        nsecs: u32::try_from(nsecs).unwrap_or(0),
    };
    Stat {
        mtime: time(metadata.mtime(), metadata.mtime_nsec()),
        ctime: time(metadata.ctime(), metadata.ctime_nsec()),
        // Truncation to 32 bits is what Git does too.
        dev: metadata.dev() as u32,
        ino: metadata.ino() as u32,
        uid: metadata.uid(),
        gid: metadata.gid(),
        size: metadata.len() as u32,
    }
}

/// Whether a file with `metadata`, hashed now, has settled long enough to be cached: a
/// change within the timestamp granularity after the stat could otherwise go unseen.
pub(super) fn settled(metadata: &std::fs::Metadata, now: SystemTime) -> bool {
    metadata.modified().ok().and_then(|mtime| mtime.checked_add(SETTLE)).is_some_and(|settled| settled < now)
}
