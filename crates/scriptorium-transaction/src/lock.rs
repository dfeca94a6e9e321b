//! The cross-process write lock: `flock(2)` on `<runtime-dir>/write.lock` (spec 01 §1.7,
//! 02 §4.9, 05 §A5), interoperable with the Python reference's `fcntl.flock`.
//!
//! [`WriteLock::acquire`] polls `File::try_lock` with exponential backoff and full jitter
//! (1 ms doubling to 50 ms, the reference's poll interval) until the caller's timeout, then
//! fails with `CONCURRENT_UPDATE` and details `{"lock":"write.lock"}`. Jitter matters: the
//! reference's fixed 50 ms polling lets a writer starve under contention (spec 04 §C5).
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
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorCode};
use crate::vfs::FILE_MODE;

/// The lock file's name inside the runtime directory.
pub const LOCK_FILE: &str = "write.lock";

/// How long the background writer waits for the lock (spec 02 §2.8).
pub const BACKGROUND_LOCK_TIMEOUT: Duration = Duration::from_secs(1);

/// How long staged hand edits, backfill and reorganize wait (spec 02 §2.8).
pub const STAGED_EDIT_LOCK_TIMEOUT: Duration = Duration::from_secs(5);

/// How long interactive calls (`memory_update`, stage refresh, id creation) wait.
pub const INTERACTIVE_LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// The first pause between attempts.
const FIRST_BACKOFF: Duration = Duration::from_millis(1);

/// The longest pause between attempts: the reference's poll interval.
const MAX_BACKOFF: Duration = Duration::from_millis(50);

/// The held write lock; dropping it releases the lock.
///
/// Invariant: `file` holds an exclusive `flock` and, when acquired, was the inode named by
/// `path`.
#[derive(Debug)]
pub struct WriteLock {
    file: File,
    path: PathBuf,
}

impl WriteLock {
    /// Take `<runtime_dir>/write.lock`, creating it (mode 0600) if needed, waiting at most
    /// `timeout`. A zero timeout tries once.
    pub fn acquire(runtime_dir: &Path, timeout: Duration) -> Result<WriteLock, Error> {
        let path = runtime_dir.join(LOCK_FILE);
        // `None`: a timeout too large to represent, which waits forever.
        let deadline = Instant::now().checked_add(timeout);
        let mut backoff = FIRST_BACKOFF;
        loop {
            let attempt = try_once(&path)?;
            let now = Instant::now();
            let remaining = deadline.map(|deadline| deadline.saturating_duration_since(now));
            match attempt {
                Attempt::Acquired(lock) => {
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
            // Full jitter: a uniformly random pause up to the current backoff.
            let cap = u64::try_from(backoff.as_micros()).unwrap_or(u64::MAX);
            let pause = Duration::from_micros(crate::random::below(cap) + 1);
            std::thread::sleep(remaining.map_or(pause, |remaining| pause.min(remaining)));
            backoff = backoff.saturating_mul(2).min(MAX_BACKOFF);
        }
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
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
        Ok(Attempt::Acquired(WriteLock { file, path: path.to_path_buf() }))
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
