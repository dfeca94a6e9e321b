//! Git history of a workspace (decision "history", spec 01 §1.5, 02 §4.11): a repository
//! at the workspace root whose commits hold exactly the memory files, written with gix, so
//! no `git` binary is needed.
//!
//! A commit is built straight from the files' bytes (blobs, then trees, then the commit),
//! without staging through an index. Decision 2 splits it in two: [`History::prepare`]
//! writes every object after the transaction has validated and staged its changes and
//! before any committed file moves, so a failure there stops the install
//! (`GIT_COMMIT_FAILED`); [`PreparedCommit::publish`] moves the branch after the install.
//! Neither gix nor Git syncs objects or refs, so history is best-effort: opening verifies
//! it and repairs what it can ([`History::verify`], spec 04 I5). docs/durability.md,
//! section "History", lists the crash cases.
//!
//! Everything that writes (opening included) must run under the workspace write lock.

mod head_tree;
mod layout;
mod message;
mod read;
mod refs;
mod snapshot;
mod sources;
mod stat_cache;
mod verify;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use gix::ObjectId;

use self::head_tree::HeadTree;
use self::layout::Identity;
use self::refs::{Head, RefValue};
use self::snapshot::{Snapshot, Stats, commit_failed};
use self::stat_cache::StatCache;
use crate::error::{Error, ErrorCode};
use crate::journal::Changes;

pub use self::message::{DEFAULT_MESSAGE, MAX_MESSAGE_CHARS, sanitize_message};
pub use self::read::HistoryEntry;
pub use self::sources::RewrittenSource;
pub use self::verify::HistoryReport;

/// The workspace paths a commit holds (those that exist), as the reference stages them
/// with `git add -A --`. Everything else (the runtime directory, its stage and quarantine,
/// the install backup) is never committed.
pub const HISTORY_PATHS: &[&str] =
    &["core.md", "recent_events.jsonl", "commitments.jsonl", "relations.json", "sources", "topics", "timeline"];

/// The local `user.name` set when unset, shared with the reference's repositories.
pub const HISTORY_USER_NAME: &str = "OpenProgram Memory";

/// The local `user.email` set when unset, shared with the reference's repositories.
pub const HISTORY_USER_EMAIL: &str = "memory@openprogram.local";

/// The file in `.git/` that marks history as initialized; it holds `ready\n`.
pub const READY_MARKER: &str = "openprogram-memory-ready";

/// The message of the first commit.
pub const INIT_MESSAGE: &str = "memory: initialize history";

/// The content of [`READY_MARKER`].
const READY_CONTENT: &[u8] = b"ready\n";

/// The message of a commit that verification makes when no readable commit is left.
const REPAIR_MESSAGE: &str = "memory: repair history";

/// The Git history of one workspace.
pub struct History {
    root: PathBuf,
    git_dir: PathBuf,
    repo: gix::Repository,
    identity: Identity,
    report: HistoryReport,
}

impl std::fmt::Debug for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("History").field("root", &self.root).field("report", &self.report).finish_non_exhaustive()
    }
}

/// A commit whose objects are written but which no branch points at yet.
///
/// Dropping it without [`publish`](PreparedCommit::publish) leaves only unreachable
/// objects behind (what `git gc` prunes); the branch stays where it was.
#[derive(Debug)]
#[must_use = "a prepared commit is in history only once published"]
pub struct PreparedCommit<'h> {
    history: &'h History,
    id: ObjectId,
    parent: Option<ObjectId>,
    tree: ObjectId,
    summary: String,
    signature: gix::actor::Signature,
    /// The stat of the files on disk the tree holds, for the index.
    stats: Stats,
}

impl History {
    /// Open the workspace's history at `root`, creating it if absent (spec 01 §1.5): a
    /// repository at the root, the memory identity set locally if unset, the runtime
    /// directory excluded, a first commit [`INIT_MESSAGE`] (empty if there is nothing to
    /// commit) and the [`READY_MARKER`]. A repository the reference created is used as it is.
    ///
    /// Opening verifies and repairs history ([`History::verify`]); what it found is in
    /// [`History::report`]. Fails with `GIT_UNAVAILABLE` only if no repository can be
    /// opened or created at all.
    pub fn open_or_init(root: impl Into<PathBuf>) -> Result<History, Error> {
        let root = root.into();
        if !root.is_dir() {
            return Err(Error::new(ErrorCode::GitUnavailable, "the workspace root is not a directory")
                .with_path(root.display().to_string()));
        }
        let mut report = HistoryReport::default();
        let identity = layout::ensure(&root, &mut report)?;
        let git_dir = root.join(".git");
        let repo = open(&root)?;
        let mut history = History { root, git_dir, repo, identity, report: HistoryReport::default() };
        history.check_objects(&mut report);
        history.finish_init(&mut report).map_err(|error| {
            Error::new(ErrorCode::GitUnavailable, format!("cannot initialize history: {}", error.message()))
        })?;
        history.report = report;
        Ok(history)
    }

