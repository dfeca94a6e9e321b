//! Where the workspace is: `--workspace`, else `$SCRIPTORIUM_WORKSPACE`, else the
//! platform data directory; and whether that directory is a memory workspace at all.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::{CliError, CliErrorCode};

/// The environment variable naming the default workspace.
pub(crate) const WORKSPACE_ENV: &str = "SCRIPTORIUM_WORKSPACE";

/// A workspace root that exists and holds `sources/` or `topics/`.
#[derive(Debug)]
pub(crate) struct Workspace {
    /// The root as given (after `~` expansion), for messages and listing.
    pub(crate) root: PathBuf,
}

impl Workspace {
    /// Resolve the workspace from the flag, the environment or the platform default,
    /// and check that it looks like a memory workspace.
    pub(crate) fn locate(flag: Option<&Path>) -> Result<Self, CliError> {
        let (root, origin) = resolve(flag)?;
        let not_found = |why: &str| {
            CliError::new(CliErrorCode::WorkspaceNotFound, format!("{} (from {origin}) {why}", root.display()))
        };
        match std::fs::metadata(&root) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Err(not_found("is not a directory")),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Err(not_found("does not exist")),
            Err(err) => return Err(not_found(&format!("cannot be read: {err}"))),
        }
        // Both OpenProgram and Scriptorium create `sources/` and `topics/` lazily, so
        // either one marks a workspace; a directory with neither is a wrong path.
        if !root.join("sources").is_dir() && !root.join("topics").is_dir() {
            return Err(not_found("is not a memory workspace: it has no sources/ or topics/ directory"));
        }
        Ok(Workspace { root })
    }
}

/// The root the flag, the environment or the platform default names (whether or not it
/// exists yet), and a name for where it came from.
pub(crate) fn resolve(flag: Option<&Path>) -> Result<(PathBuf, &'static str), CliError> {
    match flag {
        Some(path) => Ok((expand_home(path), "--workspace")),
        None => default_root(),
    }
}

/// The default root and a name for where it came from (used in error messages).
fn default_root() -> Result<(PathBuf, &'static str), CliError> {
    if let Some(value) = non_empty_env(WORKSPACE_ENV) {
        return Ok((expand_home(Path::new(&value)), "$SCRIPTORIUM_WORKSPACE"));
    }
    match data_dir() {
        Some(dir) => Ok((dir.join("scriptorium").join("memory"), "the platform data directory")),
        None => Err(CliError::new(
            CliErrorCode::WorkspaceNotFound,
            format!("no workspace: pass --workspace DIR or set ${WORKSPACE_ENV} (no home directory to default to)"),
        )),
    }
}

/// The per-user data directory: `$XDG_DATA_HOME` (when absolute) or
/// `$HOME/.local/share` on Linux and other Unix systems,
/// `$HOME/Library/Application Support` on macOS, `%APPDATA%` on Windows.
fn data_dir() -> Option<PathBuf> {
    if cfg!(target_os = "macos") {
        home_dir().map(|home| home.join("Library").join("Application Support"))
    } else if cfg!(windows) {
        non_empty_env("APPDATA").map(PathBuf::from)
    } else {
        // The XDG spec says a relative value is invalid and must be ignored.
        non_empty_env("XDG_DATA_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| home_dir().map(|home| home.join(".local").join("share")))
    }
}

/// The user's home directory from the environment (`HOME`, or `USERPROFILE` on Windows).
fn home_dir() -> Option<PathBuf> {
    let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    non_empty_env(var).map(PathBuf::from)
}

fn non_empty_env(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// Replace a leading `~` component with the home directory. Shells expand an unquoted
/// `~/x` themselves, but not `--workspace=~/x` or a quoted value, and users expect the
/// documented `--workspace ~/.openprogram/memory` to work either way.
pub(crate) fn expand_home(path: &Path) -> PathBuf {
    let mut components = path.components();
    match components.next() {
        Some(std::path::Component::Normal(first)) if first == "~" => match home_dir() {
            Some(home) => home.join(components.as_path()),
            None => path.to_path_buf(),
        },
        _ => path.to_path_buf(),
    }
}
