//! Verification and repair of the object store and refs on open (spec 04 I5, T12).
//!
//! Neither gix nor Git syncs loose objects or refs, so after a power loss any recently
//! written one may be empty or torn. The repair order, cheapest and safest first:
//! 1. remove empty object files (they hold nothing, and their presence would stop the
//!    object from ever being written again);
//! 2. check that `HEAD`'s commit, tree and blobs are readable; set unreadable object
//!    files aside in `.git/openprogram-memory-damaged/`;
//! 3. rewrite every object the current memory files re-derive (after a crash the files
//!    are usually exactly the newest commit's tree);
//! 4. if `HEAD` is still incomplete, reset its branch to the newest complete commit the
//!    reflogs name (or its own first parents); if there is none, commit the current files
//!    as a new root commit and flag that earlier history is out of reach;
//! 5. drop reflog entries that name lost commits, and flag any object still missing that
//!    a branch's history refers to;
//! 6. rebuild an unreadable index (or any index after a repair) from `HEAD`.
//!
//! Nothing here reads a memory file except to re-derive objects, and nothing writes one.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use gix::ObjectId;

use super::head_tree::HeadTree;
use super::refs::{self, Head, RefValue};
use super::snapshot::{Snapshot, Stats};
use super::stat_cache::StatCache;
use super::{History, READY_MARKER, REPAIR_MESSAGE};

/// Where object files that do not decode are set aside (never deleted: they are not empty).
const DAMAGED_DIR: &str = "openprogram-memory-damaged";

/// How many object ids a problem sentence names before it says "and N more".
const MAX_NAMED: usize = 5;

/// What verification found and did. Clean when both lists are empty.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HistoryReport {
    /// Damage that was repaired, one sentence each, in the order it was repaired.
    pub repairs: Vec<String>,
    /// Damage that remains (history is flagged), one sentence each.
    pub problems: Vec<String>,
}

impl HistoryReport {
    /// Whether nothing was damaged.
    pub fn is_clean(&self) -> bool {
        self.repairs.is_empty() && self.problems.is_empty()
    }

    /// Whether some damage could not be repaired.
    pub fn is_flagged(&self) -> bool {
        !self.problems.is_empty()
    }
}

/// The state of `HEAD`.
enum HeadState {
    /// The branch has no commit yet.
    Unborn,
    /// `HEAD` resolves to a commit whose objects are all readable.
    Complete(ObjectId),
    /// `HEAD` or its ref is unreadable (`None`), or names an incomplete commit.
    Damaged(Option<ObjectId>),
}

impl History {
    /// Steps 1–6 of the module documentation. Call after `layout::ensure`.
    pub(super) fn check_objects(&mut self, report: &mut HistoryReport) {
        let mut lost = remove_empty_objects(&self.git_dir, report);
        if let Err(error) = self.reopen() {
            report.problems.push(error.message().to_owned());
            return;
        }
        let marker = self.git_dir.join(READY_MARKER).exists();
        let mut checker = Checker::new(&self.repo, &self.git_dir);
        let state = self.head_state(&mut checker, marker);
        let index_damaged = index_is_damaged(&self.git_dir);
        if lost.is_empty() && !matches!(state, HeadState::Damaged(_)) {
            if index_damaged && let HeadState::Complete(head) = state {
                self.rebuild_index(head, report, "the index was unreadable; rebuilt it from HEAD");
            }
            return;
        }

        let unreadable = checker.bad.clone();
        set_aside(&self.git_dir, &unreadable, report);
        lost.extend(unreadable);
        if let Err(why) = self.rederive() {
            report.problems.push(format!("cannot re-derive objects from the memory files: {why}"));
        }

        let mut checker = Checker::new(&self.repo, &self.git_dir);
        let head = match self.head_state(&mut checker, marker) {
            HeadState::Complete(head) => Some(head),
            HeadState::Unborn => None,
            HeadState::Damaged(current) => self.reset_head(current, &mut checker, report),
        };

        let still_lost: Vec<ObjectId> = lost.iter().copied().filter(|id| !checker.object(*id)).collect();
        if !still_lost.is_empty() {
            let mut keep = |id: ObjectId| checker.commit(id);
            match refs::prune_reflogs(&self.git_dir, &mut keep) {
                Ok(0) => {}
                Ok(dropped) => report.repairs.push(format!("dropped {dropped} reflog entries that named lost commits")),
                Err(error) => report.problems.push(format!("cannot prune the reflogs: {error}")),
            }
            let missing = self.missing_in_history();
            if !missing.is_empty() {
                report.problems.push(format!(
                    "{} objects that history still refers to are lost ({}); older checkpoints may not restore",
                    missing.len(),
                    name_some(&missing)
                ));
            }
        }
        if let Some(head) = head {
            self.rebuild_index(head, report, "rebuilt the index from HEAD");
        }
    }

