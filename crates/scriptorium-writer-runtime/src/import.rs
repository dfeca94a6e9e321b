//! Importers: agent transcripts into the session store (docs/format/session-import.md).
//!
//! [`import_paths`] reads transcript files of one [`Format`] and appends their nodes to
//! a [`SqliteStore`], idempotent by node id and incremental: the store's
//! `import_files` table keeps, per file, how many bytes were read and a fingerprint of
//! them, so a re-run reads only appended lines, and a file whose prefix changed is read
//! again from the start (still without duplicates). Each format module turns lines into
//! nodes: conversation turns (`user`/`assistant` with authority fields) and machinery
//! nodes (`tool`, `system`) that keep the conversation DAG connected but are no turns
//! (spec 02 §2.2). A malformed line becomes a [`Problem`] with its file and line and is
//! skipped; files never change, and nodes of files deleted later stay in the store.

mod authority;
mod chatgpt;
mod claude_code;
mod codex;
mod jsonl;
mod lines;
mod openprogram;
mod report;
mod state;

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::store::SqliteStore;

pub use self::report::{ImportReport, Problem, ProblemCode};

/// A transcript format [`import_paths`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// Claude Code session files, `~/.claude/projects/<project>/<session>.jsonl`.
    ClaudeCode,
    /// Codex CLI rollouts, `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`.
    Codex,
    /// A ChatGPT data export's `conversations.json`.
    ChatGpt,
    /// Scriptorium's own line format (docs/format/session-import.md).
    Jsonl,
    /// OpenProgram's memory-root v2 source archives,
    /// `<state>/memory/sources/openprogram/_v2/<session>.md`.
    OpenProgram,
}

impl Format {
    /// Every format, in the order the CLI lists them.
    pub const ALL: &'static [Format] =
        &[Format::ClaudeCode, Format::Codex, Format::ChatGpt, Format::Jsonl, Format::OpenProgram];

    /// The name the CLI takes (`claude-code`, `codex`, `chatgpt`, `jsonl`, `openprogram`).
    pub const fn name(self) -> &'static str {
        match self {
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
            Format::ChatGpt => "chatgpt",
            Format::Jsonl => "jsonl",
            Format::OpenProgram => "openprogram",
        }
    }

    /// The format called `name`, if any.
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.iter().copied().find(|format| format.name() == name)
    }

    /// Whether a file met while walking a directory is a transcript of this format.
    fn wants(self, path: &Path) -> bool {
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
        match self {
            // Subagent transcripts (`agent-*.jsonl`, older layouts) are not the person's
            // conversation; `subagents/` directories are skipped by the walk.
            Format::ClaudeCode => name.ends_with(".jsonl") && !name.starts_with("agent-"),
            Format::Codex => name.starts_with("rollout-") && name.ends_with(".jsonl"),
            Format::ChatGpt => name == "conversations.json",
            Format::Jsonl => name.ends_with(".jsonl"),
            Format::OpenProgram => openprogram::wants(path),
        }
    }

    /// Directories a walk does not enter.
    fn skips_dir(self, name: &str) -> bool {
        name.starts_with('.') || (self == Format::ClaudeCode && matches!(name, "subagents" | "tool-results" | "memory"))
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Options of one import run.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// The time stamped on sessions that change (Unix seconds); the system clock when
    /// `None`.
    pub now: Option<f64>,
}

/// Import `paths` (files, or directories walked for this format's files) with default
/// options.
pub fn import_paths(store: &SqliteStore, format: Format, paths: &[PathBuf]) -> Result<ImportReport, Error> {
    import_paths_with(store, format, paths, &ImportOptions::default())
}

/// Import `paths` as [`import_paths`] does, with `options`. Only a session-store failure
/// is an error; unreadable files and malformed lines are [`Problem`]s in the report.
pub fn import_paths_with(
    store: &SqliteStore,
    format: Format,
    paths: &[PathBuf],
    options: &ImportOptions,
) -> Result<ImportReport, Error> {
    let now = options.now.unwrap_or_else(now_seconds);
    let mut report = ImportReport::default();
    let mut files = Vec::new();
    for path in paths {
        if format == Format::OpenProgram && path.is_dir() {
            // A state dir or memory root stands for its archive directory, so the walk
            // never enters the rest of the state (topics, Git, session stores).
            collect(format, &openprogram::archive_dir(path), true, &mut files, &mut report);
        } else {
            collect(format, path, true, &mut files, &mut report);
        }
    }
    files.sort();
    files.dedup();
    for file in &files {
        report.files_seen += 1;
        match format {
            Format::ChatGpt => chatgpt::import_file(store, file, now, &mut report)?,
            Format::OpenProgram => openprogram::import_file(store, file, now, &mut report)?,
            Format::ClaudeCode | Format::Codex | Format::Jsonl => {
                lines::import_file(store, format, file, now, &mut report)?
            }
        }
    }
    Ok(report)
}

/// Where `format`'s transcripts live by default: Claude Code's `projects/` under
/// `$CLAUDE_CONFIG_DIR` and `~/.claude`; Codex's `sessions/` under `$CODEX_HOME`
/// (default `~/.codex`); OpenProgram's state dir (`~/.openprogram`, or
/// `~/.openprogram-<P>` under `OPENPROGRAM_PROFILE=P`). Only directories that exist;
/// none for formats without a home.
pub fn default_paths(format: Format) -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").filter(|home| !home.is_empty()).map(PathBuf::from);
    let env_dir = |name: &str| std::env::var_os(name).filter(|dir| !dir.is_empty()).map(PathBuf::from);
    let mut out = Vec::new();
    match format {
        Format::ClaudeCode => {
            out.extend(env_dir("CLAUDE_CONFIG_DIR").map(|dir| dir.join("projects")));
            out.extend(home.map(|home| home.join(".claude").join("projects")));
        }
        Format::Codex => {
            out.extend(
                env_dir("CODEX_HOME").or_else(|| home.map(|home| home.join(".codex"))).map(|d| d.join("sessions")),
            );
        }
        Format::OpenProgram => out.extend(openprogram::default_state_dir(home)),
        Format::ChatGpt | Format::Jsonl => {}
    }
    out.dedup();
    out.retain(|dir| dir.is_dir());
    out
}

/// Add `path` (a file given by name, taken whatever its name, or a directory walked for
/// this format's files) to `files`; links are not followed inside a walk.
fn collect(format: Format, path: &Path, given: bool, files: &mut Vec<PathBuf>, report: &mut ImportReport) {
    let metadata = if given { std::fs::metadata(path) } else { std::fs::symlink_metadata(path) };
    let metadata = match metadata {
        Ok(metadata) => metadata,
        Err(error) => {
            report.problem(ProblemCode::Unreadable, path.to_path_buf(), None, error.kind().to_string());
            return;
        }
    };
    if metadata.is_file() {
        if given || format.wants(path) {
            files.push(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()));
        }
        return;
    }
    if !metadata.is_dir() {
        return;
    }
    let entries = match std::fs::read_dir(path) {
        Ok(entries) => entries,
        Err(error) => {
            report.problem(ProblemCode::Unreadable, path.to_path_buf(), None, error.kind().to_string());
            return;
        }
    };
    let mut children: Vec<PathBuf> = entries.filter_map(Result::ok).map(|entry| entry.path()).collect();
    children.sort();
    for child in children {
        let name = child.file_name().and_then(|name| name.to_str()).unwrap_or_default();
        if child.is_dir() && format.skips_dir(name) {
            continue;
        }
        collect(format, &child, false, files, report);
    }
}

fn now_seconds() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

/// The file's key in `import_files`: its canonical path as text.
fn path_key(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}
