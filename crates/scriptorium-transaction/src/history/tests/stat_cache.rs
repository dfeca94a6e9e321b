//! The index as a stat cache (P10): settled files get their stat recorded, a matching
//! entry spares the read, and anything that changed — even with size and mtime kept, or
//! an entry that disagrees with `HEAD` — is read and hashed again.

use std::fs::File;
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::super::stat_cache::stat_of;
use super::{TestResult, changes_for, git_ok, sample};
use crate::history::History;
use crate::test_support::TempDir;
use crate::test_support::write_tree;

const DAVE: &str = "topics/people/dave.md";

/// Set `path`'s mtime an hour back, so it counts as settled.
fn age(path: &Path) {
    let hour_ago = SystemTime::now() - Duration::from_secs(3600);
    File::options().write(true).open(path).and_then(|file| file.set_modified(hour_ago)).expect("set mtime");
}

/// The index entry of `path`: (stat, blob id).
fn index_entry(root: &Path, path: &str) -> (gix::index::entry::Stat, gix::ObjectId) {
    let index = gix::index::File::at(root.join(".git/index"), gix::hash::Kind::Sha1, false, Default::default())
        .expect("the index reads");
    let entry = index.entry_by_path(path.into()).expect("an index entry");
    (entry.stat, entry.id)
}

/// Every memory file aged, then committed: the commit records their stats.
fn committed_settled(root: &Path) -> Result<History, Box<dyn std::error::Error>> {
    sample(root);
    for path in ["core.md", DAVE, "topics/core.md", "sources/openprogram/_v2/sess.md", "timeline/2024.md"] {
        age(&root.join(path));
    }
    let history = History::open_or_init(root)?;
    // The first commit came before the files settled in the index; one more records them.
    write_tree(root, &[("topics/new.md", b"new\n")]);
    history.commit("record stats")?.ok_or("a commit")?;
    Ok(history)
}

#[test]
fn a_commit_records_the_stat_of_settled_files_only() -> TestResult {
    let dir = TempDir::new("stat-cache-record");
    let root = dir.path();
    let _history = committed_settled(root)?;
    let (stat, _) = index_entry(root, DAVE);
    assert_eq!(stat, stat_of(&std::fs::symlink_metadata(root.join(DAVE))?), "a settled file's stat is recorded");
    let (fresh, _) = index_entry(root, "topics/new.md");
    assert_eq!(fresh, gix::index::entry::Stat::default(), "a file written just now is not cached");
    // Git agrees the index describes the work tree.
    assert_eq!(git_ok(root, &["status", "--porcelain", "--", "topics", "core.md"]), "");
    Ok(())
}

#[test]
fn a_same_size_edit_with_the_old_mtime_is_still_committed() -> TestResult {
    let dir = TempDir::new("stat-cache-ctime");
    let root = dir.path();
    let history = committed_settled(root)?;
    let before = std::fs::symlink_metadata(root.join(DAVE))?;
    write_tree(root, &[(DAVE, b"Dave reviews APs.\n")]);
    File::options().write(true).open(root.join(DAVE))?.set_modified(before.modified()?)?;
    let id = history.commit("same size, same mtime")?.ok_or("the edit must be seen (ctime changed)")?;
    let files = history.files_at(&id, &[DAVE])?;
    assert_eq!(files.get(DAVE).map(Vec::as_slice), Some(&b"Dave reviews APs.\n"[..]));
    Ok(())
}

#[test]
fn a_matching_entry_is_trusted_only_when_it_agrees_with_head() -> TestResult {
    let dir = TempDir::new("stat-cache-trust");
    let root = dir.path();
    let history = committed_settled(root)?;
    let (_, head_blob) = index_entry(root, DAVE);
    // Change the file, then write an index whose entry claims the new stat has HEAD's
    // blob: a stat match is trusted as Git trusts it, so nothing looks changed.
    write_tree(root, &[(DAVE, b"edited behind the index's back\n")]);
    age(&root.join(DAVE));
    let forge = |id: gix::ObjectId| -> TestResult {
        let repo = gix::open(root)?;
        let tree = repo.head_commit()?.tree_id()?.detach();
        let mut index = repo.index_from_tree(&tree)?;
        let stat = stat_of(&std::fs::symlink_metadata(root.join(DAVE))?);
        for (entry, path) in index.entries_mut_with_paths() {
            if path == DAVE {
                entry.stat = stat;
                entry.id = id;
            }
        }
        index.write(Default::default())?;
        Ok(())
    };
    forge(head_blob)?;
    assert!(history.prepare("trusted", &changes_for("topics/unrelated.md", b"x\n"))?.is_some());
    let prepared = history.prepare("nothing", &Default::default())?;
    assert!(prepared.is_none(), "the matching entry was used: the file was not read");

    // The same stat with an id HEAD does not hold is not trusted: the file is read.
    let other = gix::open(root)?.write_blob(b"some other blob\n")?.detach();
    forge(other)?;
    let id = history.commit("read again")?.ok_or("the edit is seen")?;
    let files = history.files_at(&id, &[DAVE])?;
    assert_eq!(files.get(DAVE).map(Vec::as_slice), Some(&b"edited behind the index's back\n"[..]));
    Ok(())
}
