//! A scratch workspace per case: a fresh directory under the system temp dir, removed
//! when dropped, so cases that write files never see each other's leftovers.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A directory under the system temp dir, removed when dropped.
pub(super) struct TempDir(PathBuf);

impl TempDir {
    /// A new empty directory whose name starts with `scriptorium-<purpose>-`.
    pub(super) fn new(purpose: &str) -> io::Result<Self> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("scriptorium-{purpose}-{}-{n}", std::process::id()));
        if path.exists() {
            std::fs::remove_dir_all(&path)?;
        }
        std::fs::create_dir_all(&path)?;
        Ok(TempDir(path))
    }

    /// The directory.
    pub(super) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Best effort: a leftover temp dir is harmless and must not hide the result.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