    /// Write again every object the current memory files make, and the empty tree and
    /// blob (any history may name them, and they cost nothing).
    fn rederive(&self) -> Result<(), String> {
        let snapshot = Snapshot::scan(&self.root).map_err(|error| error.to_string())?;
        // No stat cache: the point is to write every object again.
        snapshot
            .write_tree(&self.repo, Vec::new(), &StatCache::default(), &HeadTree::default())
            .map_err(|error| error.message().to_owned())?;
        self.repo.write_object(gix::objs::Tree::empty()).map_err(|error| error.to_string())?;
        self.repo.write_blob([]).map_err(|error| error.to_string())?;
        Ok(())
    }

    /// Resolve `HEAD` and check its commit. An unborn branch after the ready marker was
    /// written means the ref was lost.
    fn head_state(&self, checker: &mut Checker<'_>, marker: bool) -> HeadState {
        match self.head_id() {
            Ok(Some(id)) if checker.commit(id) => HeadState::Complete(id),
            Ok(Some(id)) => HeadState::Damaged(Some(id)),
            Ok(None) if marker => HeadState::Damaged(None),
            Ok(None) => HeadState::Unborn,
            Err(_) => HeadState::Damaged(None),
        }
    }

    /// Point `HEAD`'s branch at the newest complete commit the reflogs or `current`'s
    /// first parents name; failing that, at a new root commit of the current files.
    /// Returns the new `HEAD`.
    fn reset_head(
        &self,
        current: Option<ObjectId>,
        checker: &mut Checker<'_>,
        report: &mut HistoryReport,
    ) -> Option<ObjectId> {
        let target = match refs::read_head(&self.git_dir) {
            Head::Symbolic(name) => name,
            Head::Detached(_) | Head::Broken => "HEAD".to_owned(),
        };
        let was = current.map_or_else(|| "an unreadable value".to_owned(), |id| id.to_string());
        let from_reflog = refs::reflog_ids(&self.git_dir, &[target.as_str(), "HEAD"])
            .into_iter()
            .find(|id| Some(*id) != current && checker.commit(*id));
        // Without a usable reflog, the first parents of a readable HEAD commit are next.
        let good = from_reflog.or_else(|| {
            let mut seen = HashSet::new();
            let mut next = current;
            while let Some(id) = next.and_then(|id| self.first_parent(id)) {
                if !seen.insert(id) || checker.commit(id) {
                    return Some(id).filter(|id| checker.commit(*id));
                }
                next = Some(id);
            }
            None
        });
        if let Some(good) = good {
            return match self.move_ref(&target, good, "reset to the newest readable commit") {
                Ok(()) => {
                    report.repairs.push(format!("{target} pointed at {was}, which is unreadable; reset it to {good}"));
                    Some(good)
                }
                Err(error) => {
                    report.problems.push(format!("cannot reset {target} to {good}: {error}"));
                    None
                }
            };
        }
        match self.restart(&target) {
            Ok(id) => {
                report.problems.push(format!(
                    "{target} pointed at {was} and no readable commit was left; \
                     committed the current files as a new root commit {id}"
                ));
                Some(id)
            }
            Err(why) => {
                report.problems.push(format!("{target} is unreadable and cannot be restarted: {why}"));
                None
            }
        }
    }

    /// The first parent of commit `id`, if it can be read.
    fn first_parent(&self, id: ObjectId) -> Option<ObjectId> {
        self.repo.find_commit(id).ok()?.parent_ids().next().map(|parent| parent.detach())
    }

