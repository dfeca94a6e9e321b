//! The `archives` section of `check`: every v2 and legacy archive under `sources/`,
//! each reported as complete, or where (line and byte) and why its scan stopped.
//!
//! A v2 archive that does not scan to its end fails the check: a writer refuses to
//! append to it (decision Q4), so the thread's memory is stuck until it is repaired.
//! Legacy archives are frozen and have no completeness notion; they are listed only.

use std::fmt::Write as _;

use scriptorium_backend_api::layers::archive_format::{Stop, is_v2_source_path, parse_bytes};
use scriptorium_backend_api::layers::transaction::FileClass;
use serde_json::{Value, json};

use crate::check::Section;
use crate::error::{CliError, CliErrorCode};
use crate::legacy::LegacySummary;
use crate::listing::WorkspaceListing;
use crate::output::count;

/// The archives section: one entry per file, in component-wise path order.
#[derive(Debug)]
pub(crate) struct ArchivesSection {
    entries: Vec<Entry>,
}

/// What one file (or unreadable directory) turned out to be.
#[derive(Debug)]
struct Entry {
    /// Workspace-relative path with `/` separators.
    path: String,
    /// What was found.
    status: Status,
}

#[derive(Debug)]
enum Status {
    /// A v2 archive scanned to its end or to `stop`.
    V2 { frames: usize, stop: Option<Stop> },
    /// A legacy archive and the number of records its reader finds.
    Legacy { records: usize },
    /// A legacy archive that is not UTF-8: readers skip it, so it holds no memory.
    LegacyNotUtf8 { valid_up_to: usize },
    /// The file or directory could not be read; it was not checked.
    Unreadable(CliError),
}

impl ArchivesSection {
    /// Scan every archive the listing holds. Reads only.
    pub(crate) fn scan(listing: &WorkspaceListing) -> Self {
        let mut entries: Vec<Entry> = listing
            .files(FileClass::Source)
            .into_iter()
            .map(|file| {
                let status = match std::fs::read(&file.path) {
                    Err(err) => Status::Unreadable(CliError::read(&file.path, &err)),
                    Ok(bytes) => scan_file(&file.relative, &bytes),
                };
                Entry { path: file.relative, status }
            })
            .collect();
        entries.extend(listing.unreadable("sources").map(|e| Entry {
            status: Status::Unreadable(CliError::new(
                CliErrorCode::ReadFailed,
                format!("{}: cannot list directory: {}", e.path, e.error),
            )),
            path: e.path.clone(),
        }));
        ArchivesSection { entries }
    }

    fn count_where(&self, pred: impl Fn(&Status) -> bool) -> usize {
        self.entries.iter().filter(|e| pred(&e.status)).count()
    }
}

fn scan_file(path: &str, bytes: &[u8]) -> Status {
    if is_v2_source_path(path) {
        let parsed = parse_bytes(bytes, path);
        return Status::V2 { frames: parsed.frames.len(), stop: parsed.stop };
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Status::Legacy { records: LegacySummary::read(path, text).records.len() },
        Err(err) => Status::LegacyNotUtf8 { valid_up_to: err.valid_up_to() },
    }
}

impl Status {
    /// Whether this entry fails the check.
    fn failed(&self) -> bool {
        matches!(self, Status::V2 { stop: Some(_), .. } | Status::Unreadable(_))
    }
}

impl Section for ArchivesSection {
    fn name(&self) -> &'static str {
        "archives"
    }

    fn failed(&self) -> bool {
        self.entries.iter().any(|e| e.status.failed())
    }

    fn to_json(&self) -> Value {
        let files: Vec<Value> = self.entries.iter().map(entry_json).collect();
        json!({
            "ok": !self.failed(),
            "v2": self.count_where(|s| matches!(s, Status::V2 { .. })),
            "legacy": self.count_where(|s| matches!(s, Status::Legacy { .. } | Status::LegacyNotUtf8 { .. })),
            "incomplete": self.count_where(|s| matches!(s, Status::V2 { stop: Some(_), .. })),
            "unreadable": self.count_where(|s| matches!(s, Status::Unreadable(_))),
            "files": files,
        })
    }

    fn to_human(&self) -> String {
        let mut out = String::new();
        if self.entries.is_empty() {
            out.push_str("  no archives under sources/\n");
        }
        for entry in &self.entries {
            let _ = writeln!(out, "  {}: {}", entry.path, human_status(&entry.status));
        }
        let v2 = self.count_where(|s| matches!(s, Status::V2 { .. }));
        let incomplete = self.count_where(|s| matches!(s, Status::V2 { stop: Some(_), .. }));
        let unreadable = self.count_where(|s| matches!(s, Status::Unreadable(_)));
        let legacy = self.entries.len() - v2 - unreadable;
        let _ = write!(
            out,
            "  {}, {}: {} incomplete",
            count(v2, "v2 archive", "v2 archives"),
            count(legacy, "legacy archive", "legacy archives"),
            incomplete
        );
        if unreadable > 0 {
            let _ = write!(out, ", {unreadable} unreadable");
        }
        out.push('\n');
        out
    }
}

fn human_status(status: &Status) -> String {
    match status {
        Status::V2 { frames, stop: None } => format!("v2, {}, complete", count(*frames, "frame", "frames")),
        Status::V2 { frames, stop: Some(stop) } => format!(
            "v2, {}, INCOMPLETE: stopped at line {} (byte {}): {} ({})",
            count(*frames, "frame", "frames"),
            stop.line + 1,
            stop.byte,
            stop.reason.as_str(),
            stop.reason.describe()
        ),
        Status::Legacy { records } => format!("legacy, {}", count(*records, "record", "records")),
        Status::LegacyNotUtf8 { valid_up_to } => {
            format!("legacy, not UTF-8 at byte {valid_up_to}: readers skip this file (warning)")
        }
        Status::Unreadable(err) => format!("UNREADABLE: {err}"),
    }
}

/// One file as JSON. Stop lines are given both ways: `line` is 1-based (what an
/// editor shows), `stopped_at_line` is the scanner's 0-based index (as in
/// `archive parse --json` and the golden vectors).
fn entry_json(entry: &Entry) -> Value {
    match &entry.status {
        Status::V2 { frames, stop: None } => {
            json!({ "path": entry.path, "kind": "v2", "frames": frames, "complete": true })
        }
        Status::V2 { frames, stop: Some(stop) } => json!({
            "path": entry.path,
            "kind": "v2",
            "frames": frames,
            "complete": false,
            "stop": {
                "line": stop.line + 1,
                "stopped_at_line": stop.line,
                "byte": stop.byte,
                "reason": stop.reason.as_str(),
                "description": stop.reason.describe(),
            },
        }),
        Status::Legacy { records } => json!({ "path": entry.path, "kind": "legacy", "records": records }),
        Status::LegacyNotUtf8 { valid_up_to } => json!({
            "path": entry.path,
            "kind": "legacy",
            "records": 0,
            "warning": {
                "code": CliErrorCode::NotUtf8.as_str(),
                "message": format!("not UTF-8 at byte {valid_up_to}: readers skip this file"),
            },
        }),
        Status::Unreadable(err) => json!({
            "path": entry.path,
            "kind": unreadable_kind(&entry.path),
            "error": { "code": err.code().as_str(), "message": err.message() },
        }),
    }
}

/// The kind of an entry that could not be read: listing failures name directories.
fn unreadable_kind(path: &str) -> &'static str {
    if !path.ends_with(".md") {
        "directory"
    } else if is_v2_source_path(path) {
        "v2"
    } else {
        "legacy"
    }
}
