//! The lock within one process: descriptors contend like processes do (flock is per open
//! file description), timeouts surface as `CONCURRENT_UPDATE`, and the inode check
//! refuses a lock on a file the path no longer names. Cross-process cases live in the
//! `crash` test binary (T6).

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use super::*;
use crate::test_support::TempDir;

#[test]
fn a_second_acquirer_times_out_with_concurrent_update_then_succeeds_after_release() {
    let temp = TempDir::new("lock");
    let held = WriteLock::acquire(temp.path(), Duration::ZERO).expect("free lock");
    let mode = std::fs::metadata(temp.path().join(LOCK_FILE)).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    let started = Instant::now();
    let error = WriteLock::acquire(temp.path(), Duration::from_millis(120)).expect_err("held");
    assert!(started.elapsed() >= Duration::from_millis(120));
    assert_eq!(error.code(), ErrorCode::ConcurrentUpdate);
    assert_eq!(error.details().get("lock").and_then(|v| v.as_str()), Some(LOCK_FILE));

    drop(held);
    WriteLock::acquire(temp.path(), Duration::ZERO).expect("released on drop");
}

#[test]
fn a_waiting_acquirer_gets_the_lock_when_it_is_released() {
    let temp = TempDir::new("lock-wait");
    let held = WriteLock::acquire(temp.path(), Duration::ZERO).expect("free lock");
    let path = temp.path().to_path_buf();
    let waiter = std::thread::spawn(move || WriteLock::acquire(&path, Duration::from_secs(10)).map(|_| ()));
    std::thread::sleep(Duration::from_millis(50));
    drop(held);
    waiter.join().expect("thread").expect("acquired after release");
}

#[test]
fn a_lock_on_a_replaced_file_is_stale_and_never_returned() {
    let temp = TempDir::new("lock-stale");
    let path = temp.path().join(LOCK_FILE);
    // Open the old inode (as an acquirer does), then the file is deleted and recreated
    // before the flock succeeds.
    let old = std::fs::File::create(&path).expect("create");
    std::fs::remove_file(&path).expect("delete");
    std::fs::write(&path, b"").expect("recreate");
    old.try_lock().expect("the orphan inode is free");
    assert!(!same_file(&old, &path).expect("stat"), "the path names another inode now");
    // A real attempt locks the new inode, not the orphan.
    let lock = WriteLock::acquire(temp.path(), Duration::ZERO).expect("new inode is free");
    lock.verify().expect("and it is the one the path names");
}

#[test]
fn a_holder_whose_file_was_deleted_or_replaced_may_not_commit() {
    let temp = TempDir::new("lock-verify");
    let lock = WriteLock::acquire(temp.path(), Duration::ZERO).expect("free lock");
    lock.verify().expect("fresh lock verifies");
    std::fs::remove_file(lock.path()).expect("delete while held");
    assert_eq!(lock.verify().expect_err("gone").code(), ErrorCode::ConcurrentUpdate);

    // Another acquirer creates a new file and gets it: two flocks, but only one of them
    // passes `verify`, which install calls before its commit point.
    let other = WriteLock::acquire(temp.path(), Duration::ZERO).expect("new file");
    other.verify().expect("the new holder verifies");
    assert!(lock.verify().is_err());

    drop(other);
    let replacement = temp.path().join("replacement");
    let third = WriteLock::acquire(temp.path(), Duration::ZERO).expect("free again");
    std::fs::write(&replacement, b"").expect("write");
    std::fs::rename(&replacement, third.path()).expect("replace while held");
    assert_eq!(third.verify().expect_err("replaced").code(), ErrorCode::ConcurrentUpdate);
}

#[test]
fn a_symbolic_link_in_place_of_the_lock_file_is_refused() {
    let temp = TempDir::new("lock-link");
    let target = temp.path().join("elsewhere");
    std::os::unix::fs::symlink(&target, temp.path().join(LOCK_FILE)).expect("link");
    let error = WriteLock::acquire(temp.path(), Duration::ZERO).expect_err("refused");
    assert_eq!(error.code(), ErrorCode::PathOutsideWorkspace);
    assert!(!target.exists(), "nothing was created through the link");
}

#[test]
fn an_acquirer_that_is_not_queued_yields_to_a_live_waiter_even_when_the_lock_is_free() {
    let temp = TempDir::new("lock-yield");
    let waiter = queue::Ticket::join(temp.path()).expect("join").expect("no race");
    for timeout in [Duration::ZERO, Duration::from_millis(60)] {
        let error = WriteLock::acquire(temp.path(), timeout).expect_err("a waiter is queued");
        assert_eq!(error.code(), ErrorCode::ConcurrentUpdate);
        assert_eq!(error.details().get("lock").and_then(|v| v.as_str()), Some(LOCK_FILE));
    }
    let queue = temp.path().join(queue::QUEUE_DIR);
    assert_eq!(std::fs::read_dir(&queue).expect("list").count(), 1, "the timed-out acquirer left no entry");
    drop(waiter);
    assert!(!queue.exists());
    WriteLock::acquire(temp.path(), Duration::ZERO).expect("free, nobody waiting");
    assert!(!queue.exists(), "an uncontended acquire does not create the queue");
}

#[test]
fn a_busy_lock_queues_the_acquirer_and_it_leaves_on_acquire() {
    let temp = TempDir::new("lock-queue-leave");
    let held = WriteLock::acquire(temp.path(), Duration::ZERO).expect("free lock");
    let path = temp.path().to_path_buf();
    let waiter = std::thread::spawn(move || WriteLock::acquire(&path, Duration::from_secs(10)).map(|_| ()));
    let queue = temp.path().join(queue::QUEUE_DIR);
    let started = Instant::now();
    while std::fs::read_dir(&queue).map_or(0, |listing| listing.count()) == 0 {
        assert!(started.elapsed() < Duration::from_secs(10), "the waiter never queued");
        std::thread::sleep(Duration::from_millis(1));
    }
    drop(held);
    waiter.join().expect("thread").expect("acquired after release");
    assert!(!queue.exists(), "the waiter left the queue and removed it");
}

#[test]
fn something_planted_in_place_of_the_queue_is_never_followed_and_does_not_stop_the_lock() {
    for planted_link in [true, false] {
        let temp = TempDir::new("lock-planted-queue");
        let elsewhere = temp.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).expect("mkdir");
        let dead_entry = elsewhere.join(format!("{:020}-1-dead", 0));
        std::fs::write(&dead_entry, b"").expect("write");
        let queue = temp.path().join(queue::QUEUE_DIR);
        if planted_link {
            std::os::unix::fs::symlink(&elsewhere, &queue).expect("link");
        } else {
            std::fs::write(&queue, b"").expect("write");
        }

        let held = WriteLock::acquire(temp.path(), Duration::ZERO).expect("a free lock is still taken");
        let error = WriteLock::acquire(temp.path(), Duration::from_millis(30)).expect_err("held");
        assert_eq!(error.code(), ErrorCode::ConcurrentUpdate);
        drop(held);
        WriteLock::acquire(temp.path(), Duration::ZERO).expect("free again");
        assert!(dead_entry.exists(), "nothing was removed through the link");
        assert_eq!(std::fs::read_dir(&elsewhere).expect("list").count(), 1, "nothing was created through it");
    }
}
