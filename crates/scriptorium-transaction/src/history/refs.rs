//! Plain-file access to `HEAD`, loose and packed refs and reflogs.
//!
//! Repair cannot go through gix's reference store: it refuses to open a repository
//! whose `HEAD` is empty and cannot edit a ref whose file holds garbage. These readers
//! treat every unparsable file as damage instead of an error, and the writers follow
//! Git's own lock protocol (`<file>.lock` created exclusively, then renamed over).

use std::io::{self, Write};
use std::path::Path;

use gix::ObjectId;

use super::layout::Identity;

/// How many symbolic hops a ref may take before it counts as broken (Git allows 5).
const MAX_SYMREF_DEPTH: usize = 5;

/// What `.git/HEAD` says.
pub(super) enum Head {
    /// `ref: <name>`: the branch HEAD is on (possibly unborn).
    Symbolic(String),
    /// A detached HEAD.
    Detached(ObjectId),
    /// Missing, empty or unparsable.
    Broken,
}

/// What a ref resolves to.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum RefValue {
    /// Neither a loose file nor a packed line: an unborn branch.
    Missing,
    /// A commit id.
    Id(ObjectId),
    /// A loose file that is empty, truncated or unparsable.
    Broken,
}

/// Read `.git/HEAD`.
pub(super) fn read_head(git_dir: &Path) -> Head {
    let Ok(text) = std::fs::read_to_string(git_dir.join("HEAD")) else { return Head::Broken };
    let text = text.trim_end();
    if let Some(name) = text.strip_prefix("ref:") {
        let name = name.trim();
        return if is_valid_ref_name(name) { Head::Symbolic(name.to_owned()) } else { Head::Broken };
    }
    parse_id(text).map_or(Head::Broken, Head::Detached)
}

/// Resolve the ref `name` (`refs/heads/main`) through loose files, then `packed-refs`.
pub(super) fn read_ref(git_dir: &Path, name: &str) -> RefValue {
    resolve(git_dir, name, 0)
}

fn resolve(git_dir: &Path, name: &str, depth: usize) -> RefValue {
    match std::fs::read(git_dir.join(name)) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let text = text.trim_end();
            if let Some(target) = text.strip_prefix("ref:") {
                let target = target.trim();
                if depth >= MAX_SYMREF_DEPTH || !is_valid_ref_name(target) {
                    return RefValue::Broken;
                }
                return resolve(git_dir, target, depth + 1);
            }
            parse_id(text).map_or(RefValue::Broken, RefValue::Id)
        }
        // A directory where the file would be is not this ref either.
        Err(_) => packed(git_dir)
            .into_iter()
            .find(|(packed_name, _)| packed_name == name)
            .map_or(RefValue::Missing, |(_, id)| RefValue::Id(id)),
    }
}

/// The parsable lines of `packed-refs` (a damaged file yields what it can).
fn packed(git_dir: &Path) -> Vec<(String, ObjectId)> {
    let Ok(text) = std::fs::read(git_dir.join("packed-refs")) else { return Vec::new() };
    String::from_utf8_lossy(&text)
        .lines()
        .filter(|line| !line.starts_with('#') && !line.starts_with('^'))
        .filter_map(|line| {
            let (id, name) = line.split_once(' ')?;
            Some((name.trim().to_owned(), parse_id(id)?))
        })
        .collect()
}

/// Every branch name (`refs/heads/…`) with a loose file or a packed line, sorted.
pub(super) fn branches(git_dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    collect_loose(&git_dir.join("refs").join("heads"), "refs/heads", &mut names);
    names.extend(packed(git_dir).into_iter().map(|(name, _)| name).filter(|name| name.starts_with("refs/heads/")));
    names.sort();
    names.dedup();
    names
}

fn collect_loose(dir: &Path, prefix: &str, names: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let Ok(name) = entry.file_name().into_string() else { continue };
        let full = format!("{prefix}/{name}");
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => collect_loose(&entry.path(), &full, names),
            Ok(kind) if kind.is_file() && !name.ends_with(".lock") => names.push(full),
            _ => {}
        }
    }
}

/// Point `HEAD` at the branch `name`.
pub(super) fn write_head(git_dir: &Path, name: &str) -> io::Result<()> {
    write_locked(&git_dir.join("HEAD"), format!("ref: {name}\n").as_bytes())
}

/// Write the loose ref `name` (or `HEAD` when detached) to point at `id`.
pub(super) fn write_ref(git_dir: &Path, name: &str, id: ObjectId) -> io::Result<()> {
    write_locked(&git_dir.join(name), format!("{id}\n").as_bytes())
}

