//! The waiting line for the write lock: `<runtime-dir>/lock-queue/`, one entry file per
//! waiting acquirer, which the waiter holds `flock`ed for as long as it waits.
//!
//! `flock` alone is not fair: a releasing writer that loops re-locks before any sleeping
//! poller wakes, so waits grow without bound. So an acquirer that finds the lock busy
//! queues, only the first live entry may take the lock, and an acquirer that is not
//! queued yields to any live entry. The Python reference knows nothing of this queue and
//! still competes on the `flock` itself, which is what excludes it.
//!
//! - **Order without a clock.** An entry is named `<ticket>-<pid>-<random>`, the ticket
//!   20 decimal digits: one more than the largest ticket listed when joining, so an
//!   entry sorts after every entry that existed before it. Two acquirers that join at
//!   once may draw the same ticket; the rest of the name breaks the tie, and names never
//!   collide (`create_new`).
//! - **Liveness is the entry's `flock`.** The kernel drops it when the waiter dies, so an
//!   entry whose lock can be taken is stale and whoever sees that removes it. An entry
//!   can also be seen unlocked in the instant between its creation and its owner's
//!   `flock`; the owner then finds its entry gone and recreates it under the same name,
//!   keeping its place, and it re-checks this on every poll.
//! - **No growth.** Entries are removed on acquire, timeout and drop, stale ones by the
//!   next waiter, and the directory itself by whoever leaves it empty, so an uncontended
//!   acquirer pays one failed `lstat` for the queue check.
//! - Modes: the directory is 0700, the entries 0600, like the rest of the runtime directory.

use std::fs::{self, DirBuilder, File, OpenOptions, TryLockError};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorCode};
use crate::vfs::{DIR_MODE, FILE_MODE};

use super::same_file;

/// The queue directory's name inside the runtime directory.
pub(crate) const QUEUE_DIR: &str = "lock-queue";

/// Digits of the ticket at the start of an entry name (all of `u64`).
const TICKET_DIGITS: usize = 20;

/// This acquirer's place in the queue; dropping it leaves the queue.
///
/// Invariant: `file` holds an exclusive `flock` on the inode created at `path`.
#[derive(Debug)]
pub(crate) struct Ticket {
    file: File,
    path: PathBuf,
    name: String,
}

impl Ticket {
    /// Join the queue behind every entry listed now. `None` when a concurrent cleanup
    /// removed the directory or the new entry in between: try again on the next poll.
    pub(crate) fn join(runtime_dir: &Path) -> Result<Option<Ticket>, Error> {
        let queue = runtime_dir.join(QUEUE_DIR);
        if !make_queue_dir(&queue)? {
            return Ok(None);
        }
        let Some(names) = entries(&queue)? else { return Ok(None) };
        let ticket = names.iter().filter_map(|name| ticket_of(name)).max().map_or(0, |last| last.saturating_add(1));
        let name = format!("{ticket:0TICKET_DIGITS$}-{}-{:016x}", std::process::id(), crate::random::u64());
        let path = queue.join(&name);
        Ok(create_locked(&path)?.map(|file| Ticket { file, path, name }))
    }

