//! The files a commit holds: the memory paths of the workspace (or of a stage), with
//! staged changes laid over them, written as blob and tree objects straight from their
//! bytes — the equivalent of `git add -A -- <memory paths>` without an index.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use gix::ObjectId;
use gix::index::entry::Stat;
use gix::objs::tree::{Entry, EntryKind};

use super::HISTORY_PATHS;
use super::head_tree::HeadTree;
use super::stat_cache::{StatCache, settled, stat_of};
use crate::error::{Error, ErrorCode};
use crate::journal::Changes;

/// Where one file's bytes come from.
enum Content<'c> {
    /// A regular file on disk (at the snapshot's root joined with its key), with its stat
    /// from the scan, read when the blob is written unless the stat cache knows its blob.
    Disk(std::fs::Metadata),
    /// Bytes staged by the transaction and not installed yet.
    Staged(&'c [u8]),
}

/// The memory files of one commit, keyed by workspace-relative `/`-separated path.
///
/// Invariant: every key starts with a component of [`HISTORY_PATHS`], has no empty,
/// `.` or `..` component and no component Git refuses in a tree (`.git` and its
/// spellings), and no key is a proper prefix directory of another key.
pub(super) struct Snapshot<'c> {
    root: PathBuf,
    files: BTreeMap<String, Content<'c>>,
}

impl<'c> Snapshot<'c> {
    /// The memory files under `root`: regular files only (symlinks and special files are
    /// skipped, as the reference skips them), in directories that are not symlinks.
    /// A name that is not UTF-8 is skipped: no memory path can have one.
    pub(super) fn scan(root: &Path) -> io::Result<Snapshot<'c>> {
        let mut files = Vec::new();
        for name in HISTORY_PATHS {
            walk(&root.join(name), (*name).to_owned(), &mut files)?;
        }
        // Collected then built in one go: the map sorts once instead of searching per insert.
        Ok(Snapshot { root: root.to_owned(), files: files.into_iter().collect() })
    }

    /// Lay the transaction's whole-file changes over the scanned files. Paths outside the
    /// memory paths (`<runtime-dir>/runtime.json`, for one) are not history and are left out.
    pub(super) fn apply(&mut self, changes: &'c Changes) -> Result<(), Error> {
        for (raw, change) in changes {
            let Some(path) = normalize(raw)? else { continue };
            self.remove_under(&path);
            if let Some(bytes) = change {
                // A file replaces any file standing where one of its parent directories goes.
                let mut end = 0;
                while let Some(slash) = path.get(end..).and_then(|rest| rest.find('/')) {
                    end += slash;
                    if let Some(parent) = path.get(..end) {
                        self.files.remove(parent);
                    }
                    end += 1;
                }
                self.files.insert(path, Content::Staged(bytes));
            }
        }
        Ok(())
    }

    /// Remove `path` and everything below it.
    fn remove_under(&mut self, path: &str) {
        self.files.remove(path);
        let prefix = format!("{path}/");
        let below: Vec<String> = self
            .files
            .range(prefix.clone()..)
            .map(|(key, _)| key)
            .take_while(|key| key.starts_with(&prefix))
            .cloned()
            .collect();
        for key in below {
            self.files.remove(&key);
        }
    }

    /// Write every blob and tree and return the root tree's id, with the stat of each
    /// file on disk whose blob is known and settled (for the next index). `keep` holds
    /// top-level entries of the parent commit's tree outside the memory paths (a file
    /// someone committed by hand): `git add -A -- <memory paths>` leaves those alone, so
    /// do we. A file on disk whose stat matches `cache` is not read again, and a tree
    /// whose bytes equal `head`'s at the same directory is not hashed or written again.
    pub(super) fn write_tree(
        &self,
        repo: &gix::Repository,
        keep: Vec<Entry>,
        cache: &StatCache,
        head: &HeadTree,
    ) -> Result<(ObjectId, Stats), Error> {
        let mut top = Dir::default();
        for (path, content) in &self.files {
            top.insert(path, path, content);
        }
        let mut writer = Writer {
            root: &self.root,
            repo,
            cache,
            head,
            now: SystemTime::now(),
            stats: Stats::new(),
            buf: Vec::new(),
        };
        let mut entries = keep;
        entries.extend(top.entries("", &mut writer)?);
        Ok((writer.tree("", entries)?, writer.stats))
    }
}

