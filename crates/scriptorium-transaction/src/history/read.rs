//! Reading history: the commit list with the paths each commit changed, and the memory
//! files at a revision (what `restore REV [PATH…]` brings back).

use std::collections::BTreeMap;

use gix::ObjectId;

use super::History;
use super::snapshot::normalize;
use crate::calendar::civil_from_days;
use crate::error::{Error, ErrorCode};
use crate::paths::workspace_relative;

/// The shortest abbreviated id accepted, as Git's minimum.
const MIN_ABBREV: usize = 4;

/// One commit of the history.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HistoryEntry {
    /// The full commit id, 40 lowercase hex digits.
    pub id: String,
    /// The commit time, in seconds since the Unix epoch.
    pub time: i64,
    /// The message, without its trailing newline.
    pub message: String,
    /// The workspace-relative paths of the files the commit added, changed or removed
    /// relative to its first parent (every file for the first commit), sorted.
    pub changed: Vec<String>,
}

impl HistoryEntry {
    /// The commit time as ISO 8601 in UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub fn iso_time(&self) -> String {
        let days = self.time.div_euclid(86_400);
        let secs = self.time.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", secs / 3600, secs % 3600 / 60, secs % 60)
    }
}

/// See [`History::list`].
pub(super) fn list(history: &History, limit: usize) -> Result<Vec<HistoryEntry>, Error> {
    let repo = &history.repo;
    let mut next = history.head_id().map_err(|why| Error::new(ErrorCode::GitUnavailable, why))?;
    let mut entries = Vec::new();
    while let Some(id) = next {
        if entries.len() >= limit {
            break;
        }
        let Ok(commit) = repo.find_commit(id) else { break };
        let tree = commit.tree_id().ok().map(|tree| tree.detach());
        let parent = commit.parent_ids().next().map(|parent| parent.detach());
        let parent_tree = parent.and_then(|parent| history.commit_tree(parent).ok());
        let mut changed = Vec::new();
        diff(repo, parent_tree, tree, "", &mut changed);
        changed.sort();
        entries.push(HistoryEntry {
            id: id.to_string(),
            time: commit.time().map_or(0, |time| time.seconds),
            message: String::from_utf8_lossy(commit.message_raw_sloppy()).trim_end().to_owned(),
            changed,
        });
        next = parent;
    }
    Ok(entries)
}

/// An entry of a decoded tree: whether it is a tree, and its id.
type Entries = BTreeMap<String, (bool, ObjectId)>;

/// The entries of tree `id` (none for `None` or an unreadable tree).
fn entries(repo: &gix::Repository, id: Option<ObjectId>) -> Entries {
    let Some(tree) = id.and_then(|id| repo.find_tree(id).ok()) else { return Entries::new() };
    let Ok(decoded) = tree.decode() else { return Entries::new() };
    decoded
        .entries
        .iter()
        .filter(|entry| !entry.mode.is_commit())
        .map(|entry| (entry.filename.to_string(), (entry.mode.is_tree(), entry.oid.to_owned())))
        .collect()
}

/// Collect into `out` the file paths that differ between trees `old` and `new`,
/// skipping subtrees whose ids are equal.
fn diff(repo: &gix::Repository, old: Option<ObjectId>, new: Option<ObjectId>, prefix: &str, out: &mut Vec<String>) {
    if old == new {
        return;
    }
    let old = entries(repo, old);
    let new = entries(repo, new);
    let names: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for name in names {
        let path = if prefix.is_empty() { name.clone() } else { format!("{prefix}/{name}") };
        let before = old.get(name).copied();
        let after = new.get(name).copied();
        if before == after {
            continue;
        }
        let tree_of = |side: Option<(bool, ObjectId)>| side.filter(|(is_tree, _)| *is_tree).map(|(_, id)| id);
        let is_file = |side: Option<(bool, ObjectId)>| side.is_some_and(|(is_tree, _)| !is_tree);
        if tree_of(before).is_some() || tree_of(after).is_some() {
            diff(repo, tree_of(before), tree_of(after), &path, out);
        }
        if is_file(before) || is_file(after) {
            out.push(path);
        }
    }
}

