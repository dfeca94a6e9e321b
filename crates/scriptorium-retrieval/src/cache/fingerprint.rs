//! A file's stat fingerprint: what tells the cache, without reading the file, that it
//! is the same file it indexed (spec 02 §6.6 uses the same signature in process).

use std::time::{SystemTime, UNIX_EPOCH};

/// A file modified less than this long before the index read it may still change
/// within the file system's timestamp granularity without its stat changing (Git's
/// "racily clean" problem), so its fingerprint is not trusted on the next open.
const RACY_WINDOW_NS: i64 = 2_000_000_000;

/// Size, modification and change times in nanoseconds, and inode (0 where the
/// platform has none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Fingerprint {
    pub(crate) len: u64,
    pub(crate) mtime_ns: i64,
    pub(crate) ctime_ns: i64,
    pub(crate) inode: u64,
}

impl Fingerprint {
    /// The fingerprint of a file's metadata.
    pub(crate) fn of(meta: &std::fs::Metadata) -> Self {
        let mtime_ns = meta.modified().map(nanos).unwrap_or(0);
        #[cfg(unix)]
        let (ctime_ns, inode) = {
            use std::os::unix::fs::MetadataExt as _;
            (meta.ctime().saturating_mul(1_000_000_000).saturating_add(meta.ctime_nsec()), meta.ino())
        };
        #[cfg(not(unix))]
        let (ctime_ns, inode) = (0, 0);
        Fingerprint { len: meta.len(), mtime_ns, ctime_ns, inode }
    }

    /// Whether the file changed so recently before `read_at` (ns since the epoch) that an
    /// equal fingerprint would not prove equal bytes.
    pub(crate) fn is_racy(&self, read_at: i64) -> bool {
        // The modification time only: a write moves it together with the change time,
        // and the change time alone (a `chmod`, a restored mtime) never hides new bytes
        // from the fingerprint, which compares it anyway.
        self.mtime_ns >= read_at.saturating_sub(RACY_WINDOW_NS)
    }
}

/// Nanoseconds since the Unix epoch (negative before it), saturating.
pub(crate) fn nanos(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_nanos()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_nanos()).map_or(i64::MIN, |n| -n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_changes_are_racy() {
        let print = Fingerprint { len: 1, mtime_ns: 10_000_000_000, ctime_ns: 99_000_000_000, inode: 1 };
        assert!(print.is_racy(11_000_000_000));
        assert!(!print.is_racy(13_000_000_000));
        assert!(nanos(UNIX_EPOCH) == 0);
    }
}
