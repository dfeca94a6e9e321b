//! The repository's files outside the object store: `.git/` itself, `HEAD`, the local
//! config with the memory identity, `info/exclude`, stale lock files.
//!
//! Everything here is idempotent and runs before gix opens the repository, because gix
//! refuses a repository whose `HEAD` or config is damaged.

use std::io;
use std::path::Path;

use super::refs::{self, Head};
use super::{HISTORY_USER_EMAIL, HISTORY_USER_NAME, HistoryReport};
use crate::error::{Error, ErrorCode};

/// The lines `.git/info/exclude` must hold, so that a human's `git status` (and the
/// reference's `git add -A`) never sees the runtime directory, stage or quarantine.
pub(super) const EXCLUDE_LINES: &[&str] = &["/.scriptorium*", "/.nativemem*"];

/// Where a config that gix cannot parse is kept when it is replaced.
const DAMAGED_CONFIG: &str = "config.damaged";

/// Who commits: the local `user.name` / `user.email`, which initialization sets to the
/// memory identity when they are unset.
#[derive(Clone, Debug)]
pub(super) struct Identity {
    pub(super) name: String,
    pub(super) email: String,
}

/// Create the repository if `.git/` is absent and bring its non-object files into a
/// state gix can open. Records every repair of damage in `report`.
pub(super) fn ensure(root: &Path, report: &mut HistoryReport) -> Result<Identity, Error> {
    let git_dir = root.join(".git");
    match std::fs::symlink_metadata(&git_dir) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => init(root)?,
        Err(error) => return Err(unavailable("cannot inspect .git", error)),
        Ok(metadata) if !metadata.is_dir() => {
            return Err(Error::new(ErrorCode::GitUnavailable, ".git is not a directory").with_path(".git"));
        }
        Ok(_) => {}
    }
    remove_stale_locks(&git_dir, report);
    for dir in ["objects", "refs/heads", "refs/tags", "info"] {
        std::fs::create_dir_all(git_dir.join(dir))
            .map_err(|error| unavailable("cannot create .git directories", error))?;
    }
    if matches!(refs::read_head(&git_dir), Head::Broken) {
        let branches = refs::branches(&git_dir);
        let branch = ["refs/heads/main", "refs/heads/master"]
            .into_iter()
            .find(|name| branches.iter().any(|branch| branch == name))
            .or_else(|| branches.first().map(String::as_str))
            .unwrap_or("refs/heads/main")
            .to_owned();
        refs::write_head(&git_dir, &branch).map_err(|error| unavailable("cannot rewrite HEAD", error))?;
        report.repairs.push(format!("HEAD was unreadable; pointed it at {branch}"));
    }
    let identity = ensure_config(&git_dir, report)?;
    ensure_exclude(&git_dir).map_err(|error| unavailable("cannot update .git/info/exclude", error))?;
    Ok(identity)
}

/// `git init` without the binary. The options are isolated from the user's and the
/// system's Git configuration, so that every workspace starts the same way.
fn init(root: &Path) -> Result<(), Error> {
    gix::ThreadSafeRepository::init_opts(
        root,
        gix::create::Kind::WithWorktree,
        gix::create::Options::default(),
        gix::open::Options::isolated(),
    )
    .map(drop)
    .map_err(|error| Error::new(ErrorCode::GitUnavailable, format!("cannot initialize history: {error}")))
}

/// Remove lock files a crashed writer left behind. Gix (like Git) fails at once when a
/// lock exists, so one stale `HEAD.lock` would otherwise end history for good. Every
/// writer of this repository runs under the workspace write lock, which the caller holds.
fn remove_stale_locks(git_dir: &Path, report: &mut HistoryReport) {
    let mut locks = Vec::new();
    collect_locks(git_dir, &mut locks, true);
    for lock in locks {
        if std::fs::remove_file(&lock).is_ok() {
            let name = lock.strip_prefix(git_dir).unwrap_or(&lock).display().to_string();
            report.repairs.push(format!("removed the stale lock .git/{name}"));
        }
    }
}

fn collect_locks(dir: &Path, locks: &mut Vec<std::path::PathBuf>, top: bool) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else { continue };
        let name = entry.file_name();
        if kind.is_file() && name.to_string_lossy().ends_with(".lock") {
            locks.push(entry.path());
        } else if kind.is_dir() && (!top || name == "refs" || name == "logs") {
            collect_locks(&entry.path(), locks, false);
        }
    }
}

/// Make sure the local config parses and names who commits. A config gix cannot parse
/// (a truncated write) is kept as `config.damaged` and replaced; the core settings of a
/// fresh repository are added when the file has none, and `user.name` / `user.email`
/// are set to the memory identity when unset (spec 01 §1.5).
fn ensure_config(git_dir: &Path, report: &mut HistoryReport) -> Result<Identity, Error> {
    use gix::config::{File, Source, file::Metadata};

    let path = git_dir.join("config");
    let mut bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(error) => return Err(unavailable("cannot read .git/config", error)),
    };
    let original = bytes.clone();
    let mut config = match File::from_bytes_owned(&mut bytes, Metadata::from(Source::Local), Default::default()) {
        Ok(config) => config,
        Err(_) => {
            std::fs::rename(&path, git_dir.join(DAMAGED_CONFIG))
                .map_err(|error| unavailable("cannot set the damaged .git/config aside", error))?;
            report
                .repairs
                .push(format!("the Git config did not parse; kept it as .git/{DAMAGED_CONFIG} and rewrote it"));
            File::new(Metadata::from(Source::Local))
        }
    };
    let defaults: &[(&str, &str)] = &[
        ("core.repositoryformatversion", "0"),
        ("core.bare", "false"),
        ("core.logallrefupdates", "true"),
        ("user.name", HISTORY_USER_NAME),
        ("user.email", HISTORY_USER_EMAIL),
    ];
    for (key, value) in defaults {
        if config.string(*key).is_none() {
            config
                .set_raw_value(*key, *value)
                .map_err(|error| Error::new(ErrorCode::GitUnavailable, format!("cannot set {key}: {error}")))?;
        }
    }
    let rendered = config.to_bstring();
    if rendered.as_slice() != original.as_slice() {
        refs::write_locked(&path, &rendered).map_err(|error| unavailable("cannot write .git/config", error))?;
    }
    let get =
        |key: &str, default: &str| config.string(key).map_or_else(|| default.to_owned(), |value| value.to_string());
    Ok(Identity { name: get("user.name", HISTORY_USER_NAME), email: get("user.email", HISTORY_USER_EMAIL) })
}

/// Append the runtime-directory patterns to `.git/info/exclude` where missing.
fn ensure_exclude(git_dir: &Path) -> io::Result<()> {
    let path = git_dir.join("info").join("exclude");
    let mut text = match std::fs::read(&path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(error) if error.kind() == io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(error),
    };
    let missing: Vec<&str> =
        EXCLUDE_LINES.iter().copied().filter(|wanted| !text.lines().any(|line| line.trim() == *wanted)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    for line in missing {
        text.push_str(line);
        text.push('\n');
    }
    refs::write_locked(&path, text.as_bytes())
}

fn unavailable(what: &str, error: io::Error) -> Error {
    Error::new(ErrorCode::GitUnavailable, format!("{what}: {error}")).with_source(error)
}
