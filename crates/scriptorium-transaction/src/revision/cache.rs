//! [`RevisionCache`]: the revision of one workspace recomputed from where the tree first
//! differs from the last computation, as Git's index does for `git status`.
//!
//! The revision hashes every file in path order, so after a change every byte from the
//! first changed path on must be hashed again; what comes before it need not be. Each
//! computation still walks and `lstat`s every file (that is how hand edits are seen), and
//! keeps per file its stat facts and the SHA-256 state *before* it. The next computation
//! resumes from the state before the first file whose path or stat differs.
//!
//! After an install under the write lock the tree is known to be the one the last
//! computation listed with the installed paths changed, so
//! [`RevisionCache::revision_after_install`] `lstat`s only those paths instead of walking
//! the tree again: the commit pays one walk (its base check), not two. A hand edit made
//! while an update runs, outside the lock, shows in the next computation (which walks)
//! rather than in the revision that update returns; a base taken from it is then
//! refused as concurrent, never silently accepted. For the same reason the bytes it
//! hashes may come from the update itself (what it installed, and the committed topics
//! it read under the lock) rather than from the disk.
//!
//! A stat can miss a rewrite that keeps size and timestamps (a write within the same
//! clock tick as the hash). Git's racily-clean rule closes that gap: a file whose mtime
//! or ctime is within [`RACY_WINDOW_NS`] of the time it was hashed is not trusted next
//! time and is read again.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use super::{RUNTIME_STATE_FILE, component_order, hex_revision, is_internal_name};
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
    /// `files` is the whole listing of the last computation (false until one succeeds).
    complete: bool,
    /// The revision that computation gave, while `complete`.
    last: Option<String>,
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

    /// The revision right after this process installed `changed` (workspace-relative
    /// paths written or removed) under the write lock it held when this cache last
    /// computed: that listing with only `changed` stated again, hashed from the first
    /// path that differs. Without such a computation it walks the tree like
    /// [`Self::revision`].
    ///
    /// `known` gives the bytes of a path when the caller holds them (what it installed,
    /// and committed files it read under the same lock), so they are not read again.
    pub(crate) fn revision_after_install<'p>(
        &mut self,
        root: &Path,
        runtime_dir: &str,
        changed: impl IntoIterator<Item = &'p str>,
        known: Known<'_>,
    ) -> io::Result<String> {
        self.after_install(root, runtime_dir, changed, known).map(|(revision, _)| revision)
    }

    /// [`Self::revision_after_install`], and whether it patched the last listing (`false`:
    /// it walked the tree, so the revision may count changes nobody installed).
    pub(crate) fn after_install<'p>(
        &mut self,
        root: &Path,
        runtime_dir: &str,
        changed: impl IntoIterator<Item = &'p str>,
        known: Known<'_>,
    ) -> io::Result<(String, bool)> {
        let hashed_at = now_ns();
        let patched = if self.complete { self.patched_listing(root, runtime_dir, changed) } else { Ok(None) };
        let result = match patched {
            Ok(Some((listed, first_changed))) => {
                self.hash(root, listed, first_changed, hashed_at, known).map(|(revision, _)| (revision, true))
            }
            Ok(None) => self.compute(root, runtime_dir, hashed_at).map(|(revision, _)| (revision, false)),
            Err(error) => Err(error),
        };
        if result.is_err() {
            *self = RevisionCache::default();
        }
        result
    }

    /// The revision of the last computation, if it succeeded: what this cache takes the
    /// tree to be until it looks again.
    pub(crate) fn last(&self) -> Option<&str> {
        self.last.as_deref().filter(|_| self.complete)
    }

    /// The last listing with every path of `changed` taken out and put back where the
    /// listing rule counts it now, and the position of the first changed path: nothing
    /// from there on is reused, even where a stat happens to agree. `None` when a path
    /// goes through a link, which only a walk can follow up.
    fn patched_listing<'p>(
        &self,
        root: &Path,
        runtime_dir: &str,
        changed: impl IntoIterator<Item = &'p str>,
    ) -> io::Result<Option<(Listed, usize)>> {
        let changed: BTreeSet<&[u8]> = changed.into_iter().map(str::as_bytes).collect();
        let mut listed: Listed = self
            .files
            .iter()
            .filter(|file| !changed.contains(file.relative.as_slice()))
            .map(|file| (file.relative.clone(), file.stat))
            .collect();
        let mut first_changed = usize::MAX;
        for path in changed {
            let at = listed.partition_point(|(listed, _)| component_order(listed, path).is_lt());
            first_changed = first_changed.min(at);
            match counted(root, runtime_dir, path)? {
                Counted::File(stat) => listed.insert(at, (path.to_vec(), stat)),
                Counted::No => {}
                Counted::Unsure => return Ok(None),
            }
        }
        Ok(Some((listed, first_changed)))
    }

    fn compute(&mut self, root: &Path, runtime_dir: &str, hashed_at: i128) -> io::Result<(String, usize)> {
        let listed = list(root, runtime_dir)?;
        self.hash(root, listed, usize::MAX, hashed_at, &|_| None)
    }

    /// Hash `listed` (every counted file in revision order, with its stat), reusing the
    /// states of the cached prefix that agrees with it, but none from `limit` on.
    fn hash(
        &mut self,
        root: &Path,
        listed: Listed,
        limit: usize,
        hashed_at: i128,
        known: Known<'_>,
    ) -> io::Result<(String, usize)> {
        self.complete = false;
        self.last = None;
        let mut read = 0;
        let mut reuse = 0;
        for (old, (relative, stat)) in self.files.iter_mut().zip(&listed).take(limit) {
            if old.relative != *relative || old.stat != *stat {
                break;
            }
            if !old.trusted {
                // Racily clean: the stat cannot tell, the bytes can.
                let Some(digest) = old.digest else { break };
                let Some(bytes) = contents(root, relative, known)? else { break };
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
            // Removed between listing and reading: not part of this snapshot.
            let Some(bytes) = contents(root, &relative, known)? else { continue };
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
        self.complete = true;
        let revision = hex_revision(hasher);
        self.last = Some(revision.clone());
        Ok((revision, read))
    }
}

impl crate::workspace::Workspace {
    /// The current revision (spec 01 §1.5), from this workspace's [`RevisionCache`]:
    /// every file is `lstat`ed; only the bytes from the first file that changed since
    /// this handle's last computation are hashed again.
    pub fn revision(&self) -> Result<String, crate::error::Error> {
        Ok(self.revision_cache().revision(self.root(), self.runtime_dir_name())?)
    }

    /// The revision right after an install of `changed` under the write lock, whose
    /// update computed [`Workspace::revision`] under the same lock before it: see
    /// [`RevisionCache::revision_after_install`].
    pub(crate) fn revision_after_install<'p>(
        &self,
        changed: impl IntoIterator<Item = &'p str>,
        known: Known<'_>,
    ) -> Result<String, crate::error::Error> {
        Ok(self.revision_cache().revision_after_install(self.root(), self.runtime_dir_name(), changed, known)?)
    }

    /// [`Workspace::revision_after_install`] after a raw install: `None` when the tree had
    /// to be walked (the revision may then count changes the caches do not hold).
    pub(crate) fn revision_after_raw_install<'p>(
        &self,
        changed: impl IntoIterator<Item = &'p str>,
        known: Known<'_>,
    ) -> Result<Option<String>, crate::error::Error> {
        let (revision, patched) =
            self.revision_cache().after_install(self.root(), self.runtime_dir_name(), changed, known)?;
        Ok(patched.then_some(revision))
    }

    /// The revision this workspace last computed, while nothing has made it doubt it.
    pub(crate) fn last_revision(&self) -> Option<String> {
        self.revision_cache().last().map(str::to_owned)
    }

    /// This workspace's [`RevisionCache`], locked; one poisoned by a panic elsewhere
    /// mid-computation starts afresh.
    fn revision_cache(&self) -> std::sync::MutexGuard<'_, RevisionCache> {
        self.revision_cache.lock().unwrap_or_else(|poisoned| {
            let mut cache = poisoned.into_inner();
            *cache = RevisionCache::default();
            cache
        })
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