    /// Write `target` (a branch, or `HEAD` when detached) and log the move.
    /// The old value is not logged: it names a lost commit, which `git fsck` would then
    /// report through the reflog.
    fn move_ref(&self, target: &str, new: ObjectId, why: &str) -> std::io::Result<()> {
        refs::write_ref(&self.git_dir, target, new)?;
        let message = format!("{REPAIR_MESSAGE}: {why}");
        refs::append_reflog(&self.git_dir, target, None, new, &self.identity, &message)?;
        if target != "HEAD" {
            refs::append_reflog(&self.git_dir, "HEAD", None, new, &self.identity, &message)?;
        }
        Ok(())
    }

    /// Commit the current memory files as a parentless commit and point `target` at it.
    fn restart(&self, target: &str) -> Result<ObjectId, String> {
        let snapshot = Snapshot::scan(&self.root).map_err(|error| error.to_string())?;
        let (tree, _) = snapshot
            .write_tree(&self.repo, Vec::new(), &StatCache::default(), &HeadTree::default())
            .map_err(|error| error.message().to_owned())?;
        let signature = self.signature();
        let commit = gix::objs::Commit {
            tree,
            parents: Default::default(),
            author: signature.clone(),
            committer: signature,
            encoding: None,
            message: format!("{REPAIR_MESSAGE}\n").into(),
            extra_headers: Vec::new(),
        };
        let id = self.repo.write_object(&commit).map_err(|error| error.to_string())?.detach();
        self.move_ref(target, id, "no readable commit left").map_err(|error| error.to_string())?;
        Ok(id)
    }

    /// Objects that `HEAD` or a branch reaches through commits and trees but that are
    /// missing or unreadable.
    fn missing_in_history(&self) -> Vec<ObjectId> {
        // A fresh checker: the caller's has also seen objects that no history reaches.
        let mut checker = Checker::new(&self.repo, &self.git_dir);
        let mut tips: Vec<ObjectId> = refs::branches(&self.git_dir)
            .iter()
            .filter_map(|name| match refs::read_ref(&self.git_dir, name) {
                RefValue::Id(id) => Some(id),
                RefValue::Missing | RefValue::Broken => None,
            })
            .collect();
        tips.extend(self.head_id().ok().flatten());
        let mut seen = HashSet::new();
        while let Some(id) = tips.pop() {
            if !seen.insert(id) {
                continue;
            }
            checker.commit(id);
            if let Ok(commit) = self.repo.find_commit(id) {
                tips.extend(commit.parent_ids().map(|parent| parent.detach()));
            }
        }
        checker.bad.iter().copied().collect()
    }

    fn rebuild_index(&self, head: ObjectId, report: &mut HistoryReport, what: &str) {
        match self.commit_tree(head).and_then(|tree| self.write_index(tree, &Stats::new())) {
            Ok(()) => report.repairs.push(what.to_owned()),
            Err(error) => report.problems.push(format!("cannot rebuild the index: {error}")),
        }
    }
}

/// Reads objects once each and remembers which are complete.
pub(super) struct Checker<'r> {
    repo: &'r gix::Repository,
    objects_dir: PathBuf,
    /// Objects (blobs, and trees or commits with everything below them) known complete.
    good: HashSet<ObjectId>,
    /// Objects that are missing or do not decode.
    bad: BTreeSet<ObjectId>,
}

impl<'r> Checker<'r> {
    pub(super) fn new(repo: &'r gix::Repository, git_dir: &Path) -> Self {
        Checker { repo, objects_dir: git_dir.join("objects"), good: HashSet::new(), bad: BTreeSet::new() }
    }

    /// Whether commit `id`, its tree and everything below it are readable.
    pub(super) fn commit(&mut self, id: ObjectId) -> bool {
        if self.good.contains(&id) {
            return true;
        }
        let tree = match self.repo.find_commit(id).and_then(|commit| commit.tree_id().map(|tree| tree.detach())) {
            Ok(tree) => tree,
            Err(_) => {
                self.bad.insert(id);
                return false;
            }
        };
        let complete = self.tree(tree);
        if complete {
            self.good.insert(id);
        }
        complete
    }

