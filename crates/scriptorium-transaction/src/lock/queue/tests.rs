//! The queue within one process: entries are separate open file descriptions, so their
//! `flock`s behave as between processes. Killed waiters are tested for real in T6.

use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::test_support::TempDir;

fn mode(path: &Path) -> u32 {
    fs::metadata(path).expect("stat").permissions().mode() & 0o777
}

fn names(runtime_dir: &Path) -> Vec<String> {
    let mut names = entries(&runtime_dir.join(QUEUE_DIR)).expect("list").unwrap_or_default();
    names.sort();
    names
}

#[test]
fn waiters_are_first_in_the_order_they_joined() {
    let temp = TempDir::new("queue-order");
    let mut first = Ticket::join(temp.path()).expect("join").expect("no race");
    let mut second = Ticket::join(temp.path()).expect("join").expect("no race");
    let mut third = Ticket::join(temp.path()).expect("join").expect("no race");
    assert_eq!(names(temp.path()), [first.name.clone(), second.name.clone(), third.name.clone()]);
    assert_eq!(ticket_of(&second.name), ticket_of(&first.name).map(|ticket| ticket + 1));

    assert!(first.is_first().expect("look"));
    assert!(!second.is_first().expect("look"));
    assert!(!third.is_first().expect("look"));
    drop(first);
    assert!(second.is_first().expect("look"));
    assert!(!third.is_first().expect("look"));
    drop(second);
    assert!(third.is_first().expect("look"));
}

#[test]
fn the_queue_directory_and_entries_are_private_and_vanish_when_the_last_waiter_leaves() {
    let temp = TempDir::new("queue-modes");
    assert!(!has_live_waiter(temp.path()).expect("look"), "no directory, no waiter");
    let ticket = Ticket::join(temp.path()).expect("join").expect("no race");
    let queue = temp.path().join(QUEUE_DIR);
    assert_eq!(mode(&queue), 0o700);
    assert_eq!(mode(&ticket.path), 0o600);
    assert!(has_live_waiter(temp.path()).expect("look"));
    drop(ticket);
    assert!(!queue.exists(), "the last waiter removes the directory");
    assert!(!has_live_waiter(temp.path()).expect("look"));
}

/// A dead waiter's entry: a file with an entry's name that nobody holds.
fn plant_dead_entry(runtime_dir: &Path, ticket: u64) -> PathBuf {
    let queue = runtime_dir.join(QUEUE_DIR);
    fs::create_dir_all(&queue).expect("mkdir");
    let path = queue.join(format!("{ticket:020}-1-dead"));
    fs::write(&path, b"").expect("write");
    path
}

#[test]
fn an_entry_nobody_holds_is_stale_and_removed_by_the_next_look() {
    let temp = TempDir::new("queue-stale");
    let dead = plant_dead_entry(temp.path(), 7);
    let mut waiter = Ticket::join(temp.path()).expect("join").expect("no race");
    assert_eq!(ticket_of(&waiter.name), Some(8), "behind the dead entry");
    assert!(waiter.is_first().expect("look"), "a stale entry ahead does not count");
    assert!(!dead.exists(), "and is removed");
    drop(waiter);

    // Seen by an acquirer that is not queued, a stale entry is removed with the directory.
    plant_dead_entry(temp.path(), 3);
    assert!(!has_live_waiter(temp.path()).expect("look"));
    assert!(!temp.path().join(QUEUE_DIR).exists());
}

#[test]
fn an_entry_removed_by_a_racing_cleanup_is_restored_under_the_same_name() {
    let temp = TempDir::new("queue-restore");
    let mut first = Ticket::join(temp.path()).expect("join").expect("no race");
    let mut second = Ticket::join(temp.path()).expect("join").expect("no race");
    // What a prober does in the instant between an entry's creation and its flock.
    fs::remove_file(&first.path).expect("remove");
    assert!(second.is_first().expect("look"), "the entry is missing for now");
    assert!(first.is_first().expect("look"), "its owner restores it and keeps its place");
    assert!(first.path.exists());
    assert!(!second.is_first().expect("look"));
}

#[test]
fn an_entry_is_restored_even_after_the_directory_was_removed_as_empty() {
    let temp = TempDir::new("queue-restore-dir");
    let mut ticket = Ticket::join(temp.path()).expect("join").expect("no race");
    fs::remove_file(&ticket.path).expect("remove");
    fs::remove_dir(temp.path().join(QUEUE_DIR)).expect("rmdir");
    assert!(ticket.is_first().expect("look"));
    assert!(ticket.path.exists(), "the entry and its directory are back");
    assert_eq!(mode(&temp.path().join(QUEUE_DIR)), 0o700);
}

#[test]
fn files_that_are_not_entries_are_ignored_and_kept() {
    let temp = TempDir::new("queue-junk");
    let queue = temp.path().join(QUEUE_DIR);
    fs::create_dir(&queue).expect("mkdir");
    for junk in ["notes.txt", "00000000000000000001", "1-2-3", "99999999999999999999-x"] {
        fs::write(queue.join(junk), b"").expect("write");
    }
    assert!(!has_live_waiter(temp.path()).expect("look"));
    let mut ticket = Ticket::join(temp.path()).expect("join").expect("no race");
    assert_eq!(ticket_of(&ticket.name), Some(0));
    assert!(ticket.is_first().expect("look"));
    drop(ticket);
    assert!(queue.join("notes.txt").exists() && queue.join("1-2-3").exists());
}

#[test]
fn a_queue_that_is_not_a_directory_is_refused() {
    let temp = TempDir::new("queue-link");
    let elsewhere = temp.path().join("elsewhere");
    fs::create_dir(&elsewhere).expect("mkdir");
    std::os::unix::fs::symlink(&elsewhere, temp.path().join(QUEUE_DIR)).expect("link");
    let error = has_live_waiter(temp.path()).expect_err("refused");
    assert_eq!(error.code(), ErrorCode::PathOutsideWorkspace);
}

#[test]
fn joining_through_a_link_in_place_of_the_queue_is_refused() {
    let temp = TempDir::new("queue-join-link");
    let elsewhere = temp.path().join("elsewhere");
    fs::create_dir(&elsewhere).expect("mkdir");
    std::os::unix::fs::symlink(&elsewhere, temp.path().join(QUEUE_DIR)).expect("link");
    let error = Ticket::join(temp.path()).expect_err("refused");
    assert_eq!(error.code(), ErrorCode::PathOutsideWorkspace);
    assert_eq!(fs::read_dir(&elsewhere).expect("list").count(), 0, "nothing was created through the link");
}
