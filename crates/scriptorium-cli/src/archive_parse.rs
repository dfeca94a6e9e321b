//! `scriptorium archive parse FILE`: scan one archive and report its frames (v2) or
//! records (legacy).
//!
//! Exit status: 0 for a complete v2 archive or any legacy archive, 1 for an incomplete
//! v2 archive (the scan is still printed), 2 when the file cannot be scanned at all.

use std::fmt::Write as _;
use std::path::Path;

use scriptorium_archive_format::{Frame, Parsed, StopReason, is_v2_source_path, parse_bytes};

use crate::Outcome;
use crate::cli::ParseArgs;
use crate::error::{CliError, CliErrorCode};
use crate::legacy::LegacySummary;
use crate::output::{count, print, print_json};
use crate::relative::default_relative_path;

/// Run `archive parse`.
pub(crate) fn run(args: &ParseArgs) -> Result<Outcome, CliError> {
    let relative_path = args.relative_path.clone().unwrap_or_else(|| default_relative_path(&args.file));
    let bytes = read_archive(&args.file, &relative_path)?;
    if is_v2_source_path(&relative_path) {
        let parsed = parse_bytes(&bytes, &relative_path);
        if no_line_is_utf8(&parsed, &bytes) {
            return Err(CliError::new(
                CliErrorCode::NotUtf8,
                format!("{}: not UTF-8 (the first line already holds an invalid byte)", args.file.display()),
            ));
        }
        if args.json {
            // The scan's own JSON, re-read so that it prints like every other report.
            let scan: serde_json::Value = serde_json::from_str(&parsed.to_json())
                .map_err(|err| CliError::new(CliErrorCode::Internal, format!("cannot render JSON: {err}")))?;
            print_json(&scan)?;
        } else {
            print(&human_v2(&relative_path, &parsed))?;
        }
        Ok(if parsed.is_complete() { Outcome::Clean } else { Outcome::Findings })
    } else {
        // The legacy reader works on text, as the reference's does (it skips files
        // that do not decode), so a non-UTF-8 legacy file has nothing to report.
        let text = std::str::from_utf8(&bytes).map_err(|err| {
            CliError::new(
                CliErrorCode::NotUtf8,
                format!("{}: legacy archive is not UTF-8 at byte {}", args.file.display(), err.valid_up_to()),
            )
        })?;
        let summary = LegacySummary::read(&relative_path, text);
        if args.json {
            print_json(&summary.to_json())?;
        } else {
            print(&human_legacy(&relative_path, &summary))?;
        }
        Ok(Outcome::Clean)
    }
}

/// Read the file, refusing what cannot be an archive: a directory or special file,
/// or a workspace path that does not end in `.md`.
fn read_archive(file: &Path, relative_path: &str) -> Result<Vec<u8>, CliError> {
    let meta = std::fs::metadata(file).map_err(|err| CliError::read(file, &err))?;
    if !meta.is_file() {
        let what = if meta.is_dir() { "a directory" } else { "not a regular file" };
        return Err(CliError::new(
            CliErrorCode::NotAnArchive,
            format!("{}: {what}, not an archive file", file.display()),
        ));
    }
    if !relative_path.ends_with(".md") {
        return Err(CliError::new(
            CliErrorCode::NotAnArchive,
            format!("{relative_path}: not an archive: archives are `*.md` files under sources/ (see --relative-path)"),
        ));
    }
    std::fs::read(file).map_err(|err| CliError::read(file, &err))
}

/// Whether the scan stopped for bad UTF-8 before any complete line: then the file is
/// not a partly valid archive but not text at all, and that is an input error.
fn no_line_is_utf8(parsed: &Parsed<'_>, bytes: &[u8]) -> bool {
    let not_utf8 = parsed.stop.is_some_and(|stop| stop.reason == StopReason::NotUtf8);
    let valid_up_to = std::str::from_utf8(bytes).err().map_or(bytes.len(), |err| err.valid_up_to());
    not_utf8 && !bytes.get(..valid_up_to).is_some_and(|valid| valid.contains(&b'\n'))
}

/// The human summary of a v2 scan: one verdict line, then one line per frame.
fn human_v2(relative_path: &str, parsed: &Parsed<'_>) -> String {
    let mut out = format!("{relative_path}: v2 archive, {}, ", count(parsed.frames.len(), "frame", "frames"));
    match parsed.stop {
        None => out.push_str("complete\n"),
        Some(stop) => {
            let _ = writeln!(
                out,
                "stopped at line {} (byte {}): {} ({})",
                stop.line + 1,
                stop.byte,
                stop.reason.as_str(),
                stop.reason.describe()
            );
        }
    }
    for frame in &parsed.frames {
        let _ = writeln!(out, "  line {}: {} ({})", frame.frame_start + 1, frame.source_id, frame_details(frame));
    }
    out
}

/// Speaker, trust and size of one frame, for humans.
fn frame_details(frame: &Frame<'_>) -> String {
    let mut parts = Vec::new();
    match frame.speaker_id.as_deref() {
        Some("") => parts.push("display-only speaker".to_owned()),
        Some(id) => parts.push(format!("speaker {id}")),
        None => {}
    }
    match &frame.meta {
        Some(meta) => {
            if let Some(tier) = meta.authority_tier {
                parts.push(tier.as_str().to_owned());
            }
            parts.push(meta.trust_state.as_str().to_owned());
        }
        // Decision Q7: a frame without `source-meta` reads as trusted.
        None => parts.push("no source-meta, trusted".to_owned()),
    }
    parts.push(count(frame.record_lines(), "record line", "record lines"));
    parts.join(", ")
}

/// The human summary of a legacy archive.
fn human_legacy(relative_path: &str, summary: &LegacySummary) -> String {
    let mut out = format!(
        "{relative_path}: legacy archive (pre-v2, read-only), {}\n",
        count(summary.records.len(), "record", "records")
    );
    for record in &summary.records {
        let _ = write!(out, "  line {}: {}", record.line, record.event_id);
        // Anonymous events stand for the benchmark refs they cite.
        if record.refs.iter().any(|r| *r != record.event_id) {
            let _ = write!(out, " (refs {})", record.refs.join(", "));
        }
        // The speaker is only a retrieval hint from the body prefix, never trusted.
        if !record.speaker_label.is_empty() {
            let _ = write!(out, " (untrusted speaker hint: {})", record.speaker_label);
        }
        out.push('\n');
    }
    out
}
