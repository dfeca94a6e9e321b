//! The cached revision always equals the full computation: on the golden vectors, after
//! random edits (with the clock pushed forward so that unchanged files are trusted and
//! the reuse path runs), and for a same-size rewrite that restores the mtime, which only
//! the racily-clean rule catches.

use std::fs::{self, File, FileTimes};
use std::path::Path;
use std::time::Duration;

use proptest::prelude::*;

use super::*;
use crate::revision::{RUNTIME_DIR, revision, runtime_dir_name};
use crate::test_support::{TempDir, vectors, write_tree};
use crate::vfs::RealVfs;

fn full(root: &Path) -> String {
    let vfs = RealVfs::new(root);
    revision(&vfs, runtime_dir_name(&vfs).expect("stat")).expect("revision")
}

/// A clock one hour ahead: every file on disk is old enough to be trusted.
fn later() -> i128 {
    now_ns() + 3_600 * 1_000_000_000
}

#[test]
fn equals_the_full_revision_on_every_vector_tree_cold_and_warm() {
    let dir = vectors().join("transaction");
    let mut trees = std::collections::BTreeSet::new();
    for case in fs::read_dir(&dir).expect("transaction vectors") {
        let case = case.expect("entry").path();
        let input: serde_json::Value =
            serde_json::from_slice(&fs::read(case.join("input.json")).expect("input")).expect("JSON");
        trees.insert(match input.get("before").and_then(serde_json::Value::as_str) {
            Some(resource) => vectors().join(resource),
            None => case.join("before"),
        });
        trees.insert(case.join("after"));
    }
    let mut checked = 0;
    for before in trees.iter().filter(|tree| tree.is_dir()) {
        let mut cache = RevisionCache::default();
        let runtime = runtime_dir_name(&RealVfs::new(before)).expect("stat");
        let cold = cache.revision_at(before, runtime, later()).expect("cold");
        let warm = cache.revision_at(before, runtime, later()).expect("warm");
        assert_eq!(cold.0, full(before), "{}", before.display());
        assert_eq!(warm.0, cold.0);
        assert_eq!(warm.1, 0, "an unchanged, trusted tree is not read again");
        checked += 1;
    }
    assert!(checked >= 10, "{checked} vector trees");
}

#[test]
fn only_files_from_the_first_change_on_are_read_again() {
    let temp = TempDir::new("revcache-suffix");
    write_tree(temp.path(), &[("a.md", b"a"), ("b/c.md", b"c"), ("b-d.md", b"d"), ("e.md", b"e")]);
    let mut cache = RevisionCache::default();
    assert_eq!(cache.revision_at(temp.path(), RUNTIME_DIR, later()).expect("rev").1, 4);
    // `b-d.md` sorts after `b/c.md`: it and `e.md` are hashed again, nothing before it.
    replace(&temp.path().join("b-d.md"), b"changed");
    let (revision, read) = cache.revision_at(temp.path(), RUNTIME_DIR, later()).expect("rev");
    assert_eq!((revision, read), (full(temp.path()), 2));
}

#[test]
fn fresh_files_are_not_trusted_so_a_same_size_same_mtime_rewrite_is_seen() {
    let temp = TempDir::new("revcache-racy");
    write_tree(temp.path(), &[("topics/a.md", b"first"), ("topics/b.md", b"other")]);
    let path = temp.path().join("topics/a.md");
    let mtime = fs::metadata(&path).expect("stat").modified().expect("mtime");
    let mut cache = RevisionCache::default();
    assert_eq!(cache.revision(temp.path(), RUNTIME_DIR).expect("rev"), full(temp.path()));
    // In place (same inode), same length, the old mtime put back: only the ctime may
    // differ, and within one clock tick it does not.
    fs::write(&path, b"secnd").expect("rewrite");
    File::options()
        .write(true)
        .open(&path)
        .and_then(|file| file.set_times(FileTimes::new().set_modified(mtime)))
        .expect("set mtime");
    let (revision, read) = cache.revision_at(temp.path(), RUNTIME_DIR, now_ns()).expect("rev");
    assert_eq!(revision, full(temp.path()));
    // Both files were hashed less than 2 s ago: neither is trusted. `a.md` is hashed
    // again with `b.md` after it (and first read to compare when its stat is the same).
    assert!(read == 2 || read == 3, "{read}");
}