    /// Whether tree `id` and everything below it are readable. Checks every entry, so
    /// that all damage is found at once.
    fn tree(&mut self, id: ObjectId) -> bool {
        if self.good.contains(&id) {
            return true;
        }
        // gix answers for the empty tree without reading it; `git fsck` wants the file.
        if !self.repo.objects.exists_without_refresh(&id) {
            self.bad.insert(id);
            return false;
        }
        let children: Vec<(bool, ObjectId)> = match self.repo.find_tree(id).and_then(|tree| {
            Ok(tree
                .decode()?
                .entries
                .iter()
                .filter(|entry| !entry.mode.is_commit())
                .map(|entry| (entry.mode.is_tree(), entry.oid.to_owned()))
                .collect())
        }) {
            Ok(children) => children,
            Err(_) => {
                self.bad.insert(id);
                return false;
            }
        };
        let mut complete = true;
        for (is_tree, child) in children {
            complete &= if is_tree { self.tree(child) } else { self.object(child) };
        }
        if complete {
            self.good.insert(id);
        }
        complete
    }

    /// Whether object `id` is readable: a loose one is decoded in full (a torn file fails
    /// to inflate); a packed one only by header, since Git syncs packs when it writes them.
    fn object(&mut self, id: ObjectId) -> bool {
        if self.good.contains(&id) {
            return true;
        }
        let readable = if loose_path(&self.objects_dir, id).exists() {
            self.repo.find_object(id).is_ok()
        } else {
            // The existence check first: gix reports the empty blob and tree as present
            // even when no file holds them.
            self.repo.objects.exists_without_refresh(&id) && self.repo.find_header(id).is_ok()
        };
        if readable {
            self.good.insert(id);
        } else {
            self.bad.insert(id);
        }
        readable
    }
}

/// `.git/objects/ab/cdef…` for `id`.
fn loose_path(objects_dir: &Path, id: ObjectId) -> PathBuf {
    let hex = id.to_string();
    objects_dir.join(hex.get(..2).unwrap_or_default()).join(hex.get(2..).unwrap_or_default())
}

/// Delete every empty loose object file and return the ids they stood for.
fn remove_empty_objects(git_dir: &Path, report: &mut HistoryReport) -> BTreeSet<ObjectId> {
    let mut removed = BTreeSet::new();
    let Ok(dirs) = std::fs::read_dir(git_dir.join("objects")) else { return removed };
    for dir in dirs.flatten() {
        let dir_name = dir.file_name().to_string_lossy().into_owned();
        if dir_name.len() != 2 || !dir_name.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let Ok(files) = std::fs::read_dir(dir.path()) else { continue };
        for file in files.flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            let Some(id) = refs::parse_id(&format!("{dir_name}{name}")) else { continue };
            let empty = file.metadata().is_ok_and(|metadata| metadata.is_file() && metadata.len() == 0);
            if empty && std::fs::remove_file(file.path()).is_ok() {
                removed.insert(id);
            }
        }
    }
    if !removed.is_empty() {
        report.repairs.push(format!("removed {} empty object files ({})", removed.len(), name_some(&removed)));
    }
    removed
}

/// Move the loose files of unreadable objects into [`DAMAGED_DIR`], so that the objects
/// can be written again.
fn set_aside(git_dir: &Path, ids: &BTreeSet<ObjectId>, report: &mut HistoryReport) {
    let objects = git_dir.join("objects");
    let aside = git_dir.join(DAMAGED_DIR);
    let mut moved = Vec::new();
    for id in ids {
        let path = loose_path(&objects, *id);
        if path.exists()
            && std::fs::create_dir_all(&aside).is_ok()
            && std::fs::rename(&path, aside.join(id.to_string())).is_ok()
        {
            moved.push(*id);
        }
    }
    if !moved.is_empty() {
        report.repairs.push(format!(
            "set {} unreadable object files aside in .git/{DAMAGED_DIR} ({})",
            moved.len(),
            name_some(&moved)
        ));
    }
}

/// Whether `.git/index` exists and fails to load with its checksum verified.
fn index_is_damaged(git_dir: &Path) -> bool {
    let path = git_dir.join("index");
    path.exists()
        && gix::index::File::at(&path, gix::hash::Kind::Sha1, false, gix::index::decode::Options::default()).is_err()
}

/// The first few ids, then how many more.
fn name_some<'a>(ids: impl IntoIterator<Item = &'a ObjectId>) -> String {
    let ids: Vec<String> = ids.into_iter().map(ToString::to_string).collect();
    let named: Vec<&str> = ids.iter().take(MAX_NAMED).map(String::as_str).collect();
    match ids.len().saturating_sub(MAX_NAMED) {
        0 => named.join(", "),
        more => format!("{} and {more} more", named.join(", ")),
    }
}