/// The commit ids a reflog of `names` mentions, newest entry first, each entry's new id
/// before its old one, without repeats and without the all-zero id.
pub(super) fn reflog_ids(git_dir: &Path, names: &[&str]) -> Vec<ObjectId> {
    let mut ids = Vec::new();
    for name in names {
        let Ok(bytes) = std::fs::read(git_dir.join("logs").join(name)) else { continue };
        let text = String::from_utf8_lossy(&bytes);
        for line in text.lines().rev() {
            let Some((old, new)) = parse_reflog_line(line) else { continue };
            for id in [new, old] {
                if !id.is_null() && !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
    }
    ids
}

fn parse_reflog_line(line: &str) -> Option<(ObjectId, ObjectId)> {
    let mut fields = line.splitn(3, ' ');
    Some((parse_id(fields.next()?)?, parse_id(fields.next()?)?))
}

/// Append one entry to the reflog of `name` (creating it), as Git writes them.
pub(super) fn append_reflog(
    git_dir: &Path,
    name: &str,
    old: Option<ObjectId>,
    new: ObjectId,
    who: &Identity,
    message: &str,
) -> io::Result<()> {
    let path = git_dir.join("logs").join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let old = old.unwrap_or_else(|| ObjectId::null(gix::hash::Kind::Sha1));
    let now = gix::date::Time::now_local_or_utc();
    let mut time = gix::date::parse::TimeBuf::default();
    let line = format!("{old} {new} {} <{}> {}\t{message}\n", who.name, who.email, now.to_str(&mut time));
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    file.write_all(line.as_bytes())
}

/// Drop every reflog entry (in every reflog) that names a commit for which `keep` is
/// false, so that `git fsck` does not walk into objects that are gone. Returns how many
/// entries were dropped.
pub(super) fn prune_reflogs(git_dir: &Path, keep: &mut dyn FnMut(ObjectId) -> bool) -> io::Result<usize> {
    let mut files = Vec::new();
    collect_files(&git_dir.join("logs"), &mut files);
    let mut dropped = 0;
    for path in files {
        let bytes = std::fs::read(&path)?;
        let text = String::from_utf8_lossy(&bytes);
        let mut kept = String::with_capacity(text.len());
        let mut changed = false;
        for line in text.lines() {
            let wanted = match parse_reflog_line(line) {
                Some((old, new)) => [old, new].into_iter().all(|id| id.is_null() || keep(id)),
                None => false,
            };
            if wanted {
                kept.push_str(line);
                kept.push('\n');
            } else {
                dropped += 1;
                changed = true;
            }
        }
        if changed {
            write_locked(&path, kept.as_bytes())?;
        }
    }
    Ok(dropped)
}

fn collect_files(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => collect_files(&entry.path(), files),
            Ok(kind) if kind.is_file() && !entry.file_name().to_string_lossy().ends_with(".lock") => {
                files.push(entry.path());
            }
            _ => {}
        }
    }
}

/// Replace `path` with `bytes` through Git's lock protocol: create `<path>.lock`
/// exclusively (so a concurrent Git process and this one never both write), write it and
/// rename it over `path`.
///
/// Not synced, like every write Git and gix make to these files: verification repairs
/// whatever a power loss leaves of them, and syncing would cost more than the commit.
pub(super) fn write_locked(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let parent = path.parent().ok_or_else(|| io::Error::other("a file under .git has a parent"))?;
    std::fs::create_dir_all(parent)?;
    let mut lock_name = path.file_name().unwrap_or_default().to_os_string();
    lock_name.push(".lock");
    let lock = parent.join(lock_name);
    // If the lock exists, someone else holds it: fail without touching it.
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&lock)?;
    let written = file.write_all(bytes).and_then(|()| std::fs::rename(&lock, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&lock);
    }
    written
}

/// Parse a full hexadecimal SHA-1 id.
pub(super) fn parse_id(text: &str) -> Option<ObjectId> {
    let text = text.trim();
    (text.len() == 40).then(|| ObjectId::from_hex(text.as_bytes()).ok()).flatten()
}

/// A conservative check of a ref name read from a file: under `refs/`, no `..`, no
/// control characters or spaces, no empty component.
fn is_valid_ref_name(name: &str) -> bool {
    name.starts_with("refs/")
        && !name.contains("..")
        && !name.ends_with(".lock")
        && name.split('/').all(|part| !part.is_empty())
        && name.chars().all(|c| !c.is_control() && c != ' ' && c != '\\')
}
