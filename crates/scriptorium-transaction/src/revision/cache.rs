//! [`RevisionCache`]: the revision of one workspace recomputed from where the tree first
//! differs from the last computation, as Git's index does for `git status`.
//!
//! The revision hashes every file in path order, so after a change every byte from the
//! first changed path on must be hashed again; what comes before it need not be. Each
//! computation still walks and `lstat`s every file (that is how hand edits are seen), and
//! keeps per file its stat facts and the SHA-256 state *before* it. The next computation
//! resumes from the state before the first file whose path or stat differs.
//!
//! A stat can miss a rewrite that keeps size and timestamps (a write within the same
//! clock tick as the hash). Git's racily-clean rule closes that gap: a file whose mtime
//! or ctime is within [`RACY_WINDOW_NS`] of the time it was hashed is not trusted next
//! time and is read again.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use super::{RUNTIME_STATE_FILE, component_order, hex_revision};
use crate::listing::{ListedFile, Listing, Scope};

/// How close to the hash time a timestamp makes a file untrusted (2 s, nanoseconds):
/// wide enough for coarse file-system clocks and a wall clock that steps.
const RACY_WINDOW_NS: i128 = 2_000_000_000;

/// The `lstat` facts that identify one version of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stat {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Stat {
    fn of(meta: &fs::Metadata) -> Stat {
        Stat {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.size(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
        }
    }
}

/// One hashed file: its `/`-joined path, stat, whether that stat may be trusted next
/// time, and the hasher state before it. An untrusted file keeps the digest of its
/// bytes, so that the next computation can re-read it and, when it is unchanged, go on
/// reusing what follows it.
#[derive(Clone)]
struct Hashed {
    relative: Vec<u8>,
    stat: Stat,
    trusted: bool,
    before: Sha256,
    digest: Option<[u8; 32]>,
}

/// What the last revision computation hashed, file by file, in revision order.
///
/// Invariant: `end` is the hasher state after every file of `files`, and each entry's
/// `before` is the state after all entries before it.
#[derive(Clone, Default)]
pub(crate) struct RevisionCache {
    files: Vec<Hashed>,
    end: Sha256,
}

impl std::fmt::Debug for RevisionCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RevisionCache").field("files", &self.files.len()).finish_non_exhaustive()
    }
}

impl RevisionCache {
    /// The revision of the real tree at `root` (equal to [`super::revision`] over a
    /// `RealVfs` at `root`), reusing what the last call hashed where the tree agrees.
    pub(crate) fn revision(&mut self, root: &Path, runtime_dir: &str) -> io::Result<String> {
        self.revision_at(root, runtime_dir, now_ns()).map(|(revision, _)| revision)
    }

    /// [`Self::revision`] as if hashing at `hashed_at` (ns since the epoch); also returns
    /// how many files it read.
    fn revision_at(&mut self, root: &Path, runtime_dir: &str, hashed_at: i128) -> io::Result<(String, usize)> {
        let result = self.compute(root, runtime_dir, hashed_at);
        if result.is_err() {
            // A half-updated cache would break the invariant: start over next time.
            *self = RevisionCache::default();
        }
        result
    }

    fn compute(&mut self, root: &Path, runtime_dir: &str, hashed_at: i128) -> io::Result<(String, usize)> {
        let listed = list(root, runtime_dir)?;
        let mut read = 0;
        let mut reuse = 0;
        for (old, (relative, stat)) in self.files.iter_mut().zip(&listed) {
            if old.relative != *relative || old.stat != *stat {
                break;
            }
            if !old.trusted {
                // Racily clean: the stat cannot tell, the bytes can.
                let Some(digest) = old.digest else { break };
                let bytes = match fs::read(root.join(OsStr::from_bytes(relative))) {
                    Ok(bytes) => bytes,
                    Err(error) if error.kind() == io::ErrorKind::NotFound => break,
                    Err(error) => return Err(error),
                };
                read += 1;
                if <[u8; 32]>::from(Sha256::digest(&bytes)) != digest {
                    break;
                }
                old.trusted = is_old(stat, hashed_at);
            }
            reuse += 1;
        }
        let mut hasher = match self.files.get(reuse) {
            Some(first_stale) => first_stale.before.clone(),
            None => self.end.clone(),
        };
        self.files.truncate(reuse);
        for (relative, stat) in listed.into_iter().skip(reuse) {
            let bytes = match fs::read(root.join(OsStr::from_bytes(&relative))) {
                Ok(bytes) => bytes,
                // Removed between listing and reading: not part of this snapshot.
                Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
                Err(error) => return Err(error),
            };
            read += 1;
            let before = hasher.clone();
            hasher.update(&relative);
            hasher.update([0]);
            hasher.update(&bytes);
            hasher.update([0]);
            let trusted = is_old(&stat, hashed_at);
            let digest = (!trusted).then(|| Sha256::digest(&bytes).into());
            self.files.push(Hashed { relative, stat, trusted, before, digest });
        }
        self.end = hasher.clone();
        Ok((hex_revision(hasher), read))
    }
}

impl crate::workspace::Workspace {
    /// The current revision (spec 01 §1.5), from this workspace's [`RevisionCache`]:
    /// every file is `lstat`ed; only the bytes from the first file that changed since
    /// this handle's last computation are hashed again.
    pub fn revision(&self) -> Result<String, crate::error::Error> {
        // A poisoned cache only means a panic elsewhere mid-computation: start afresh.
        let mut cache = self.revision_cache.lock().unwrap_or_else(|poisoned| {
            let mut cache = poisoned.into_inner();
            *cache = RevisionCache::default();
            cache
        });
        Ok(cache.revision(self.root(), self.runtime_dir_name())?)
    }
}

/// Whether a file with this stat, hashed at `hashed_at`, can be trusted next time: its
/// timestamps are older than the racy window.
fn is_old(stat: &Stat, hashed_at: i128) -> bool {
    stat.mtime_ns.max(stat.ctime_ns) < hashed_at - RACY_WINDOW_NS
}

/// The wall clock in nanoseconds since the epoch (0 before it: nothing is trusted).
fn now_ns() -> i128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| i128::try_from(elapsed.as_nanos()).unwrap_or(0))
}

/// Every file the revision counts, `/`-joined and in revision order, with its stat:
/// the files of the one [`Listing`] (as [`super::revision`] hashes them), plus the
/// runtime state file.
fn list(root: &Path, runtime_dir: &str) -> io::Result<Vec<(Vec<u8>, Stat)>> {
    let listing = Listing::read(root, Scope::Root).complete()?;
    let mut files: Vec<(Vec<u8>, Stat)> =
        listing.files.into_iter().map(ListedFile::into_parts).map(|(path, meta)| (path, Stat::of(&meta))).collect();
    let runtime = root.join(runtime_dir);
    if lstat(&runtime)?.is_some_and(|meta| meta.is_dir())
        && let Some(meta) = lstat(&runtime.join(RUNTIME_STATE_FILE))?.filter(fs::Metadata::is_file)
    {
        let state = format!("{runtime_dir}/{RUNTIME_STATE_FILE}").into_bytes();
        let at = files.partition_point(|(path, _)| component_order(path, &state).is_lt());
        files.insert(at, (state, Stat::of(&meta)));
    }
    Ok(files)
}

fn lstat(path: &Path) -> io::Result<Option<fs::Metadata>> {
    match fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(meta)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests;