#[test]
fn an_untrusted_file_that_did_not_change_is_read_but_what_follows_is_reused() {
    let temp = TempDir::new("revcache-racy-same");
    write_tree(temp.path(), &[("topics/a.md", b"first"), ("topics/b.md", b"other"), ("topics/c.md", b"third")]);
    let mut cache = RevisionCache::default();
    assert_eq!(cache.revision(temp.path(), RUNTIME_DIR).expect("rev"), full(temp.path()));
    let (revision, read) = cache.revision_at(temp.path(), RUNTIME_DIR, now_ns()).expect("rev");
    assert_eq!((revision, read), (full(temp.path()), 3), "each racy file is read once, none hashed again");
    // An hour later they are trusted: nothing is read.
    assert_eq!(cache.revision_at(temp.path(), RUNTIME_DIR, later()).expect("rev").1, 3);
    assert_eq!(cache.revision_at(temp.path(), RUNTIME_DIR, later()).expect("rev").1, 0);
}

#[test]
fn an_error_leaves_no_half_built_cache() {
    let temp = TempDir::new("revcache-error");
    write_tree(temp.path(), &[("a.md", b"a")]);
    let mut cache = RevisionCache::default();
    cache.revision_at(temp.path(), RUNTIME_DIR, later()).expect("rev");
    assert!(cache.revision_at(&temp.path().join("missing"), RUNTIME_DIR, later()).is_err());
    assert!(cache.files.is_empty());
    assert_eq!(cache.revision_at(temp.path(), RUNTIME_DIR, later()).expect("rev").0, full(temp.path()));
}

/// Write `bytes` to a new inode and rename it over `path`, as an install does, so the
/// stat differs from any earlier version even within one clock tick.
fn replace(path: &Path, bytes: &[u8]) {
    let temp = path.with_extension("tmp-new");
    fs::write(&temp, bytes).expect("write");
    fs::rename(&temp, path).expect("rename");
}

#[derive(Clone, Debug)]
enum Op {
    Replace(usize, Vec<u8>),
    Remove(usize),
    Link(usize),
}

const PATHS: [&str; 9] = [
    "a.md",
    "a/b.md",
    "a-c.md",
    "topics/x.md",
    "topics/y/z.md",
    "sources/p/_v2/t.md",
    ".scriptorium/runtime.json",
    ".scriptorium/write.lock",
    ".git/HEAD",
];

fn op() -> impl Strategy<Value = Op> {
    let index = 0..PATHS.len();
    prop_oneof![
        4 => (index.clone(), proptest::collection::vec(any::<u8>(), 0..8)).prop_map(|(i, b)| Op::Replace(i, b)),
        2 => index.clone().prop_map(Op::Remove),
        1 => index.prop_map(Op::Link),
    ]
}