    /// Open history for a commit, as [`History::open_or_init`] does, but skip the check of
    /// every object when `HEAD` still names `verified`, the commit this process verified or
    /// published last, and the layout and ready marker are intact: a long-lived handle
    /// then pays the full verification once, not once per commit (on ws-10k it reads every
    /// object of the tree, most of a commit's time). Any difference verifies as at open.
    pub fn open_verified(root: impl Into<PathBuf>, verified: Option<&str>) -> Result<History, Error> {
        let root = root.into();
        if let Some(verified) = verified
            && root.is_dir()
        {
            let mut report = HistoryReport::default();
            if let Ok(identity) = layout::ensure(&root, &mut report)
                && report.repairs.is_empty()
                && report.problems.is_empty()
                && let Ok(repo) = open(&root)
            {
                let git_dir = root.join(".git");
                let ready = std::fs::read(git_dir.join(READY_MARKER)).is_ok_and(|bytes| bytes == READY_CONTENT);
                let history = History { root: root.clone(), git_dir, repo, identity, report };
                if ready && history.head().as_deref() == Some(verified) {
                    return Ok(history);
                }
            }
        }
        History::open_or_init(root)
    }

    /// Open the workspace's existing history for reading, without creating, verifying or
    /// repairing anything (so a reading verb writes nothing): `None` when the workspace
    /// has no `.git/HEAD`. Commit only through [`History::open_or_init`], under the lock.
    pub fn open_existing(root: impl Into<PathBuf>) -> Result<Option<History>, Error> {
        let root = root.into();
        let git_dir = root.join(".git");
        // Without `HEAD` it is no repository yet (`open_or_init` would create one there).
        if !git_dir.join("HEAD").is_file() {
            return Ok(None);
        }
        let repo = open(&root)?;
        let identity = Identity { name: HISTORY_USER_NAME.to_owned(), email: HISTORY_USER_EMAIL.to_owned() };
        Ok(Some(History { root, git_dir, repo, identity, report: HistoryReport::default() }))
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What the verification at open found and repaired.
    pub fn report(&self) -> &HistoryReport {
        &self.report
    }

    /// Check that `HEAD` resolves to a readable commit whose tree and blobs are all
    /// readable, and repair what is not (spec 04 I5): stale locks, an unreadable `HEAD`,
    /// ref or config, empty or corrupt object files, objects the current files can
    /// re-derive, a branch reset to its newest readable commit in the reflog, reflog
    /// entries naming lost commits, the index. What cannot be repaired is flagged in the
    /// report. Never touches a memory file and never fails.
    pub fn verify(&mut self) -> HistoryReport {
        let mut report = HistoryReport::default();
        match layout::ensure(&self.root, &mut report) {
            Ok(identity) => self.identity = identity,
            Err(error) => {
                report.problems.push(error.message().to_owned());
                return report;
            }
        }
        self.check_objects(&mut report);
        if let Err(error) = self.finish_init(&mut report) {
            report.problems.push(error.message().to_owned());
        }
        report
    }

    /// Commit the memory files as they are on disk, if they differ from `HEAD`'s tree.
    /// Returns the new commit's id, or `None` when nothing changed.
    pub fn commit(&self, message: &str) -> Result<Option<String>, Error> {
        self.prepare(message, &Changes::new())?.map(PreparedCommit::publish).transpose()
    }

    /// Write the objects of a commit holding the memory files on disk with `changes`
    /// (the transaction's staged whole-file changes) laid over them, without moving any
    /// ref. `message` is sanitized ([`sanitize_message`]). Returns `None` when the tree
    /// equals `HEAD`'s (nothing to commit).
    ///
    /// Paths of `changes` outside [`HISTORY_PATHS`] (`<runtime-dir>/runtime.json`) are
    /// left out. Fails with `GIT_COMMIT_FAILED` (`PATH_OUTSIDE_WORKSPACE` for a path that
    /// climbs out); per decision 2 the transaction then installs nothing.
    pub fn prepare(&self, message: &str, changes: &Changes) -> Result<Option<PreparedCommit<'_>>, Error> {
        let summary = sanitize_message(message);
        let parent = self.head_id().map_err(|why| Error::new(ErrorCode::GitCommitFailed, why))?;
        let (parent_tree, keep, head, cache) = match parent {
            Some(id) => {
                let tree = self.commit_tree(id).map_err(commit_failed("read the HEAD commit"))?;
                let keep = self.kept_entries(tree).map_err(commit_failed("read the HEAD tree"))?;
                // Both only save work: a tree that cannot be read means neither.
                let head = HeadTree::read(&self.repo, tree).unwrap_or_default();
                let cache = StatCache::load(&self.git_dir, head.blobs());
                (Some(tree), keep, head, cache)
            }
            None => (None, Vec::new(), HeadTree::default(), StatCache::default()),
        };
        let mut snapshot = Snapshot::scan(&self.root).map_err(|error| {
            Error::new(ErrorCode::GitCommitFailed, format!("cannot list the memory files: {error}")).with_source(error)
        })?;
        snapshot.apply(changes)?;
        let (tree, stats) = snapshot.write_tree(&self.repo, keep, &cache, &head)?;
        if parent_tree == Some(tree) {
            return Ok(None);
        }
        let signature = self.signature();
        let commit = gix::objs::Commit {
            tree,
            parents: parent.into_iter().collect(),
            author: signature.clone(),
            committer: signature.clone(),
            encoding: None,
            message: format!("{summary}\n").into(),
            extra_headers: Vec::new(),
        };
        let id = self.repo.write_object(&commit).map_err(commit_failed("write the commit"))?.detach();
        Ok(Some(PreparedCommit { history: self, id, parent, tree, summary, signature, stats }))
    }