/// Every counted file in revision order, `/`-joined, with its stat.
type Listed = Vec<(Vec<u8>, Stat)>;

/// The bytes of a workspace-relative path as the caller holds them, if it does.
pub(crate) type Known<'k> = &'k dyn Fn(&[u8]) -> Option<&'k [u8]>;

/// The bytes of `relative`: from `known`, else read (`None` when the file is gone).
fn contents<'k>(root: &Path, relative: &[u8], known: Known<'k>) -> io::Result<Option<Cow<'k, [u8]>>> {
    if let Some(bytes) = known(relative) {
        return Ok(Some(Cow::Borrowed(bytes)));
    }
    match fs::read(root.join(OsStr::from_bytes(relative))) {
        Ok(bytes) => Ok(Some(Cow::Owned(bytes))),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

/// What the listing rule (plus the runtime state file) makes of one installed path.
enum Counted {
    /// A regular file the revision counts, with its stat.
    File(Stat),
    /// Nothing the revision counts: gone, internal, or a directory.
    No,
    /// Reached through a link (or the link itself), so the install may have written
    /// elsewhere in the tree: only a walk can tell.
    Unsure,
}

/// [`Counted`] for the workspace-relative `path`: counted when it is a regular file
/// reached through real directories only, outside the internal top-level names except
/// `<runtime_dir>/runtime.json`.
fn counted(root: &Path, runtime_dir: &str, path: &[u8]) -> io::Result<Counted> {
    let components: Vec<&[u8]> = path.split(|&byte| byte == b'/').collect();
    if components.iter().any(|c| c.is_empty() || *c == b"." || *c == b"..") {
        return Ok(Counted::Unsure);
    }
    let state = format!("{runtime_dir}/{RUNTIME_STATE_FILE}");
    if components.first().is_some_and(|first| is_internal_name(OsStr::from_bytes(first))) && path != state.as_bytes() {
        return Ok(Counted::No);
    }
    let mut at = root.to_path_buf();
    for (n, component) in components.iter().enumerate() {
        at.push(OsStr::from_bytes(component));
        let Some(meta) = lstat(&at)? else { return Ok(Counted::No) };
        let last = n + 1 == components.len();
        if meta.file_type().is_symlink() {
            return Ok(Counted::Unsure);
        }
        if last {
            return Ok(if meta.is_file() { Counted::File(Stat::of(&meta)) } else { Counted::No });
        }
        if !meta.is_dir() {
            return Ok(Counted::No);
        }
    }
    Ok(Counted::No)
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