fn apply(root: &Path, op: &Op) {
    let path = |i: &usize| root.join(PATHS.get(*i).copied().unwrap_or("a.md"));
    match op {
        Op::Replace(i, bytes) => {
            let target = path(i);
            let _ = fs::remove_dir_all(&target);
            let _ = fs::remove_file(&target);
            fs::create_dir_all(target.parent().expect("parent")).expect("mkdir");
            replace(&target, bytes);
        }
        Op::Remove(i) => {
            let _ = fs::remove_file(path(i));
        }
        Op::Link(i) => {
            let target = path(i);
            let _ = fs::remove_file(&target);
            if fs::create_dir_all(target.parent().expect("parent")).is_ok() {
                let _ = std::os::unix::fs::symlink(root.join("a.md"), &target);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_edits_keep_the_cache_equal_to_the_full_revision(ops in proptest::collection::vec(op(), 1..12)) {
        let temp = TempDir::new("revcache-prop");
        write_tree(temp.path(), &[("a.md", b"seed"), ("topics/x.md", b"x")]);
        let mut trusting = RevisionCache::default();
        let mut honest = RevisionCache::default();
        for op in &ops {
            apply(temp.path(), op);
            let want = full(temp.path());
            prop_assert_eq!(&trusting.revision_at(temp.path(), RUNTIME_DIR, later()).expect("rev").0, &want);
            prop_assert_eq!(&honest.revision(temp.path(), RUNTIME_DIR).expect("rev"), &want);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Each op stands for an install that changed one path: the revision after it,
    /// from the last listing with that path stated again, is the full one (internal
    /// paths, links and removals included).
    #[test]
    fn a_revision_after_install_equals_the_full_revision(ops in proptest::collection::vec(op(), 1..12)) {
        let temp = TempDir::new("revcache-install");
        write_tree(temp.path(), &[("a.md", b"seed"), ("topics/x.md", b"x"), (".scriptorium/runtime.json", b"{}")]);
        let mut cache = RevisionCache::default();
        prop_assert_eq!(&cache.revision(temp.path(), RUNTIME_DIR).expect("rev"), &full(temp.path()));
        for op in &ops {
            apply(temp.path(), op);
            let (Op::Replace(i, _) | Op::Remove(i) | Op::Link(i)) = op;
            let changed = PATHS.get(*i).copied().unwrap_or("a.md");
            // The installed bytes as the caller holds them, as an update passes them.
            let installed = match op {
                Op::Replace(_, bytes) => Some(bytes.clone()),
                _ => None,
            };
            let known = |path: &[u8]| installed.as_deref().filter(|_| path == changed.as_bytes());
            let after = cache.revision_after_install(temp.path(), RUNTIME_DIR, [changed], &known).expect("rev");
            prop_assert_eq!(&after, &full(temp.path()), "{:?}", op);
        }
    }
}

#[test]
fn an_install_through_a_linked_directory_is_followed_up_by_a_walk() {
    let temp = TempDir::new("revcache-install-link");
    write_tree(temp.path(), &[("topics/a/x.md", b"x"), ("topics/b.md", b"b")]);
    std::os::unix::fs::symlink(temp.path().join("topics/a"), temp.path().join("topics/l")).expect("link");
    let mut cache = RevisionCache::default();
    cache.revision(temp.path(), RUNTIME_DIR).expect("rev");
    // Written through the link: the file the revision counts is `topics/a/y.md`.
    fs::write(temp.path().join("topics/l/y.md"), b"y").expect("write");
    let after = cache.revision_after_install(temp.path(), RUNTIME_DIR, ["topics/l/y.md"], &|_| None).expect("rev");
    assert_eq!(after, full(temp.path()));
}

#[test]
fn a_hand_edit_during_an_update_shows_in_the_next_revision() {
    let temp = TempDir::new("revcache-install-hand");
    write_tree(temp.path(), &[("topics/a.md", b"a"), ("topics/b.md", b"b")]);
    let mut cache = RevisionCache::default();
    // Hashed as if long after the files were written: their stats are trusted.
    cache.revision_at(temp.path(), RUNTIME_DIR, later()).expect("rev");
    // Before the installed path in revision order, so its cached hash would be reused.
    replace(&temp.path().join("topics/a.md"), b"by hand");
    replace(&temp.path().join("topics/b.md"), b"installed");
    let after = cache.revision_after_install(temp.path(), RUNTIME_DIR, ["topics/b.md"], &|_| None).expect("rev");
    assert_ne!(after, full(temp.path()), "the hand edit is not part of what was installed");
    assert_eq!(cache.revision(temp.path(), RUNTIME_DIR).expect("rev"), full(temp.path()));
}

#[test]
fn a_workspace_revision_stays_equal_across_installs() {
    let temp = TempDir::new("revcache-workspace");
    write_tree(temp.path(), &[("topics/a.md", b"a"), ("topics/b/c.md", b"c"), ("sources/x.md", b"x")]);
    let workspace = crate::Workspace::open(temp.path()).expect("open");
    assert_eq!(workspace.revision().expect("cached"), full(temp.path()));
    for round in 0..3u8 {
        let lock = workspace.lock(Duration::from_secs(10)).expect("lock");
        let mut changes = crate::Changes::new();
        changes.insert("topics/b/c.md".to_owned(), Some(vec![b'c', round]));
        changes.insert(format!("topics/new-{round}.md"), Some(b"new".to_vec()));
        changes.insert("topics/a.md".to_owned(), (round == 1).then(|| b"back".to_vec()));
        workspace.install(&lock, &changes).expect("install");
        assert_eq!(workspace.revision().expect("cached"), full(temp.path()), "{round}");
    }
}
