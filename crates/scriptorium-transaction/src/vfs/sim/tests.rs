//! The durability model and fault injection of [`SimVfs`]: what survives a crash, what
//! may be lost, and how faults are numbered.

use std::collections::BTreeSet;
use std::path::Path;

use super::*;

fn p(path: &str) -> &Path {
    Path::new(path)
}

/// Every distinct content of `path` (None = missing) over many crash states at `prefix`.
fn outcomes(sim: &SimVfs, prefix: usize, path: &str) -> BTreeSet<Option<Vec<u8>>> {
    (0..400u64)
        .map(|seed| {
            let image = sim.crash(prefix, seed);
            image.vfs.files().get(Path::new(path)).cloned()
        })
        .collect()
}

#[test]
fn synced_data_and_entries_survive_every_crash() {
    let sim = SimVfs::new();
    let mut file = sim.create_file(p("f"), b"data").expect("create");
    sim.sync_file(&mut file).expect("fsync");
    sim.sync_dir(p("")).expect("fsync dir");
    let end = sim.trace_len();
    assert_eq!(outcomes(&sim, end, "f"), BTreeSet::from([Some(b"data".to_vec())]));
    // Before any operation the file never existed.
    assert_eq!(outcomes(&sim, 0, "f"), BTreeSet::from([None]));
}

#[test]
fn unsynced_data_is_kept_dropped_or_torn() {
    let sim = SimVfs::new();
    let data: Vec<u8> = (0..3 * 4096 + 100).map(|i| (i % 251) as u8 + 1).collect();
    let _unsynced = sim.create_file(p("f"), &data).expect("create");
    sim.sync_dir(p("")).expect("fsync dir only");
    let seen = outcomes(&sim, sim.trace_len(), "f");
    assert!(seen.contains(&Some(data.clone())), "kept");
    assert!(seen.contains(&Some(Vec::new())), "dropped");
    let torn: Vec<&Vec<u8>> = seen.iter().flatten().filter(|bytes| !bytes.is_empty() && **bytes != data).collect();
    assert!(!torn.is_empty(), "torn");
    for bytes in torn {
        // A torn file keeps whole 4 KiB pages of the real data, then zeros, garbage (which
        // may match a byte or two by chance) or nothing.
        let kept = bytes.iter().zip(&data).take_while(|(a, b)| a == b).count();
        assert!(kept % 4096 < 16, "tear at {kept}");
        assert!(bytes.len() == data.len() || bytes.len() % 4096 == 0, "length {}", bytes.len());
    }
    assert!(!seen.contains(&None), "the entry is durable");
}

#[test]
fn unsynced_renames_may_be_lost_synced_ones_may_not() {
    let sim = SimVfs::from_files([("d/old", b"old".as_slice())]).expect("setup");
    let mut file = sim.create_file(p("d/new.tmp"), b"new").expect("create");
    sim.sync_file(&mut file).expect("fsync");
    sim.sync_dir(p("d")).expect("fsync dir");
    sim.rename(p("d/new.tmp"), p("d/old")).expect("rename");
    let before_sync = sim.trace_len();
    sim.sync_dir(p("d")).expect("fsync dir");
    assert_eq!(outcomes(&sim, before_sync, "d/old"), BTreeSet::from([Some(b"old".to_vec()), Some(b"new".to_vec())]));
    assert_eq!(outcomes(&sim, sim.trace_len(), "d/old"), BTreeSet::from([Some(b"new".to_vec())]));
}

#[test]
fn a_surviving_rename_brings_back_the_creation_it_depends_on() {
    // The file's first directory entry was never synced, but the rename into a synced
    // directory was: the file must exist, with its synced data.
    let sim = SimVfs::from_files([("a/keep", b"".as_slice()), ("b/keep", b"".as_slice())]).expect("setup");
    let mut file = sim.create_file(p("a/x"), b"payload").expect("create");
    sim.sync_file(&mut file).expect("fsync");
    sim.rename(p("a/x"), p("b/x")).expect("rename");
    sim.sync_dir(p("b")).expect("fsync b");
    assert_eq!(outcomes(&sim, sim.trace_len(), "b/x"), BTreeSet::from([Some(b"payload".to_vec())]));
}

