//! The archive writer's view refuses links and paths outside `sources/`, and planning an
//! append through it on a real workspace gives the full new bytes.

use std::io;
use std::path::Path;

use scriptorium_archive_format::{ArchiveTree, SourceRecord, plan_append};

use super::*;
use crate::test_support::{TempDir, write_tree};
use crate::vfs::RealVfs;

#[test]
fn reads_and_lists_inside_sources_only() {
    let temp = TempDir::new("tree");
    write_tree(temp.path(), &[("sources/p/_v2/t.md", b"x"), ("topics/a.md", b"t")]);
    let vfs = RealVfs::new(temp.path());
    let tree = WorkspaceTree::new(&vfs);
    assert_eq!(tree.read_file("sources/p/_v2/t.md").expect("read"), Some(b"x".to_vec()));
    assert_eq!(tree.read_file("sources/p/_v2/none.md").expect("read"), None);
    assert_eq!(tree.read_file("sources/none/_v2/t.md").expect("read"), None);
    let mut root = tree.list_dir("").expect("list").expect("root exists");
    root.sort();
    assert_eq!(root, vec!["sources".to_owned(), "topics".to_owned()]);
    assert_eq!(tree.list_dir("sources/p").expect("list"), Some(vec!["_v2".to_owned()]));
    assert_eq!(tree.list_dir("sources/q").expect("list"), None);
    for outside in ["topics/a.md", "sources/../topics/a.md", "../x", "sources//p"] {
        let error = tree.read_file(outside).expect_err(outside);
        assert_eq!(error.kind(), io::ErrorKind::PermissionDenied, "{outside}");
    }
}

#[test]
fn refuses_every_symbolic_link() {
    let temp = TempDir::new("tree-links");
    let outside = TempDir::new("tree-outside");
    write_tree(outside.path(), &[("_v2/t.md", b"secret")]);
    write_tree(temp.path(), &[("sources/real/_v2/t.md", b"x")]);
    std::os::unix::fs::symlink(outside.path(), temp.path().join("sources/evil")).expect("link dir");
    std::os::unix::fs::symlink(outside.path().join("_v2/t.md"), temp.path().join("sources/real/_v2/l.md"))
        .expect("link file");
    let vfs = RealVfs::new(temp.path());
    let tree = WorkspaceTree::new(&vfs);
    for path in ["sources/evil/_v2/t.md", "sources/real/_v2/l.md"] {
        assert_eq!(tree.read_file(path).expect_err(path).kind(), io::ErrorKind::PermissionDenied);
    }
    assert_eq!(tree.list_dir("sources/evil").expect_err("link").kind(), io::ErrorKind::PermissionDenied);
}

#[test]
fn plan_append_reads_the_workspace_through_it() {
    let temp = TempDir::new("tree-plan");
    let vfs = RealVfs::new(temp.path());
    let mut record = SourceRecord::new("openprogram", "thread-1", "m1", 1, "user", "hello");
    record.timestamp = Some("2024-03-15T10:00:00+00:00".to_owned());
    let first = plan_append(std::slice::from_ref(&record), &WorkspaceTree::new(&vfs)).expect("plan");
    let file = first.files.first().expect("one archive");
    write_tree(temp.path(), &[(file.path.as_str(), &file.bytes)]);
    let again = plan_append(&[record], &WorkspaceTree::new(&vfs)).expect("plan again");
    assert!(again.is_empty(), "an archived record is not appended twice");
    assert!(Path::new(&file.path).starts_with("sources"));
}
