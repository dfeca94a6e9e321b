//! The revision against the golden vectors (every transaction case's `before_revision`
//! over its `before` tree, and `result.revision` over its `after` tree), plus the rules
//! behind it: component-wise order, links and internal paths skipped, the state file kept.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::*;
use crate::test_support::{TempDir, vectors, write_tree};
use crate::vfs::RealVfs;

fn rev(root: &Path) -> String {
    let vfs = RealVfs::new(root);
    let runtime = runtime_dir_name(&vfs).expect("stat");
    revision(&vfs, runtime).expect("revision")
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("read vector")).expect("vector JSON")
}

#[test]
fn every_transaction_vector_revision_matches() {
    let dir = vectors().join("transaction");
    let mut cases: Vec<PathBuf> =
        std::fs::read_dir(&dir).expect("transaction vectors").map(|entry| entry.expect("entry").path()).collect();
    cases.sort();
    let mut checked_before = 0;
    let mut checked_after = 0;
    for case in &cases {
        let input = json(&case.join("input.json"));
        let expected = json(&case.join("expected.json"));
        let before = match input.get("before").and_then(Value::as_str) {
            Some(resource) => vectors().join(resource),
            None => case.join("before"),
        };
        let want = expected["before_revision"].as_str().expect("before_revision");
        assert_eq!(rev(&before), want, "{}", case.display());
        checked_before += 1;
        if let Some(after) = expected.get("result").and_then(|result| result.get("revision")).and_then(Value::as_str) {
            assert_eq!(rev(&case.join("after")), after, "after tree of {}", case.display());
            checked_after += 1;
        }
    }
    assert!(checked_before >= 22 && checked_after >= 10, "{checked_before} before, {checked_after} after");
}

#[test]
fn paths_sort_component_wise_like_python() {
    // `a/b.md` sorts before `a-c.md` (component "a" < "a-c.md"), although '/' > '-'.
    let temp = TempDir::new("rev-order");
    write_tree(temp.path(), &[("a/b.md", b"1"), ("a-c.md", b"2")]);
    let mut hasher = Sha256::new();
    for (path, bytes) in [("a/b.md", b"1"), ("a-c.md", b"2")] {
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(bytes);
        hasher.update([0]);
    }
    let want: String = hasher.finalize().iter().take(16).map(|byte| format!("{byte:02x}")).collect();
    assert_eq!(rev(temp.path()), want);
}

#[test]
fn links_and_internal_paths_do_not_count_but_the_state_file_does() {
    let temp = TempDir::new("rev-internal");
    write_tree(temp.path(), &[("topics/a.md", b"a")]);
    let base = rev(temp.path());
    write_tree(
        temp.path(),
        &[
            (".scriptorium/write.lock", b""),
            (".scriptorium/txn/1/0.staged", b"x"),
            (".scriptorium-bm25.json", b"{}"),
            (".scriptorium-block-backup/topics/a.md", b"old"),
            (".git/HEAD", b"ref"),
            (".nativemem-bm25.json", b"{}"),
        ],
    );
    std::os::unix::fs::symlink(temp.path().join("topics/a.md"), temp.path().join("topics/link.md")).expect("link");
    std::os::unix::fs::symlink(temp.path().join("topics"), temp.path().join("linked-dir")).expect("link");
    assert_eq!(rev(temp.path()), base, "internal files and links are invisible");

    write_tree(temp.path(), &[(".scriptorium/runtime.json", b"{}\n")]);
    assert_ne!(rev(temp.path()), base, "the runtime state file counts");
    let with_state = rev(temp.path());
    write_tree(temp.path(), &[("topics/a.md", b"b")]);
    assert_ne!(rev(temp.path()), with_state);
}

#[test]
fn a_nativemem_workspace_counts_its_own_state_file() {
    let temp = TempDir::new("rev-nativemem");
    write_tree(temp.path(), &[("topics/a.md", b"a"), (".nativemem/runtime.json", b"{}\n")]);
    let vfs = RealVfs::new(temp.path());
    assert_eq!(runtime_dir_name(&vfs).expect("stat"), LEGACY_RUNTIME_DIR);
    assert_ne!(revision(&vfs, LEGACY_RUNTIME_DIR).expect("rev"), revision(&vfs, RUNTIME_DIR).expect("rev"));
}

#[test]
fn internal_predicate() {
    for internal in
        [".scriptorium", ".scriptorium/runtime.json", ".scriptorium-bm25.json", ".nativemem/x", ".git", ".git/HEAD"]
    {
        assert!(is_internal_path(internal), "{internal}");
    }
    for memory in ["topics/a.md", ".scriptoriumx", ".gitignore", "sources/.scriptorium", "core.md", ""] {
        assert!(!is_internal_path(memory), "{memory}");
    }
}
