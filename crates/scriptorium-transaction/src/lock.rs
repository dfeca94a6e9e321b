//! The cross-process write lock: `flock(2)` on `<runtime-dir>/write.lock` (spec 01 §1.7,
//! 02 §4.9, 05 §A5), interoperable with the Python reference's `fcntl.flock`.
//!
//! [`WriteLock::acquire`] tries the lock once; if it is busy, the acquirer joins a
//! first-come first-served queue of waiters (`queue.rs`, `<runtime-dir>/lock-queue/`) and
//! only the first live waiter polls the lock, every millisecond or so, the others every
//! few milliseconds to see whether they have become first. An acquirer that is not
//! queued yields to any live waiter, so a writer that releases and re-locks in a loop
//! goes to the back of the line instead of winning every race against sleeping pollers
//! (spec 03 P9, spec 04 §C5). At the caller's timeout it fails with `CONCURRENT_UPDATE`
//! and details `{"lock":"write.lock"}`. The Python reference ignores the queue and just
//! competes on the `flock`, which still excludes it both ways. The queue is only for
//! fairness: when it cannot be used, acquirers poll the `flock` unqueued.
//!
//! After the lock is taken, the path must still name the inode that was locked; if the
//! file was deleted or replaced between `open` and `flock`, the lock is on an orphan and
//! is dropped and retried, so a deleted-and-recreated lock file never yields two
//! holders. A holder re-checks with [`WriteLock::verify`] just before its commit point.
//!
//! The lock is not re-entrant (the reference's is, per thread): every write here is one
//! transaction per call that takes the lock once, recovers, installs and releases, so no
//! code path ever needs to take it twice, and a second attempt from the same process
//! contends like another process, which is the safer failure.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorCode};
use crate::vfs::FILE_MODE;

mod queue;

use queue::Ticket;

/// The lock file's name inside the runtime directory.
pub const LOCK_FILE: &str = "write.lock";

/// How long the background writer waits for the lock (spec 02 §2.8).
pub const BACKGROUND_LOCK_TIMEOUT: Duration = Duration::from_secs(1);

/// How long staged hand edits, backfill and reorganize wait (spec 02 §2.8).
pub const STAGED_EDIT_LOCK_TIMEOUT: Duration = Duration::from_secs(5);

/// How long interactive calls (`memory_update`, stage refresh, id creation) wait.
pub const INTERACTIVE_LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest pause of the first waiter between attempts: it bounds how long a
/// released lock stays free while waiters sleep.
const FIRST_POLL: Duration = Duration::from_millis(1);

/// The longest pause of a waiter behind others between looks at the queue: short next to
/// a commit's hold, so the next waiter is first and polling before the holder releases.
const QUEUED_POLL: Duration = Duration::from_millis(4);

/// The held write lock; dropping it releases the lock.
///
/// Invariant: `file` holds an exclusive `flock` and, when acquired, was the inode named by
/// `path`.
#[derive(Debug)]
pub struct WriteLock {
    file: File,
    path: PathBuf,
    /// A process-unique stamp, taken afresh at the acquisition and at every install
    /// under this hold (see [`WriteLock::stamp`]).
    stamp: AtomicU64,
}

/// The last stamp handed out in this process.
static STAMPS: AtomicU64 = AtomicU64::new(0);

fn next_stamp() -> u64 {
    STAMPS.fetch_add(1, Ordering::Relaxed).wrapping_add(1)
}

