//! One behaviour check run against both [`RealVfs`] and [`SimVfs`], so the simulation
//! used by the power-loss and fault suites answers like the real file system does.

use std::ffi::OsString;
use std::io;
use std::path::Path;

use super::*;
use crate::test_support::TempDir;

#[track_caller]
fn assert_kind<T: std::fmt::Debug>(result: io::Result<T>, kind: io::ErrorKind) {
    match result {
        Err(error) => assert_eq!(error.kind(), kind, "{error}"),
        Ok(value) => panic!("expected {kind:?}, got Ok({value:?})"),
    }
}

fn check_vfs<V: Vfs>(vfs: &V)
where
    V::File: std::fmt::Debug,
{
    let p = Path::new;
    vfs.create_dir(p("a")).expect("mkdir a");
    assert_kind(vfs.create_dir(p("a")), io::ErrorKind::AlreadyExists);
    assert_kind(vfs.create_dir(p("missing/b")), io::ErrorKind::NotFound);

    let mut file = vfs.create_file(p("a/f"), b"hello").expect("create a/f");
    vfs.sync_file(&mut file).expect("fsync");
    drop(file);
    assert_kind(vfs.create_file(p("a/f"), b"again"), io::ErrorKind::AlreadyExists);
    assert_eq!(vfs.read(p("a/f")).expect("read"), b"hello");
    assert_kind(vfs.read(p("a/none")), io::ErrorKind::NotFound);

    let meta = vfs.metadata(p("a/f")).expect("stat").expect("exists");
    assert_eq!((meta.kind, meta.len, meta.mode), (FileKind::File, 5, FILE_MODE));
    let dir = vfs.metadata(p("a")).expect("stat").expect("exists");
    assert_eq!((dir.kind, dir.mode), (FileKind::Dir, DIR_MODE));
    assert_eq!(vfs.metadata(p("a/none")).expect("stat"), None);
    assert_eq!(vfs.metadata(p("none/deeper")).expect("stat"), None);

    // Rename replaces a file atomically and keeps the inode.
    drop(vfs.create_file(p("a/g"), b"other").expect("create a/g"));
    vfs.rename(p("a/f"), p("a/g")).expect("rename over");
    assert_eq!(vfs.read(p("a/g")).expect("read"), b"hello");
    assert_eq!(vfs.metadata(p("a/g")).expect("stat").map(|meta| meta.ino), Some(meta.ino));
    assert_eq!(vfs.metadata(p("a/f")).expect("stat"), None);
    assert_kind(vfs.rename(p("a/none"), p("a/x")), io::ErrorKind::NotFound);

    // Directories: rename, list, remove only when empty.
    vfs.create_dir(p("b")).expect("mkdir b");
    vfs.rename(p("a"), p("b/a")).expect("move a directory");
    let mut names = vfs.list_dir(p("b/a")).expect("list");
    names.sort();
    assert_eq!(names, vec![OsString::from("g")]);
    assert_kind(vfs.remove_dir(p("b/a")), io::ErrorKind::DirectoryNotEmpty);
    assert_kind(vfs.remove_file(p("b/a")), io::ErrorKind::IsADirectory);
    vfs.sync_dir(p("b/a")).expect("fsync dir");
    vfs.sync_dir(p("")).expect("fsync root");

    vfs.set_mode(p("b/a/g"), 0o644).expect("chmod");
    assert_eq!(vfs.metadata(p("b/a/g")).expect("stat").map(|meta| meta.mode), Some(0o644));

    // Plain relative paths only.
    assert_kind(vfs.read(p("../escape")), io::ErrorKind::InvalidInput);

    // The helpers.
    create_dir_all(vfs, p("c/d/e")).expect("mkdir -p");
    create_dir_all(vfs, p("c/d/e")).expect("mkdir -p again");
    assert_kind(create_dir_all(vfs, p("b/a/g/h")), io::ErrorKind::AlreadyExists);
    write_atomic(vfs, p("c/d/e/x"), b"one").expect("atomic write");
    write_atomic(vfs, p("c/d/e/x"), b"two").expect("atomic replace");
    assert_eq!(vfs.read(p("c/d/e/x")).expect("read"), b"two");
    assert_eq!(vfs.list_dir(p("c/d/e")).expect("list"), vec![OsString::from("x")], "no temporary left");
    remove_tree(vfs, p("c")).expect("rm -r");
    assert_eq!(vfs.metadata(p("c")).expect("stat"), None);
    remove_tree(vfs, p("c")).expect("rm -r of nothing");

    vfs.remove_file(p("b/a/g")).expect("rm");
    vfs.remove_dir(p("b/a")).expect("rmdir");
    assert_eq!(vfs.list_dir(p("b")).expect("list"), Vec::<OsString>::new());
}

#[test]
fn real_vfs_behaves_as_specified() {
    let temp = TempDir::new("vfs");
    check_vfs(&RealVfs::new(temp.path()));
}

#[test]
fn sim_vfs_behaves_like_the_real_one() {
    check_vfs(&SimVfs::new());
}

#[test]
fn links_are_reported_never_followed() {
    let temp = TempDir::new("vfs-links");
    std::fs::write(temp.path().join("target"), b"secret").expect("write");
    std::os::unix::fs::symlink(temp.path().join("target"), temp.path().join("link")).expect("symlink");
    let real = RealVfs::new(temp.path());
    let sim = SimVfs::new();
    sim.put_file(Path::new("target"), b"secret").expect("put");
    sim.put_symlink(Path::new("link"), std::ffi::OsStr::new("target")).expect("symlink");

    for (name, kind, chmod) in [
        (
            "real",
            real.metadata(Path::new("link")).expect("stat").map(|m| m.kind),
            real.set_mode(Path::new("link"), 0o600),
        ),
        ("sim", sim.metadata(Path::new("link")).expect("stat").map(|m| m.kind), sim.set_mode(Path::new("link"), 0o600)),
    ] {
        assert_eq!(kind, Some(FileKind::Symlink), "{name}");
        assert_kind(chmod, io::ErrorKind::InvalidInput);
    }
    // Removing a link removes the link, not its target.
    real.remove_file(Path::new("link")).expect("unlink");
    assert_eq!(std::fs::read(temp.path().join("target")).expect("target stays"), b"secret");
}

#[test]
fn a_failed_fsync_poisons_the_real_handle_too() {
    // The real kernel cannot be made to fail here; the flag is what the protocol relies
    // on, so check it directly.
    let temp = TempDir::new("vfs-poison");
    let vfs = RealVfs::new(temp.path());
    let mut file = vfs.create_file(Path::new("f"), b"x").expect("create");
    file.poisoned = true;
    assert!(vfs.sync_file(&mut file).is_err());
}
