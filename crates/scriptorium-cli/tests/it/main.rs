//! Integration tests of the `scriptorium` binary: every test runs the real executable
//! on real files in a fresh temporary directory (or on the repository's vectors and
//! example workspace) and asserts on its exit status, stdout and stderr.

mod archive_parse;
mod check;
mod check_topics;
mod claude_transcript;
mod crash_pipeline;
mod disabled;
mod edit;
mod example_workspace;
mod export;
mod hook_context;
mod hook_install;
mod hook_write;
mod import;
mod json_errors;
mod listing;
mod mcp;
mod newcomer;
mod progress;
mod recall;
mod scripted_model;
mod search;
mod serve_client;
mod serve_disabled;
mod serve_hostile;
mod serve_load;
mod serve_routes;
mod show;
mod status;
mod transaction;
mod views;
mod watch;
mod web_assets;
mod web_driver;
mod web_page;
mod writer;
mod writer_model;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Test result: failures are returned, not unwrapped.
pub(crate) type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The repository root.
pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The golden vectors folder.
pub(crate) fn vectors() -> PathBuf {
    repo_root().join("tests/vectors")
}

/// The example workspace shipped with the repository.
pub(crate) fn example_workspace() -> PathBuf {
    repo_root().join("examples/workspace")
}

/// What one run of the binary produced.
#[derive(Debug)]
pub(crate) struct Run {
    /// The exit status (`None` when killed by a signal).
    pub(crate) code: Option<i32>,
    /// Standard output, as text.
    pub(crate) stdout: String,
    /// Standard error, as text.
    pub(crate) stderr: String,
}

impl Run {
    /// The single stderr line of a failed run, checked to be exactly one line of the
    /// documented form `error[CODE]: message`; returns the code.
    pub(crate) fn error_code(&self) -> Result<&str, String> {
        let line = self.stderr.strip_suffix('\n').ok_or_else(|| format!("stderr not one line: {:?}", self.stderr))?;
        if line.contains('\n') {
            return Err(format!("stderr has more than one line: {:?}", self.stderr));
        }
        let rest = line.strip_prefix("error[").ok_or_else(|| format!("not `error[CODE]: …`: {line:?}"))?;
        let (code, message) = rest.split_once("]: ").ok_or_else(|| format!("not `error[CODE]: …`: {line:?}"))?;
        if message.is_empty() || !code.starts_with("CLI_") {
            return Err(format!("bad error line: {line:?}"));
        }
        Ok(code)
    }

    /// Stdout parsed as JSON.
    pub(crate) fn json(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::from_str(&self.stdout)
    }
}

/// A command for the binary with a clean environment for workspace lookup: the
/// caller's `SCRIPTORIUM_WORKSPACE`, `HOME` and `XDG_DATA_HOME` never leak in.
pub(crate) fn scriptorium(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_scriptorium"));
    cmd.env_remove("SCRIPTORIUM_WORKSPACE").env_remove("XDG_DATA_HOME").env("HOME", home);
    // No writer model or key from the machine running the tests.
    for name in [
        "SCRIPTORIUM_WRITER_MODEL",
        "SCRIPTORIUM_WRITER_BASE_URL",
        "SCRIPTORIUM_WRITER_API_KEY",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        // Nor a configuration that disables memory.
        "SCRIPTORIUM_BACKEND",
        "SCRIPTORIUM_CONFIG",
    ] {
        cmd.env_remove(name);
    }
    cmd.env("RUST_BACKTRACE", "1");
    cmd
}

/// Run a prepared command to completion.
pub(crate) fn run(cmd: &mut Command) -> Result<Run, std::io::Error> {
    let out = cmd.output()?;
    Ok(Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// Copy the directory tree `from` to `to` (created), files and directories only.
pub(crate) fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

/// A fresh directory under the system temp dir, removed on drop.
pub(crate) struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// Create a new, empty directory unique to this process and call.
    pub(crate) fn new() -> Result<Self, std::io::Error> {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("scriptorium-cli-it-{}-{n}", std::process::id()));
        if path.exists() {
            std::fs::remove_dir_all(&path)?;
        }
        std::fs::create_dir_all(&path)?;
        Ok(TempDir { path })
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Write `bytes` at `relative`, creating parent directories.
    pub(crate) fn write(&self, relative: &str, bytes: &[u8]) -> Result<PathBuf, std::io::Error> {
        let path = self.path.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, bytes)?;
        Ok(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Best effort: a leftover temp dir must not turn a passing test into a panic.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A small complete v2 archive for `sources/openprogram/_v2/thread-1.md` (three frames),
/// taken from the vectors so it is known-good reference output.
pub(crate) fn complete_archive() -> Result<Vec<u8>, std::io::Error> {
    std::fs::read(vectors().join("archive_parse/append-to-existing.sources-openprogram-v2-thread-1-md/archive.md"))
}

/// The workspace-relative path `complete_archive` belongs at.
pub(crate) const THREAD_1: &str = "sources/openprogram/_v2/thread-1.md";