impl WriteLock {
    /// Take `<runtime_dir>/write.lock`, creating it (mode 0600) if needed, waiting at most
    /// `timeout`. A zero timeout tries once.
    pub fn acquire(runtime_dir: &Path, timeout: Duration) -> Result<WriteLock, Error> {
        let path = runtime_dir.join(LOCK_FILE);
        // `None`: a timeout too large to represent, which waits forever.
        let deadline = Instant::now().checked_add(timeout);
        // Our place in the queue once the lock was found busy; dropping it leaves.
        let mut ticket: Option<Ticket> = None;
        loop {
            // The queue only orders waiters; the flock alone excludes. So a queue that
            // cannot be used (no inode left, something planted in its place) costs
            // fairness, never the lock.
            let may_try = match ticket.as_mut() {
                None => !queue::has_live_waiter(runtime_dir).unwrap_or(false),
                Some(ticket) => ticket.is_first().unwrap_or(true),
            };
            let attempt = if may_try { try_once(&path)? } else { Attempt::Busy };
            let now = Instant::now();
            let remaining = deadline.map(|deadline| deadline.saturating_duration_since(now));
            match attempt {
                Attempt::Acquired(lock) => {
                    drop(ticket);
                    crate::crashpoint!("lock.acquired");
                    return Ok(lock);
                }
                // The file changed under us: the new one may well be free, try it at once.
                Attempt::Stale if remaining != Some(Duration::ZERO) => continue,
                Attempt::Stale | Attempt::Busy => {}
            }
            if remaining == Some(Duration::ZERO) {
                return Err(Error::new(
                    ErrorCode::ConcurrentUpdate,
                    "the workspace write lock is held by another writer",
                )
                .with_detail("lock", LOCK_FILE));
            }
            if ticket.is_none() {
                ticket = Ticket::join(runtime_dir).unwrap_or(None);
                // We may be first already (the queue was empty): look again at once.
                if ticket.is_some() {
                    continue;
                }
            }
            let cap = if may_try { FIRST_POLL } else { QUEUED_POLL };
            // Jitter keeps waiters, and a reference process polling at a fixed interval,
            // from falling into lockstep.
            let cap_micros = u64::try_from(cap.as_micros()).unwrap_or(u64::MAX);
            let pause = Duration::from_micros(crate::random::below(cap_micros) + 1);
            std::thread::sleep(remaining.map_or(pause, |remaining| pause.min(remaining)));
        }
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Which hold of the lock this is, and how far into it: a value no other hold in this
    /// process ever has, changed by every install under it ([`Self::installing`]). A cache
    /// that recorded the stamp when it last matched the tree knows, while the stamp is the
    /// same, that no lock holder has installed anything since.
    pub(crate) fn stamp(&self) -> u64 {
        self.stamp.load(Ordering::Relaxed)
    }

    /// Note that an install under this hold is about to change the tree.
    pub(crate) fn installing(&self) {
        self.stamp.store(next_stamp(), Ordering::Relaxed);
    }

    /// Check that the lock file path still names the locked inode. A lock file deleted or
    /// replaced while held means another process may now hold a lock on the new file, so
    /// the holder must not commit: `CONCURRENT_UPDATE`.
    pub fn verify(&self) -> Result<(), Error> {
        if same_file(&self.file, &self.path)? {
            Ok(())
        } else {
            Err(Error::new(ErrorCode::ConcurrentUpdate, "the write lock file was deleted or replaced while held")
                .with_detail("lock", LOCK_FILE))
        }
    }
}

impl Drop for WriteLock {
    fn drop(&mut self) {
        // Closing the descriptor releases the flock anyway; unlocking first makes the
        // release independent of any duplicated descriptor.
        let _ = self.file.unlock();
    }
}

/// The outcome of one attempt.
enum Attempt {
    Acquired(WriteLock),
    /// Another holder has it.
    Busy,
    /// We locked an inode the path no longer names (deleted or replaced in between).
    Stale,
}

/// One attempt: open (or create) the lock file, try to lock it, and keep the lock only
/// if the path still names the same inode.
fn try_once(path: &Path) -> Result<Attempt, Error> {
    // Opening with `create` follows a link and could create a file anywhere: refuse one.
    if fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink()) {
        return Err(Error::new(ErrorCode::PathOutsideWorkspace, "the write lock file is a symbolic link")
            .with_path(path.display().to_string()));
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(FILE_MODE)
        .open(path)
        .map_err(|error| Error::from(error).with_path(path.display().to_string()))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Ok(Attempt::Busy),
        Err(TryLockError::Error(error)) => return Err(Error::from(error).with_path(path.display().to_string())),
    }
    if same_file(&file, path)? {
        Ok(Attempt::Acquired(WriteLock { file, path: path.to_path_buf(), stamp: AtomicU64::new(next_stamp()) }))
    } else {
        // Dropping `file` releases the lock on the orphaned inode.
        Ok(Attempt::Stale)
    }
}

/// Whether `path` currently names the inode `file` has open.
fn same_file(file: &File, path: &Path) -> Result<bool, Error> {
    let held = file.metadata()?;
    match fs::metadata(path) {
        Ok(named) => Ok(named.dev() == held.dev() && named.ino() == held.ino()),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(Error::from(error).with_path(path.display().to_string())),
    }
}

#[cfg(test)]
mod tests;