    /// The newest commits, newest first, following first parents from `HEAD`, at most
    /// `limit` of them. The walk ends early at a commit that cannot be read (verification
    /// flags such damage).
    pub fn list(&self, limit: usize) -> Result<Vec<HistoryEntry>, Error> {
        read::list(self, limit)
    }

    /// The bytes of the memory files at revision `rev` (a full or abbreviated hex commit
    /// id, at least 4 digits), restricted to `paths` (files or directories; empty means
    /// every memory file). A path that did not exist at `rev` contributes nothing, so
    /// `restore REV PATH` deletes what is there now.
    ///
    /// `INVALID_ARGUMENT` for a malformed or ambiguous id or a path outside the memory
    /// paths, `PATH_OUTSIDE_WORKSPACE` for a path that climbs out or names private
    /// state, `MEMORY_NOT_FOUND` when no commit has that id, `GIT_UNAVAILABLE` when the
    /// revision's objects cannot be read.
    pub fn files_at(&self, rev: &str, paths: &[&str]) -> Result<std::collections::BTreeMap<String, Vec<u8>>, Error> {
        read::files_at(self, rev, paths)
    }

    /// The commit `HEAD` resolves to, as hex, or `None` before the first commit or when
    /// `HEAD` is unreadable.
    pub fn head(&self) -> Option<String> {
        self.head_id().ok().flatten().map(|id| id.to_string())
    }

    /// Resolve `HEAD` through the plain files: `Ok(None)` for an unborn branch, `Err`
    /// (with the reason) for an unreadable `HEAD` or ref.
    fn head_id(&self) -> Result<Option<ObjectId>, String> {
        match refs::read_head(&self.git_dir) {
            Head::Detached(id) => Ok(Some(id)),
            Head::Broken => Err("HEAD is unreadable".to_owned()),
            Head::Symbolic(name) => match refs::read_ref(&self.git_dir, &name) {
                RefValue::Missing => Ok(None),
                RefValue::Id(id) => Ok(Some(id)),
                RefValue::Broken => Err(format!("{name} is unreadable")),
            },
        }
    }

    /// The tree of commit `id`.
    fn commit_tree(&self, id: ObjectId) -> Result<ObjectId, gix::Error> {
        Ok(self.repo.find_commit(id)?.tree_id()?.detach())
    }

    /// The top-level entries of `tree` outside the memory paths.
    fn kept_entries(&self, tree: ObjectId) -> Result<Vec<gix::objs::tree::Entry>, gix::Error> {
        let tree = self.repo.find_tree(tree)?;
        let decoded = tree.decode()?;
        Ok(decoded
            .entries
            .iter()
            .filter(|entry| !HISTORY_PATHS.iter().any(|name| entry.filename == name.as_bytes()))
            .map(|entry| gix::objs::tree::Entry {
                mode: entry.mode,
                filename: entry.filename.to_owned(),
                oid: entry.oid.to_owned(),
            })
            .collect())
    }

