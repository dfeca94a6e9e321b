//! Install and recovery on the real file system: what lands where, what is refused
//! without changing a byte, how committed, uncommitted, damaged and foreign-edited
//! journals are recovered, and the reference's `-block-backup` leftovers.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::*;
use crate::revision::{RUNTIME_DIR, revision};
use crate::test_support::{TempDir, write_tree};
use crate::vfs::{RealVfs, SimVfs};

const RT: &str = RUNTIME_DIR;

fn changes(items: &[(&str, Option<&[u8]>)]) -> Changes {
    items.iter().map(|(path, bytes)| ((*path).to_owned(), bytes.map(<[u8]>::to_vec))).collect()
}

fn ok() -> Result<(), Error> {
    Ok(())
}

fn read(root: &Path, path: &str) -> Option<Vec<u8>> {
    std::fs::read(root.join(path)).ok()
}

fn journals(root: &Path) -> Vec<String> {
    std::fs::read_dir(root.join(RT).join(TXN_DIR))
        .map(|dir| dir.map(|entry| entry.expect("entry").file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

fn base(label: &str) -> TempDir {
    let temp = TempDir::new(label);
    write_tree(
        temp.path(),
        &[
            ("topics/a.md", b"a\n"),
            ("topics/b.md", b"b\n"),
            ("sources/p/_v2/t.md", b"frame 1\n"),
            (".scriptorium/runtime.json", b"{}\n"),
        ],
    );
    temp
}

#[test]
fn install_writes_replaces_and_deletes_then_leaves_no_journal() {
    let temp = base("journal-install");
    let vfs = RealVfs::new(temp.path());
    let installed = install(
        &vfs,
        RT,
        &changes(&[
            ("topics/a.md", Some(b"a2\n")),
            ("topics/b.md", None),
            ("topics/new/deep/c.md", Some(b"c\n")),
            ("sources/p/_v2/t.md", Some(b"frame 1\nframe 2\n")),
            (".scriptorium/runtime.json", Some(b"{\"x\": 1}\n")),
            ("topics/unchanged-missing.md", None),
        ]),
        &ok,
    )
    .expect("install");
    assert!(installed.journal.is_some());
    assert_eq!(
        installed.changed,
        [".scriptorium/runtime.json", "sources/p/_v2/t.md", "topics/a.md", "topics/b.md", "topics/new/deep/c.md"]
    );
    assert_eq!(read(temp.path(), "topics/a.md").as_deref(), Some(&b"a2\n"[..]));
    assert_eq!(read(temp.path(), "topics/b.md"), None);
    assert_eq!(read(temp.path(), "topics/new/deep/c.md").as_deref(), Some(&b"c\n"[..]));
    assert_eq!(read(temp.path(), "sources/p/_v2/t.md").as_deref(), Some(&b"frame 1\nframe 2\n"[..]));
    let mode = |path: &str| std::fs::metadata(temp.path().join(path)).expect("stat").permissions().mode() & 0o777;
    assert_eq!((mode("topics/a.md"), mode("topics/new/deep/c.md"), mode("topics/new")), (0o600, 0o600, 0o700));
    assert!(journals(temp.path()).is_empty());

    // Installing the same bytes again changes nothing and writes no journal.
    let again = install(&vfs, RT, &changes(&[("topics/a.md", Some(b"a2\n")), ("topics/b.md", None)]), &ok)
        .expect("no-op install");
    assert_eq!(again, Installed::default());
}

#[test]
fn refusals_change_no_byte() {
    let temp = base("journal-refuse");
    std::os::unix::fs::symlink("/tmp", temp.path().join("topics/out")).expect("dir link");
    std::os::unix::fs::symlink(temp.path().join("topics/a.md"), temp.path().join("topics/l.md")).expect("file link");
    std::fs::create_dir(temp.path().join("topics/dir.md")).expect("dir");
    let vfs = RealVfs::new(temp.path());
    let before = revision(&vfs, RT).expect("rev");
    for (path, code) in [
        (".scriptorium/write.lock", ErrorCode::ReadOnlyPath),
        (".scriptorium/txn/x", ErrorCode::ReadOnlyPath),
        (".git/config", ErrorCode::ReadOnlyPath),
        (".scriptorium-bm25.json", ErrorCode::ReadOnlyPath),
        ("../escape.md", ErrorCode::PathOutsideWorkspace),
        ("/etc/passwd", ErrorCode::PathOutsideWorkspace),
        ("topics//a.md", ErrorCode::PathOutsideWorkspace),
        ("topics/./a.md", ErrorCode::PathOutsideWorkspace),
        ("", ErrorCode::PathOutsideWorkspace),
        ("topics/out/x.md", ErrorCode::PathOutsideWorkspace),
        ("topics/l.md", ErrorCode::PathOutsideWorkspace),
        ("topics/dir.md", ErrorCode::InvalidArgument),
        ("topics/a.md/x.md", ErrorCode::InvalidArgument),
    ] {
        let all = changes(&[("topics/a.md", Some(b"changed\n")), (path, Some(b"x"))]);
        let error = install(&vfs, RT, &all, &ok).expect_err(path);
        assert_eq!(error.code(), code, "{path}");
        assert_eq!(revision(&vfs, RT).expect("rev"), before, "{path}");
    }
    assert!(std::fs::read_dir("/tmp").is_ok());
    assert!(journals(temp.path()).is_empty());
}

#[test]
fn a_failed_precommit_check_abandons_the_journal() {
    let temp = base("journal-precommit");
    let vfs = RealVfs::new(temp.path());
    let before = revision(&vfs, RT).expect("rev");
    let refuse = || Err(Error::new(ErrorCode::ConcurrentUpdate, "lock lost"));
    let error = install(&vfs, RT, &changes(&[("topics/a.md", Some(b"x"))]), &refuse).expect_err("refused");
    assert_eq!(error.code(), ErrorCode::ConcurrentUpdate);
    assert_eq!(revision(&vfs, RT).expect("rev"), before);
    assert!(journals(temp.path()).is_empty());
}

/// One journal entry as a test writes it: path, old bytes, new bytes.
type TestEntry<'a> = (&'a str, Option<&'a [u8]>, Option<&'a [u8]>);

/// A journal as a crashed install leaves it, in `layout`: staged files, and COMMITTED or
/// MANIFEST. Returns it, to name its files.
fn leave(root: &Path, id: &str, entries: &[TestEntry<'_>], commit: bool, layout: Layout) -> Journal {
    let journal = Journal::new(&root.join(RT).join(TXN_DIR), id, layout);
    std::fs::create_dir_all(journal.dir()).expect("journal dir");
    let mut manifest = Manifest::default();
    for (index, (path, old, new)) in entries.iter().enumerate() {
        if let Some(new) = new {
            std::fs::write(journal.staged(index), new).expect("staged");
        }
        manifest.entries.push(Entry { path: (*path).to_owned(), old: old.map(sha256), new: new.map(sha256) });
    }
    let name = if commit { journal.committed() } else { journal.manifest() };
    std::fs::write(name, manifest.to_bytes()).expect("manifest");
    journal
}

fn leave_journal(root: &Path, id: &str, entries: &[TestEntry<'_>], commit: bool) -> Journal {
    leave(root, id, entries, commit, Layout::Flat)
}

#[test]
fn recovery_rolls_a_committed_journal_forward_once() {
    let temp = base("journal-recover");
    // Crashed after the first rename: a.md installed, b.md's delete and c.md pending.
    std::fs::write(temp.path().join("topics/a.md"), b"a2\n").expect("installed");
    let journal = leave_journal(
        temp.path(),
        "0001",
        &[
            ("topics/a.md", Some(b"a\n"), Some(b"a2\n")),
            ("topics/b.md", Some(b"b\n"), None),
            ("topics/c/c.md", None, Some(b"c\n")),
        ],
        true,
    );
    std::fs::remove_file(temp.path().join(journal.staged(0))).expect("renamed");
    leave_journal(temp.path(), "0002", &[("topics/a.md", Some(b"a2\n"), Some(b"never\n"))], false);
    let vfs = RealVfs::new(temp.path());
    let report = recover(&vfs, RT).expect("recover");
    assert_eq!(report.rolled_forward, ["0001"]);
    assert_eq!(report.discarded, ["0002"]);
    assert_eq!(read(temp.path(), "topics/a.md").as_deref(), Some(&b"a2\n"[..]));
    assert_eq!(read(temp.path(), "topics/b.md"), None);
    assert_eq!(read(temp.path(), "topics/c/c.md").as_deref(), Some(&b"c\n"[..]));
    assert!(journals(temp.path()).is_empty());
    assert!(recover(&vfs, RT).expect("again").is_clean());
}

#[test]
fn recovery_refuses_a_damaged_journal_and_changes_nothing() {
    let temp = base("journal-damaged");
    let vfs = RealVfs::new(temp.path());
    let before = revision(&vfs, RT).expect("rev");
    let journal = leave_journal(temp.path(), "0001", &[("topics/a.md", Some(b"a\n"), Some(b"a2\n"))], true);
    std::fs::write(temp.path().join(journal.staged(0)), b"bit rot").expect("rot");
    let error = recover(&vfs, RT).expect_err("damaged");
    assert_eq!((error.code(), error.details().get("damaged")), (ErrorCode::Io, Some(&serde_json::Value::Bool(true))));
    assert_eq!(revision(&vfs, RT).expect("rev"), before);

    std::fs::write(temp.path().join(journal.committed()), b"{not json").expect("rot");
    assert_eq!(recover(&vfs, RT).expect_err("damaged").code(), ErrorCode::Io);
    assert_eq!(revision(&vfs, RT).expect("rev"), before);
}

#[test]
fn bytes_edited_outside_the_lock_after_a_crash_go_to_quarantine() {
    let temp = base("journal-foreign");
    leave_journal(temp.path(), "0001", &[("topics/a.md", Some(b"a\n"), Some(b"a2\n"))], true);
    std::fs::write(temp.path().join("topics/a.md"), b"hand edit\n").expect("foreign edit");
    let vfs = RealVfs::new(temp.path());
    recover(&vfs, RT).expect("recover");
    assert_eq!(read(temp.path(), "topics/a.md").as_deref(), Some(&b"a2\n"[..]));
    let kept = temp.path().join(RT).join(QUARANTINE_DIR).join("txn-0001/topics/a.md");
    assert_eq!(std::fs::read(kept).expect("quarantined"), b"hand edit\n");
}

#[test]
fn install_stages_flat_files_in_txn() {
    let temp = base("journal-flat");
    let vfs = RealVfs::new(temp.path());
    let seen = std::cell::RefCell::new(Vec::new());
    let look = || {
        seen.borrow_mut().extend(journals(temp.path()));
        Ok(())
    };
    let installed =
        install(&vfs, RT, &changes(&[("topics/a.md", Some(b"a2\n")), ("topics/b.md", None)]), &look).expect("install");
    let id = installed.journal.expect("journal id");
    let mut seen = seen.into_inner();
    seen.sort();
    assert_eq!(seen, [format!("{id}.0.staged"), format!("{id}.MANIFEST")]);
    assert!(journals(temp.path()).is_empty());
}

/// The `fsync`s of one install on the simulation, by kind: (files, directories).
fn syncs_of(vfs: &SimVfs, changes: &Changes) -> (usize, usize) {
    vfs.checkpoint();
    install(vfs, RT, changes, &ok).expect("install");
    let trace = vfs.describe_trace();
    let count = |kind: &str| trace.iter().filter(|op| op.starts_with(kind)).count();
    (count("SyncFile"), count("SyncDir"))
}

#[test]
fn an_install_of_f_files_costs_at_most_f_plus_4_fsyncs() {
    let vfs = SimVfs::from_files([("topics/a.md", &b"a\n"[..]), ("core.md", b"core\n"), ("topics/b.md", b"b\n")])
        .expect("sim");
    vfs.put_dir(Path::new(".scriptorium/txn")).expect("txn");
    // F = 1: the staged file and the manifest, `txn/`, `topics/`.
    assert_eq!(syncs_of(&vfs, &changes(&[("topics/a.md", Some(b"a2\n"))])), (2, 2));
    // F = 2 in two directories: two staged files and the manifest, `txn/`, `topics/`, the root.
    assert_eq!(syncs_of(&vfs, &changes(&[("topics/a.md", Some(b"a3\n")), ("core.md", Some(b"c2\n"))])), (3, 3));
    // A delete stages nothing, and pays for the synced retirement instead.
    assert_eq!(syncs_of(&vfs, &changes(&[("topics/a.md", Some(b"a4\n")), ("topics/b.md", None)])), (2, 3));
}

#[test]
fn recovery_reads_a_journal_of_the_old_directory_layout() {
    let temp = base("journal-old-layout");
    std::fs::write(temp.path().join("topics/a.md"), b"a2\n").expect("installed");
    let entries: &[TestEntry<'_>] =
        &[("topics/a.md", Some(b"a\n"), Some(b"a2\n")), ("topics/b.md", Some(b"b\n"), Some(b"b2\n"))];
    let journal = leave(temp.path(), "0001", entries, true, Layout::Directory);
    std::fs::remove_file(journal.staged(0)).expect("renamed");
    leave(temp.path(), "0002", &[("topics/a.md", Some(b"a2\n"), Some(b"never\n"))], false, Layout::Directory);
    let vfs = RealVfs::new(temp.path());
    let report = recover(&vfs, RT).expect("recover");
    assert_eq!((report.rolled_forward, report.discarded), (vec!["0001".to_owned()], vec!["0002".to_owned()]));
    assert_eq!(read(temp.path(), "topics/a.md").as_deref(), Some(&b"a2\n"[..]));
    assert_eq!(read(temp.path(), "topics/b.md").as_deref(), Some(&b"b2\n"[..]));
    assert!(journals(temp.path()).is_empty());
}

#[test]
fn a_commit_that_never_reached_the_disk_whole_is_rolled_back() {
    // Power lost before the sync of `txn/`: COMMITTED survived, staged file 1 did not,
    // and no target was touched.
    let temp = base("journal-rollback");
    let vfs = RealVfs::new(temp.path());
    let before = revision(&vfs, RT).expect("rev");
    let entries: &[TestEntry<'_>] = &[
        ("topics/a.md", Some(b"a\n"), Some(b"a2\n")),
        ("topics/b.md", Some(b"b\n"), Some(b"b2\n")),
        ("topics/c.md", None, None),
    ];
    let journal = leave_journal(temp.path(), "0001", entries, true);
    std::fs::remove_file(journal.staged(1)).expect("lost");
    let report = recover(&vfs, RT).expect("recover");
    assert_eq!((report.rolled_forward.len(), report.discarded), (0, vec!["0001".to_owned()]));
    assert_eq!(revision(&vfs, RT).expect("rev"), before);
    assert!(journals(temp.path()).is_empty());
}

#[test]
fn replaying_a_retired_journal_writes_no_target() {
    // A journal whose unlink was lost to a power loss, after hand edits: a.md was edited
    // again, c.md was recreated after the install deleted it. Neither may be touched.
    let temp = base("journal-replay");
    std::fs::write(temp.path().join("topics/a.md"), b"hand edit\n").expect("edit");
    std::fs::write(temp.path().join("topics/b.md"), b"b2\n").expect("installed");
    std::fs::write(temp.path().join("topics/c.md"), b"c\n").expect("recreated");
    let entries: &[TestEntry<'_>] = &[
        ("topics/a.md", Some(b"a\n"), Some(b"a2\n")),
        ("topics/b.md", Some(b"b\n"), Some(b"b2\n")),
        ("topics/c.md", Some(b"c\n"), None),
    ];
    for (id, installed_b) in [("0001", true), ("0002", false)] {
        if !installed_b {
            std::fs::write(temp.path().join("topics/b.md"), b"edited too\n").expect("edit");
        }
        let journal = leave_journal(temp.path(), id, entries, true);
        for index in 0..2 {
            std::fs::remove_file(journal.staged(index)).expect("installed long ago");
        }
        let vfs = RealVfs::new(temp.path());
        let report = recover(&vfs, RT).expect("recover");
        // With b.md still installed the journal is known to be complete; with every
        // target edited it cannot be told from a lost commit and is dropped.
        assert_eq!(report.rolled_forward.is_empty(), !installed_b, "{id}");
        assert_eq!(read(temp.path(), "topics/a.md").as_deref(), Some(&b"hand edit\n"[..]), "{id}");
        assert!(journals(temp.path()).is_empty(), "{id}");
    }
    assert_eq!(read(temp.path(), "topics/b.md").as_deref(), Some(&b"edited too\n"[..]));
}

/// The tree a reference install was moving between: `old` in the backup or in place.
fn backup_case(label: &str, in_place: &[(&str, &[u8])], in_backup: &[(&str, &[u8])]) -> TempDir {
    let temp = TempDir::new(label);
    write_tree(temp.path(), in_place);
    let backup: Vec<(String, &[u8])> =
        in_backup.iter().map(|(path, bytes)| (format!(".scriptorium-block-backup/{path}"), *bytes)).collect();
    let backup: Vec<(&str, &[u8])> = backup.iter().map(|(path, bytes)| (path.as_str(), *bytes)).collect();
    write_tree(temp.path(), &backup);
    temp
}

#[test]
fn an_interrupted_reference_install_is_rolled_back_keeping_the_new_items() {
    // Crashed in step 2: new sources installed, topics and runtime.json still in backup.
    let temp = backup_case(
        "backup-interrupted",
        &[("sources/p/t.md", b"new")],
        &[("sources/p/t.md", b"old"), ("topics/a.md", b"old a"), (".scriptorium/runtime.json", b"{}\n")],
    );
    let vfs = RealVfs::new(temp.path());
    let report = recover(&vfs, RT).expect("recover").backup.expect("backup handled");
    assert!(report.rolled_back);
    assert_eq!(read(temp.path(), "sources/p/t.md").as_deref(), Some(&b"old"[..]));
    assert_eq!(read(temp.path(), "topics/a.md").as_deref(), Some(&b"old a"[..]));
    assert_eq!(read(temp.path(), ".scriptorium/runtime.json").as_deref(), Some(&b"{}\n"[..]));
    assert!(!temp.path().join(".scriptorium-block-backup").exists());
    let quarantine = temp.path().join(&report.quarantine);
    assert_eq!(std::fs::read(quarantine.join("installed/sources/p/t.md")).expect("kept"), b"new");
    assert!(recover(&vfs, RT).expect("again").is_clean());
}

#[test]
fn a_reference_crash_while_moving_to_the_backup_is_rolled_back() {
    // Crashed in step 1: sources moved to the backup, topics not yet.
    let temp = backup_case("backup-step1", &[("topics/a.md", b"a")], &[("sources/p/t.md", b"s")]);
    let vfs = RealVfs::new(temp.path());
    assert!(recover(&vfs, RT).expect("recover").backup.expect("handled").rolled_back);
    assert_eq!(read(temp.path(), "sources/p/t.md").as_deref(), Some(&b"s"[..]));
    assert_eq!(read(temp.path(), "topics/a.md").as_deref(), Some(&b"a"[..]));
}

#[test]
fn a_completed_reference_install_keeps_the_new_state_and_quarantines_the_backup() {
    // Crashed while deleting the backup: every key item is in place.
    let temp = backup_case(
        "backup-completed",
        &[("sources/p/t.md", b"new s"), ("topics/a.md", b"new a"), (".scriptorium/runtime.json", b"{\"n\":1}\n")],
        &[("topics/a.md", b"old a"), ("core.md", b"old core")],
    );
    let vfs = RealVfs::new(temp.path());
    let report = recover(&vfs, RT).expect("recover").backup.expect("handled");
    assert!(!report.rolled_back);
    assert_eq!(read(temp.path(), "topics/a.md").as_deref(), Some(&b"new a"[..]));
    assert_eq!(read(temp.path(), "core.md"), None, "a derived item the install removed stays removed");
    let rest = temp.path().join(&report.quarantine).join("backup");
    assert_eq!(std::fs::read(rest.join("topics/a.md")).expect("old bytes kept"), b"old a");
}
