//! Opening a workspace: layout and modes, the workspace id, the superseded-layout
//! migration, `.nativemem`, recovery on open, and installs through the workspace.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use super::*;
use crate::journal::Changes;
use crate::test_support::{TempDir, write_tree};

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).expect("stat").permissions().mode() & 0o777
}

#[test]
fn open_creates_the_layout_with_private_modes() {
    let temp = TempDir::new("ws-create");
    let root = temp.path().join("state/memory");
    let workspace = Workspace::open(&root).expect("open");
    for dir in ["", ".scriptorium", ".scriptorium/txn", "topics", "sources"] {
        assert!(root.join(dir).is_dir(), "{dir}");
        assert_eq!(mode(&root.join(dir)), 0o700, "{dir}");
    }
    assert!(!root.join("core.md").exists() && !root.join("topics/core.md").exists(), "nothing creates core.md");
    assert!(is_valid_workspace_id(workspace.workspace_id()));
    let stored = std::fs::read_to_string(root.join(".scriptorium/workspace-id")).expect("id file");
    assert_eq!(stored, format!("{}\n", workspace.workspace_id()));
    assert_eq!(mode(&root.join(".scriptorium/workspace-id")), 0o600);
    assert_eq!(workspace.runtime_state(), RuntimeState::default());
    assert!(workspace.recovery().is_clean());

    // Reopening keeps the id.
    let again = Workspace::open(&root).expect("reopen");
    assert_eq!(again.workspace_id(), workspace.workspace_id());
}

#[test]
fn an_invalid_workspace_id_is_regenerated_and_whitespace_is_ignored() {
    let temp = TempDir::new("ws-id");
    write_tree(temp.path(), &[(".scriptorium/workspace-id", b"  w-0123abcd \n")]);
    assert_eq!(Workspace::open(temp.path()).expect("open").workspace_id(), "w-0123abcd");
    for bad in [&b"w-0123ABCD\n"[..], b"w-0123abc\n", b"x-0123abcd", b"w-0123abcde", b"\xff"] {
        std::fs::write(temp.path().join(".scriptorium/workspace-id"), bad).expect("write");
        let id = Workspace::open(temp.path()).expect("open").workspace_id().to_owned();
        assert!(is_valid_workspace_id(&id) && id != "w-0123abcd", "{id}");
    }
    assert!(!is_valid_workspace_id("w-0123abc\u{e9}"));
}

#[test]
fn superseded_items_move_to_the_sibling_and_are_never_merged() {
    let temp = TempDir::new("ws-superseded");
    let root = temp.path().join("memory");
    write_tree(
        &root,
        &[("journal/2024.md", b"j"), ("wiki/page.md", b"w"), ("index.sqlite", b"db"), (".state/x", b"s")],
    );
    write_tree(temp.path(), &[("memory-superseded/wiki/existing.md", b"older wiki")]);
    Workspace::open(&root).expect("open");
    let superseded = temp.path().join(SUPERSEDED_DIR);
    assert_eq!(std::fs::read(superseded.join("journal/2024.md")).expect("moved"), b"j");
    assert_eq!(std::fs::read(superseded.join("index.sqlite")).expect("moved"), b"db");
    assert_eq!(std::fs::read(superseded.join(".state/x")).expect("moved"), b"s");
    assert!(!root.join("journal").exists() && !root.join("index.sqlite").exists());
    // The target existed: the item stays where it is, and nothing is merged.
    assert_eq!(std::fs::read(root.join("wiki/page.md")).expect("left in place"), b"w");
    assert!(!superseded.join("wiki/page.md").exists());
}

#[test]
fn a_ready_reference_workspace_is_not_migrated() {
    let temp = TempDir::new("ws-ready");
    let root = temp.path().join("memory");
    write_tree(&root, &[(".git/openprogram-memory-ready", b"ready\n"), ("topics/a.md", b"a"), ("sources/s.md", b"s")]);
    write_tree(&root, &[("wiki/page.md", b"w")]);
    Workspace::open(&root).expect("open");
    assert!(root.join("wiki/page.md").exists());
    assert!(!temp.path().join(SUPERSEDED_DIR).exists());
}

#[test]
fn a_nativemem_workspace_keeps_its_runtime_directory() {
    let temp = TempDir::new("ws-nativemem");
    write_tree(temp.path(), &[(".nativemem/runtime.json", b"{\"local_batches\": 4}\n")]);
    let workspace = Workspace::open(temp.path()).expect("open");
    assert_eq!(workspace.runtime_dir_name(), ".nativemem");
    assert_eq!(workspace.runtime_state_path(), ".nativemem/runtime.json");
    assert_eq!(workspace.runtime_state().local_batches, 4);
    assert!(!temp.path().join(".scriptorium").exists());
    assert!(temp.path().join(".nativemem/write.lock").exists());
}

#[test]
fn installs_go_through_the_lock_and_recovery_runs_on_open() {
    let temp = TempDir::new("ws-install");
    let workspace = Workspace::open(temp.path()).expect("open");
    let lock = workspace.lock(Duration::from_secs(1)).expect("lock");
    let mut changes = Changes::new();
    changes.insert("topics/a.md".into(), Some(b"a\n".to_vec()));
    changes.insert(workspace.runtime_state_path(), Some(RuntimeState::default().to_bytes()));
    let before = workspace.revision().expect("rev");
    let installed = workspace.install(&lock, &changes).expect("install");
    assert_eq!(installed.changed.len(), 2);
    assert_ne!(workspace.revision().expect("rev"), before);

    // A lock of another workspace is refused.
    let other_dir = TempDir::new("ws-other");
    let other = Workspace::open(other_dir.path()).expect("open other");
    let foreign = other.lock(Duration::ZERO).expect("lock other");
    assert_eq!(workspace.install(&foreign, &changes).expect_err("foreign").code(), ErrorCode::InvalidArgument);

    // An uncommitted journal left behind is gone after the next open.
    drop(lock);
    write_tree(temp.path(), &[(".scriptorium/txn/0001/0.staged", b"half")]);
    let reopened = Workspace::open(temp.path()).expect("reopen");
    assert_eq!(reopened.recovery().discarded, ["0001"]);
    assert_eq!(std::fs::read_dir(temp.path().join(".scriptorium/txn")).expect("txn").count(), 0);
}

#[test]
fn open_waits_for_the_lock_and_reports_concurrent_update() {
    let temp = TempDir::new("ws-busy");
    let workspace = Workspace::open(temp.path()).expect("open");
    let _held = workspace.lock(Duration::ZERO).expect("lock");
    let error = Workspace::open_with_timeout(temp.path(), Duration::from_millis(30)).expect_err("busy");
    assert_eq!(error.code(), ErrorCode::ConcurrentUpdate);
}

#[test]
fn a_reference_block_backup_is_restored_on_open_before_the_layout_is_made() {
    let temp = TempDir::new("ws-backup");
    write_tree(
        temp.path(),
        &[(".scriptorium-block-backup/topics/a.md", b"a"), (".scriptorium-block-backup/sources/s.md", b"s")],
    );
    let workspace = Workspace::open(temp.path()).expect("open");
    assert!(workspace.recovery().backup.as_ref().is_some_and(|backup| backup.rolled_back));
    assert_eq!(std::fs::read(temp.path().join("topics/a.md")).expect("restored"), b"a");
    assert_eq!(std::fs::read(temp.path().join("sources/s.md")).expect("restored"), b"s");
}
