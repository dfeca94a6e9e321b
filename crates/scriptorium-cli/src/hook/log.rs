//! The hook's diagnostics: one line on stderr (Claude Code shows it in verbose mode) and the
//! same line, time-stamped, appended to `<runtime-dir>/hook.log` when the workspace exists,
//! so a person can see later why memory added nothing. Never the prompt's text or a key.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use scriptorium_backend_api::layers::transaction::{RealVfs, runtime_dir_name};
// Aliased so the lines below stay as they are (the hook files change only in their `use` lines).
use scriptorium_backend_api::layers::writer_runtime as scriptorium_writer_runtime;

/// The log file's name in the runtime directory.
pub(crate) const HOOK_LOG: &str = "hook.log";

/// Where the hook logs.
#[derive(Debug, Clone)]
pub(crate) struct Log {
    file: Option<PathBuf>,
}

impl Log {
    /// The log of the workspace at `root`: its runtime directory's `hook.log`, if that directory exists.
    pub(crate) fn for_workspace(root: &Path) -> Log {
        let file = runtime_dir_name(&RealVfs::new(root))
            .ok()
            .map(|dir| root.join(dir))
            .filter(|dir| dir.is_dir())
            .map(|dir| dir.join(HOOK_LOG));
        Log { file }
    }

    /// The file, for a detached child's stderr.
    pub(crate) fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// Report `message` on stderr and in the file (best effort: logging never fails the hook).
    pub(crate) fn line(&self, message: &str) {
        eprintln!("scriptorium hook: {message}");
        if let Some(path) = &self.file
            && let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(path)
        {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64().floor());
            let _ = writeln!(file, "{} {message}", scriptorium_writer_runtime::iso8601_utc(now));
        }
    }
}