    /// Every blob of `tree` under the memory paths: workspace-relative path → id.
    fn blobs(&self, tree: ObjectId) -> Result<std::collections::BTreeMap<String, ObjectId>, gix::Error> {
        Ok(HeadTree::read(&self.repo, tree)?.into_blobs())
    }

    /// Who commits, now, in the local time zone (as `git commit` records it).
    fn signature(&self) -> gix::actor::Signature {
        gix::actor::Signature {
            name: self.identity.name.as_str().into(),
            email: self.identity.email.as_str().into(),
            time: gix::date::Time::now_local_or_utc(),
        }
    }

    /// Make the first commit if the branch is unborn, and write the ready marker if it
    /// is missing or damaged.
    fn finish_init(&mut self, report: &mut HistoryReport) -> Result<(), Error> {
        let born = self.head_id().ok().flatten().is_some();
        if !born {
            let prepared = self.prepare(INIT_MESSAGE, &Changes::new())?;
            if let Some(prepared) = prepared {
                prepared.publish()?;
            }
        }
        let marker = self.git_dir.join(READY_MARKER);
        match std::fs::read(&marker) {
            Ok(bytes) if bytes == READY_CONTENT => return Ok(()),
            Ok(_) => report.repairs.push(format!("the marker .git/{READY_MARKER} was damaged; rewrote it")),
            Err(_) if born => report.repairs.push(format!("the marker .git/{READY_MARKER} was missing; restored it")),
            Err(_) => {}
        }
        refs::write_locked(&marker, READY_CONTENT).map_err(|error| {
            Error::new(ErrorCode::GitUnavailable, format!("cannot write the ready marker: {error}")).with_source(error)
        })
    }

    /// Reopen the repository (after repairs changed files under gix).
    fn reopen(&mut self) -> Result<(), Error> {
        self.repo = open(&self.root)?;
        Ok(())
    }

    /// Rewrite the index from `tree`, so that `git status` in the workspace is clean,
    /// with the stat of each file in `stats` (the others get none, so the next commit
    /// reads them). The index is a cache (Git rebuilds it from `HEAD`); the next commit
    /// trusts it only where it agrees with `HEAD` ([`StatCache`]).
    fn write_index(&self, tree: ObjectId, stats: &Stats) -> Result<(), gix::Error> {
        let mut index = self.repo.index_from_tree(&tree)?;
        for (entry, path) in index.entries_mut_with_paths() {
            if let Some(stat) = std::str::from_utf8(path).ok().and_then(|path| stats.get(path)) {
                entry.stat = *stat;
            }
        }
        index.write(gix::index::write::Options::default())
    }
}

impl PreparedCommit<'_> {
    /// The id the commit will have, as hex.
    pub fn id(&self) -> String {
        self.id.to_string()
    }

    /// The sanitized message.
    pub fn message(&self) -> &str {
        &self.summary
    }

    /// Move the branch `HEAD` is on (or a detached `HEAD`) to this commit, provided it
    /// still points at the parent this commit was prepared on, and refresh the index.
    /// Returns the commit id. Fails with `GIT_COMMIT_FAILED`.
    pub fn publish(self) -> Result<String, Error> {
        use gix::refs::Target;
        use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};

        let expected = match self.parent {
            Some(parent) => PreviousValue::MustExistAndMatch(Target::Object(parent)),
            None => PreviousValue::MustNotExist,
        };
        let kind = if self.parent.is_some() { "commit" } else { "commit (initial)" };
        let edit = RefEdit {
            change: Change::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    force_create_reflog: false,
                    message: format!("{kind}: {}", self.summary).into(),
                },
                expected,
                new: Target::Object(self.id),
            },
            name: "HEAD".try_into().map_err(|_| Error::new(ErrorCode::GitCommitFailed, "HEAD is not a ref name"))?,
            deref: true,
        };
        let mut time = gix::date::parse::TimeBuf::default();
        self.history
            .repo
            .edit_references_as([edit], Some(self.signature.to_ref(&mut time)))
            .map_err(commit_failed("move the branch"))?;
        // Best-effort: a stale index only makes `git status` noisy; verification rebuilds
        // a damaged one.
        let _ = self.history.write_index(self.tree, &self.stats);
        Ok(self.id.to_string())
    }
}

/// Open the repository at `root` with only its own configuration (not the user's or
/// the system's), so that history behaves the same on every machine.
fn open(root: &Path) -> Result<gix::Repository, Error> {
    gix::open_opts(root, gix::open::Options::isolated())
        .map_err(|error| Error::new(ErrorCode::GitUnavailable, format!("cannot open history: {error}")))
}