    /// Whether no live entry is ahead of this one, so this acquirer may take the lock.
    /// Removes the stale entries it passes, and restores this entry if a cleanup that
    /// raced its creation removed it.
    pub(crate) fn is_first(&mut self) -> Result<bool, Error> {
        let Some(parent) = self.path.parent() else { return Ok(false) };
        if !same_file(&self.file, &self.path)? {
            // The directory too may have gone, removed as empty by the last leaver.
            if !make_queue_dir(parent)? {
                return Ok(false);
            }
            match create_locked(&self.path)? {
                Some(file) => self.file = file,
                None => return Ok(false),
            }
        }
        let Some(mut ahead) = entries(parent)? else { return Ok(false) };
        // Tickets have a fixed width, so names sort in queue order.
        ahead.retain(|name| *name < self.name);
        // The nearest first: when it is live (the usual case) one probe decides.
        ahead.sort_unstable_by(|a, b| b.cmp(a));
        for name in ahead {
            if probe(&parent.join(name))? == Liveness::Live {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        // Unlink while still holding the entry's flock, so nobody sees it unlocked.
        if same_file(&self.file, &self.path).unwrap_or(false) {
            let _ = fs::remove_file(&self.path);
        }
        if let Some(queue) = self.path.parent() {
            remove_if_empty(queue);
        }
    }
}

/// Whether a live acquirer is queued, for an acquirer that is not: it must then queue
/// too. Stale entries are removed on the way. The uncontended case is one failed `lstat`.
pub(crate) fn has_live_waiter(runtime_dir: &Path) -> Result<bool, Error> {
    let queue = runtime_dir.join(QUEUE_DIR);
    if !is_queue_dir(&queue)? {
        return Ok(false);
    }
    let Some(mut names) = entries(&queue)? else { return Ok(false) };
    // The oldest first: it is the one most likely to be live and waiting.
    names.sort_unstable();
    for name in names {
        if probe(&queue.join(name))? == Liveness::Live {
            return Ok(true);
        }
    }
    remove_if_empty(&queue);
    Ok(false)
}

/// Create the queue directory (mode 0700) unless it exists; whether it is usable.
fn make_queue_dir(queue: &Path) -> Result<bool, Error> {
    match DirBuilder::new().mode(DIR_MODE).create(queue) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(Error::from(error).with_path(queue.display().to_string())),
    }
    is_queue_dir(queue)
}

/// Whether the queue directory exists; anything but a directory there (a symbolic link
/// could make us create and remove files elsewhere) is refused.
fn is_queue_dir(queue: &Path) -> Result<bool, Error> {
    match fs::symlink_metadata(queue) {
        Ok(meta) if meta.is_dir() => Ok(true),
        Ok(_) => Err(Error::new(ErrorCode::PathOutsideWorkspace, "the lock queue is not a directory")
            .with_path(queue.display().to_string())),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(Error::from(error).with_path(queue.display().to_string())),
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Liveness {
    Live,
    Gone,
}

/// Whether the entry at `path` belongs to a waiter that still holds it; an entry nobody
/// holds is removed.
fn probe(path: &Path) -> Result<Liveness, Error> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Liveness::Gone),
        Err(error) => return Err(Error::from(error).with_path(path.display().to_string())),
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Ok(Liveness::Live),
        Err(TryLockError::Error(error)) => return Err(Error::from(error).with_path(path.display().to_string())),
    }
    // Unlocked: its owner died, left, or is between creating and locking it (and will
    // recreate it). Only the inode we hold may be unlinked; a path that names another
    // one now may be a recreated live entry, so it counts as live until the next look.
    if !same_file(&file, path)? {
        return Ok(if path.exists() { Liveness::Live } else { Liveness::Gone });
    }
    match fs::remove_file(path) {
        Ok(()) => Ok(Liveness::Gone),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(Liveness::Gone),
        Err(error) => Err(Error::from(error).with_path(path.display().to_string())),
    }
}

/// Create the entry at `path` and lock it; `None` if the directory or the new entry was
/// removed before the lock was held.
fn create_locked(path: &Path) -> Result<Option<File>, Error> {
    let file = match OpenOptions::new().read(true).write(true).create_new(true).mode(FILE_MODE).open(path) {
        Ok(file) => file,
        // The directory was removed as empty, or the name is taken: both are races
        // another look resolves.
        Err(error) if matches!(error.kind(), io::ErrorKind::NotFound | io::ErrorKind::AlreadyExists) => {
            return Ok(None);
        }
        Err(error) => return Err(Error::from(error).with_path(path.display().to_string())),
    };
    // Blocking is safe: a prober holds a fresh entry only for a few system calls and
    // never waits while holding it.
    file.lock().map_err(|error| Error::from(error).with_path(path.display().to_string()))?;
    if same_file(&file, path)? { Ok(Some(file)) } else { Ok(None) }
}

/// The entry names in `queue` (others are ignored and never removed); `None` if the
/// directory is gone.
fn entries(queue: &Path) -> Result<Option<Vec<String>>, Error> {
    let listing = match fs::read_dir(queue) {
        Ok(listing) => listing,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(Error::from(error).with_path(queue.display().to_string())),
    };
    let mut names = Vec::new();
    for entry in listing {
        let entry = entry.map_err(|error| Error::from(error).with_path(queue.display().to_string()))?;
        if let Some(name) = entry.file_name().to_str().filter(|name| ticket_of(name).is_some()) {
            names.push(name.to_owned());
        }
    }
    Ok(Some(names))
}

/// The ticket of an entry name, `None` for a name that is not an entry's.
fn ticket_of(name: &str) -> Option<u64> {
    let (ticket, rest) = name.split_once('-')?;
    let well_formed = ticket.len() == TICKET_DIGITS && ticket.bytes().all(|b| b.is_ascii_digit()) && !rest.is_empty();
    well_formed.then(|| ticket.parse().ok()).flatten()
}

/// Remove the queue directory if no entry is left; a failure (not empty, already gone)
/// is the expected outcome under contention.
fn remove_if_empty(queue: &Path) {
    let _ = fs::remove_dir(queue);
}

#[cfg(test)]
mod tests;