#[test]
fn faults_fail_the_nth_operation_once_or_for_good() {
    let sim = SimVfs::new();
    sim.set_fault(Some(Fault { at: 2, kind: FaultKind::Enospc, persistent: false }));
    sim.create_dir(p("a")).expect("operation 1 succeeds");
    let error = sim.create_dir(p("b")).expect_err("operation 2 fails");
    assert_eq!(error.raw_os_error(), Some(28));
    sim.create_dir(p("c")).expect("operation 3 succeeds (transient)");
    assert_eq!(sim.op_count(), 3);

    sim.set_fault(Some(Fault { at: 1, kind: FaultKind::Eacces, persistent: true }));
    assert!(sim.create_file(p("a/f"), b"x").is_err());
    assert!(sim.metadata(p("a")).is_err(), "persistent faults keep failing");
    sim.set_fault(None);
    assert_eq!(sim.metadata(p("a/f")).expect("stat"), None, "EACCES creates nothing");
}

#[test]
fn a_failed_write_may_leave_a_partial_file() {
    let sim = SimVfs::new();
    sim.set_fault(Some(Fault { at: 1, kind: FaultKind::Eio, persistent: false }));
    assert!(sim.create_file(p("f"), b"abcdef").is_err());
    assert_eq!(sim.files().get(Path::new("f")), Some(&b"abc".to_vec()));
}

#[test]
fn a_failed_fsync_poisons_the_handle_and_pins_nothing() {
    let sim = SimVfs::new();
    let mut file = sim.create_file(p("f"), b"data").expect("create");
    sim.sync_dir(p("")).expect("fsync dir");
    let created = sim.op_count();
    sim.set_fault(Some(Fault { at: 1, kind: FaultKind::Eio, persistent: false }));
    assert!(sim.sync_file(&mut file).is_err(), "the injected failure");
    assert!(sim.sync_file(&mut file).is_err(), "a retry on the same handle fails too");
    assert!(created > 0);
    let seen = outcomes(&sim, sim.trace_len(), "f");
    assert!(seen.contains(&Some(Vec::new())), "the data was never made durable");
}

#[test]
fn crash_states_are_reproducible_from_their_seed() {
    let sim = SimVfs::new();
    for index in 0..8 {
        let _unsynced = sim.create_file(Path::new(&format!("f{index}")), &[index; 5000]).expect("create");
    }
    let a = sim.crash(sim.trace_len(), 42);
    let b = sim.crash(sim.trace_len(), 42);
    assert_eq!(a.vfs.files(), b.vfs.files());
    assert_eq!((a.unsynced, a.dropped, a.torn), (b.unsynced, b.dropped, b.torn));
    assert_eq!(a.unsynced, 16, "8 creates and 8 writes, none synced");
}

#[test]
fn a_restart_keeps_the_live_state_but_not_its_durability() {
    let sim = SimVfs::new();
    let _unsynced = sim.create_file(p("f"), b"live").expect("create");
    let restarted = sim.restart(sim.trace_len());
    // The restarted process sees what the dead one wrote...
    assert_eq!(restarted.files().get(Path::new("f")), Some(&b"live".to_vec()));
    // ...but a power loss afterwards may still lose it, until it is synced.
    assert!(outcomes(&restarted, restarted.trace_len(), "f").contains(&None));
    restarted.sync_dir(p("")).expect("fsync dir");
    assert!(!outcomes(&restarted, restarted.trace_len(), "f").contains(&None));
    // A restart at an earlier point sees only the operations issued before it.
    assert_eq!(sim.restart(0).files().get(Path::new("f")), None);
}

#[test]
fn synced_data_whose_entry_was_lost_is_unreachable() {
    let sim = SimVfs::from_files([("d/keep", b"".as_slice())]).expect("setup");
    let mut file = sim.create_file(p("d/f"), b"data").expect("create");
    sim.sync_file(&mut file).expect("fsync the data, not the entry");
    let seen = outcomes(&sim, sim.trace_len(), "d/f");
    assert_eq!(seen, BTreeSet::from([None, Some(b"data".to_vec())]));
}