/// Normalize a workspace-relative path (empty and `.` components dropped) and return it
/// if it lies in the memory paths and Git can store it; `None` for any other path.
/// An absolute path or a `..` component is `PATH_OUTSIDE_WORKSPACE`, as everywhere.
pub(super) fn normalize(raw: &str) -> Result<Option<String>, Error> {
    if raw.starts_with('/') || raw.split('/').any(|part| part == "..") {
        return Err(Error::new(ErrorCode::PathOutsideWorkspace, "path escapes the workspace").with_path(raw));
    }
    let parts: Vec<&str> = raw.split('/').filter(|part| !part.is_empty() && *part != ".").collect();
    let tracked = parts.first().is_some_and(|first| HISTORY_PATHS.contains(first));
    Ok((tracked && !parts.iter().any(|part| is_refused_name(part))).then(|| parts.join("/")))
}

/// Names `git fsck` refuses in a tree: empty, `.`, `..`, and `.git` in any spelling
/// that some file system folds to it (`.GIT`, `.git.` and `.git ` on NTFS, `git~1`).
fn is_refused_name(name: &str) -> bool {
    let folded = name.trim_end_matches(['.', ' ']);
    name.is_empty()
        || name == "."
        || name == ".."
        || folded.eq_ignore_ascii_case(".git")
        || folded.eq_ignore_ascii_case("git~1")
}

/// Add the regular files at or below `path` (named `relative`) to `files`.
fn walk(path: &Path, relative: String, files: &mut Vec<(String, Content<'_>)>) -> io::Result<()> {
    let metadata = match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(error),
    };
    add(path, relative, metadata, files)
}

/// Add the file or directory at `path` (named `relative`, with `metadata` not following
/// symlinks) to `files`. Entries are stat'ed relative to their directory
/// (`DirEntry::metadata`), which spares the kernel a walk of the whole path per file.
fn add(
    path: &Path,
    relative: String,
    metadata: std::fs::Metadata,
    files: &mut Vec<(String, Content<'_>)>,
) -> io::Result<()> {
    let kind = metadata.file_type();
    if kind.is_file() {
        files.push((relative, Content::Disk(metadata)));
    } else if kind.is_dir() {
        for entry in std::fs::read_dir(path)? {
            let entry = entry?;
            let Ok(name) = entry.file_name().into_string() else { continue };
            if is_refused_name(&name) {
                continue;
            }
            let metadata = match entry.metadata() {
                Ok(metadata) => metadata,
                Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
                Err(error) => return Err(error),
            };
            add(&entry.path(), format!("{relative}/{name}"), metadata, files)?;
        }
    }
    Ok(())
}

/// Workspace-relative path → stat, of the files on disk whose blob a commit holds.
pub(super) type Stats = BTreeMap<String, Stat>;

/// What writing blobs and trees needs besides the files: the repository, the stat cache,
/// `HEAD`'s trees, the time the writing started (for [`settled`]), the stats gathered for
/// the next index, and a buffer for serializing trees.
struct Writer<'w> {
    root: &'w Path,
    repo: &'w gix::Repository,
    cache: &'w StatCache,
    head: &'w HeadTree,
    now: SystemTime,
    stats: Stats,
    buf: Vec<u8>,
}