/// See [`History::files_at`].
pub(super) fn files_at(history: &History, rev: &str, paths: &[&str]) -> Result<BTreeMap<String, Vec<u8>>, Error> {
    let mut wanted = Vec::with_capacity(paths.len());
    for raw in paths {
        let relative = workspace_relative(raw)?;
        let path = normalize(&relative)?
            .ok_or_else(|| Error::new(ErrorCode::InvalidArgument, "not a memory path").with_path(*raw))?;
        wanted.push(path);
    }
    let id = resolve(history, rev)?;
    let tree = history
        .commit_tree(id)
        .map_err(|_| Error::new(ErrorCode::MemoryNotFound, format!("{rev} is not a commit")).with_detail("rev", rev))?;
    let mut files = BTreeMap::new();
    collect(&history.repo, tree, "", &wanted, &mut files)?;
    Ok(files)
}

/// Resolve a full or abbreviated hex commit id.
fn resolve(history: &History, rev: &str) -> Result<ObjectId, Error> {
    let rev = rev.trim().to_ascii_lowercase();
    let invalid =
        |why: &str| Error::new(ErrorCode::InvalidArgument, format!("{why}: {rev}")).with_detail("rev", rev.as_str());
    if rev.len() < MIN_ABBREV || rev.len() > 40 || !rev.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(invalid("a revision is 4 to 40 hex digits"));
    }
    let not_found =
        || Error::new(ErrorCode::MemoryNotFound, format!("no commit {rev}")).with_detail("rev", rev.as_str());
    if rev.len() == 40 {
        return ObjectId::from_hex(rev.as_bytes()).map_err(|_| invalid("not a commit id"));
    }
    let prefix = gix::hash::Prefix::from_hex(&rev).map_err(|_| invalid("not a commit id"))?;
    match history.repo.objects.lookup_prefix(prefix, None) {
        Ok(Some(Ok(id))) => Ok(id),
        Ok(Some(Err(()))) => Err(invalid("ambiguous revision")),
        Ok(None) => Err(not_found()),
        Err(error) => Err(Error::new(ErrorCode::GitUnavailable, format!("cannot look up {rev}: {error}"))),
    }
}

/// Collect the regular files of `tree` (at `prefix`) that lie in the memory paths and
/// under one of `wanted` (all of them when `wanted` is empty).
fn collect(
    repo: &gix::Repository,
    tree: ObjectId,
    prefix: &str,
    wanted: &[String],
    files: &mut BTreeMap<String, Vec<u8>>,
) -> Result<(), Error> {
    let unreadable = |id: ObjectId| {
        move |error: gix::Error| {
            Error::new(ErrorCode::GitUnavailable, format!("history object {id} is unreadable: {error}"))
        }
    };
    let found = repo.find_tree(tree).map_err(unreadable(tree))?;
    let decoded = found.decode().map_err(unreadable(tree))?;
    for entry in &decoded.entries {
        let name = entry.filename.to_string();
        let path = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        let id = entry.oid.to_owned();
        // Only memory paths come back, whatever else someone committed by hand.
        let Ok(Some(_)) = normalize(&path) else { continue };
        if entry.mode.is_tree() {
            if wanted.is_empty() || wanted.iter().any(|w| is_under(&path, w) || is_under(w, &path)) {
                collect(repo, id, &path, wanted, files)?;
            }
        } else if entry.mode.is_blob() && (wanted.is_empty() || wanted.iter().any(|w| is_under(&path, w))) {
            let mut blob = repo.find_blob(id).map_err(unreadable(id))?;
            files.insert(path, std::mem::take(&mut blob.data));
        }
    }
    Ok(())
}

/// Whether `path` is `dir` or lies below it.
fn is_under(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}