impl Writer<'_> {
    /// The blob id of one file, writing the blob unless the stat cache knows it.
    /// `None` if the file vanished since the scan.
    fn blob(&mut self, path: &str, content: &Content<'_>) -> Result<Option<ObjectId>, Error> {
        if let Content::Disk(metadata) = content {
            let stat = stat_of(metadata);
            if let Some(id) = self.cache.lookup(path, &stat) {
                self.stats.insert(path.to_owned(), stat);
                return Ok(Some(id));
            }
        }
        let Some(bytes) = content.read(self.root, path)? else { return Ok(None) };
        let id = self.repo.write_blob(&bytes).map_err(commit_failed("write a blob"))?.detach();
        // The stat was taken before the read: a later change shows as a new stat, unless
        // it lands within the timestamp granularity, hence `settled`.
        if let Content::Disk(metadata) = content
            && settled(metadata, self.now)
        {
            self.stats.insert(path.to_owned(), stat_of(metadata));
        }
        Ok(Some(id))
    }

    /// Sort `entries` in Git's tree order and write them as the tree of directory `path`
    /// (`""` for the root). Bytes equal to `HEAD`'s tree there are that very object, so
    /// its id is returned without hashing or writing anything.
    fn tree(&mut self, path: &str, mut entries: Vec<Entry>) -> Result<ObjectId, Error> {
        use gix::objs::WriteTo as _;
        entries.sort();
        let tree = gix::objs::Tree { entries };
        self.buf.clear();
        tree.write_to(&mut self.buf).map_err(|error| {
            Error::new(ErrorCode::GitCommitFailed, format!("cannot serialize a tree: {error}")).with_source(error)
        })?;
        if let Some((id, raw)) = self.head.tree(path)
            && raw == self.buf.as_slice()
        {
            return Ok(id);
        }
        Ok(self.repo.write_object(&tree).map_err(commit_failed("write a tree"))?.detach())
    }
}

/// One directory of the tree being built: files as (name, full path, content).
#[derive(Default)]
struct Dir<'s> {
    files: Vec<(&'s str, &'s str, &'s Content<'s>)>,
    dirs: BTreeMap<&'s str, Dir<'s>>,
}

impl<'s> Dir<'s> {
    fn insert(&mut self, path: &'s str, full: &'s str, content: &'s Content<'s>) {
        match path.split_once('/') {
            Some((dir, rest)) => self.dirs.entry(dir).or_default().insert(rest, full, content),
            None => self.files.push((path, full, content)),
        }
    }

    /// Write the blobs and subtrees of this directory (at `path`, `""` for the root) and
    /// return its entries. Empty directories vanish, as Git cannot hold them.
    fn entries(&self, path: &str, writer: &mut Writer<'_>) -> Result<Vec<Entry>, Error> {
        let mut entries = Vec::with_capacity(self.files.len() + self.dirs.len());
        for (name, dir) in &self.dirs {
            let sub_path = if path.is_empty() { (*name).to_owned() } else { format!("{path}/{name}") };
            let sub = dir.entries(&sub_path, writer)?;
            if !sub.is_empty() {
                entries.push(Entry {
                    mode: EntryKind::Tree.into(),
                    filename: (*name).into(),
                    oid: writer.tree(&sub_path, sub)?,
                });
            }
        }
        for (name, full, content) in &self.files {
            if self.dirs.contains_key(name) {
                continue; // Unreachable by the invariant; a tree may not name one entry twice.
            }
            let Some(oid) = writer.blob(full, content)? else { continue };
            entries.push(Entry { mode: EntryKind::Blob.into(), filename: (*name).into(), oid });
        }
        Ok(entries)
    }
}

impl Content<'_> {
    /// The file's bytes, or `None` if it vanished since the scan (it is then simply not
    /// part of this commit, as with `git add -A` racing a delete).
    fn read(&self, root: &Path, relative: &str) -> Result<Option<std::borrow::Cow<'_, [u8]>>, Error> {
        match self {
            Content::Staged(bytes) => Ok(Some(std::borrow::Cow::Borrowed(bytes))),
            Content::Disk(_) => match std::fs::read(root.join(relative)) {
                Ok(bytes) => Ok(Some(std::borrow::Cow::Owned(bytes))),
                Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(error) => {
                    Err(Error::new(ErrorCode::GitCommitFailed, format!("cannot read a memory file: {error}"))
                        .with_path(relative)
                        .with_source(error))
                }
            },
        }
    }
}

/// Map a gix failure while preparing a commit to `GIT_COMMIT_FAILED`.
pub(super) fn commit_failed(what: &'static str) -> impl FnOnce(gix::Error) -> Error {
    move |error| Error::new(ErrorCode::GitCommitFailed, format!("cannot {what}: {error}"))
}
