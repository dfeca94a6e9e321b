//! The v2 archive writer as a pure plan (spec 01 §2.7 steps 1–5 and §2.8): given records
//! and a read-only view of the tree, compute the full new bytes of every archive to
//! touch. Publishing the plan (temp file, fsync, rename) is the transaction layer's job.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use crate::FORMAT_MARKER;
use crate::error::{Error, ErrorCode};
use crate::ids::source_anchor;
use crate::parse::{Parsed, parse_bytes};
use crate::python::{casefold, nfc};
use crate::record::{CheckedRecord, SourceRecord};
use crate::speaker::encode_speaker_id;
use crate::tree::ArchiveTree;

/// The largest record a `record-lines` count (at most nine digits) can describe.
const MAX_RECORD_LINES: usize = 999_999_999;

/// What appending a batch would write: one entry per archive that gains frames.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AppendPlan {
    /// The archives to (re)write, in the order their first record sorts.
    pub files: Vec<PlannedFile>,
    /// Every record's source id in (provider, thread, ordinal) order, including the
    /// ids that were already archived and are therefore skipped: the reference's result.
    pub refs: Vec<String>,
}

impl AppendPlan {
    /// Whether nothing needs writing (every record was already archived).
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// One archive file of an [`AppendPlan`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlannedFile {
    /// The workspace-relative path, `sources/<provider>/_v2/<thread>.md`.
    pub path: String,
    /// The complete new file: the existing bytes unchanged, then the new frames.
    pub bytes: Vec<u8>,
    /// Whether a file existed at `path` before (possibly empty).
    pub existed: bool,
    /// The source ids of the appended frames, in file order.
    pub appended: Vec<String>,
}

/// Render one record as the frame a v2 archive holds: anchor, `source-id`, optional
/// `speaker-id`, `source-meta`, `record-lines` and the record lines, each ending in LF.
/// The empty terminator line is the separator [`plan_append`] puts between frames.
pub fn render_frame(record: &SourceRecord) -> Result<String, Error> {
    render_checked(&record.validate()?)
}

fn render_checked(checked: &CheckedRecord<'_>) -> Result<String, Error> {
    let record = checked.record;
    // The timestamp and label hold no LF (validated), so only the content adds lines.
    let lines = 1 + memchr::memchr_iter(b'\n', record.content.as_bytes()).count();
    if lines > MAX_RECORD_LINES {
        return Err(Error::new(ErrorCode::LimitExceeded, "source record has too many lines for a record-lines count"));
    }
    let mut out = String::with_capacity(record.content.len() + checked.header_label.len() + 320);
    // `write!` into a String cannot fail; the results are ignored for that reason.
    let _ = writeln!(out, "<a id=\"{}\"></a>", source_anchor(&checked.source_id));
    let _ = writeln!(out, "<!-- source-id:{} -->", checked.source_id);
    if record.has_speaker_line() {
        let encoded = encode_speaker_id(record.speaker_id.as_deref().unwrap_or_default());
        let _ = writeln!(out, "<!-- speaker-id:{encoded} -->");
    }
    out.push_str(&checked.meta.to_line());
    out.push('\n');
    let _ = writeln!(out, "<!-- record-lines:{lines} -->");
    let _ = writeln!(out, "[{}] {}: {}", checked.timestamp, checked.header_label, record.content);
    Ok(out)
}

/// Plan appending `records` to their v2 archives in `tree` (spec 01 §2.7 steps 1–5).
///
/// Records are sorted by (provider, thread, ordinal) and validated; the planned paths
/// are checked for case/normalization collisions among themselves and against the
/// existing tree (§2.8); every existing non-empty target must scan complete, else the
/// whole batch is refused (decision Q4); ids already in the target file, or earlier in
/// the batch, are skipped. Nothing is written: on any error there is no plan at all.
pub fn plan_append(records: &[SourceRecord], tree: &dyn ArchiveTree) -> Result<AppendPlan, Error> {
    let mut sorted: Vec<&SourceRecord> = records.iter().collect();
    // A stable sort keeps the input order of equal keys, as Python's `sorted` does.
    sorted.sort_by(|a, b| (&a.provider, &a.thread_id, a.ordinal).cmp(&(&b.provider, &b.thread_id, b.ordinal)));
    let checked: Vec<CheckedRecord<'_>> = sorted.into_iter().map(SourceRecord::validate).collect::<Result<_, _>>()?;

    let mut paths: Vec<&str> = Vec::new();
    for record in &checked {
        if !paths.contains(&record.path.as_str()) {
            paths.push(&record.path);
        }
    }
    check_path_collisions(&paths, tree)?;

    // Read and scan every target before building anything: one bad file refuses all.
    let mut targets = Vec::with_capacity(paths.len());
    for path in &paths {
        let existing = tree.read_file(path).map_err(|e| read_failed(path, e))?;
        let (known, needs_terminator) = match existing.as_deref() {
            Some(bytes) if !bytes.is_empty() => {
                let parsed = parse_bytes(bytes, path);
                if !parsed.is_complete() {
                    return Err(Error::new(
                        ErrorCode::IncompleteArchive,
                        format!("invalid or truncated v2 archive: {path}"),
                    ));
                }
                let known = parsed.frames.iter().map(|frame| frame.source_id.to_owned()).collect();
                (known, last_line_is_terminator(&parsed, bytes.len()))
            }
            _ => (HashSet::new(), false),
        };
        targets.push(Target { path, existing, known, needs_terminator, frames: Vec::new(), appended: Vec::new() });
    }

    for record in &checked {
        let Some(target) = targets.iter_mut().find(|t| t.path == record.path) else { continue };
        if target.known.insert(record.source_id.clone()) {
            target.frames.push(render_checked(record)?);
            target.appended.push(record.source_id.clone());
        }
    }

    let files = targets.into_iter().filter(|t| !t.frames.is_empty()).map(Target::into_planned).collect();
    let refs = checked.into_iter().map(|record| record.source_id).collect();
    Ok(AppendPlan { files, refs })
}

/// Whether a complete archive's last line is its last frame's terminator, so that the
/// next frame must first end that line; otherwise the last line is already an empty
/// line where the scanner looks for the next frame (a zero-frame file, or the extra
/// trailing LF of decision Q4).
fn last_line_is_terminator(parsed: &Parsed<'_>, len: usize) -> bool {
    parsed.frames.last().is_some_and(|last| last.record_byte + last.record_text.len() + 1 == len)
}

struct Target<'a> {
    path: &'a str,
    existing: Option<Vec<u8>>,
    known: HashSet<String>,
    needs_terminator: bool,
    frames: Vec<String>,
    appended: Vec<String>,
}

impl Target<'_> {
    /// Step 5: the existing text (plus the LF that ends its last terminator line, when
    /// that line is the last one), or the marker lines for a new or empty file; then
    /// the frames separated by empty lines.
    ///
    /// Decision Q4: the reference always adds that LF, so after an archive that ends in
    /// one extra empty line its new frames land behind two empty lines where no scanner
    /// reaches them. Here the new frames always start on the line the scanner reads
    /// next, which also gives the canonical bytes.
    fn into_planned(self) -> PlannedFile {
        let existed = self.existing.is_some();
        let mut bytes = match self.existing {
            Some(bytes) if !bytes.is_empty() => bytes,
            _ => format!("{FORMAT_MARKER}\n\n").into_bytes(),
        };
        if self.needs_terminator {
            bytes.push(b'\n');
        }
        for (n, frame) in self.frames.iter().enumerate() {
            if n > 0 {
                bytes.push(b'\n');
            }
            bytes.extend_from_slice(frame.as_bytes());
        }
        PlannedFile { path: self.path.to_owned(), bytes, existed, appended: self.appended }
    }
}

fn read_failed(path: &str, error: std::io::Error) -> Error {
    Error::new(ErrorCode::ReadFailed, format!("cannot read {path}: {error}")).with_source(error)
}

/// The collision key of a path or name: `casefold(NFC(s))`. Two names with one key are
/// one file on a case-insensitive or normalizing file system (spec 01 §2.8); the
/// transaction refuses topic paths by the same key.
pub fn collision_key(s: &str) -> String {
    casefold(&nfc(s))
}

fn collision(a: &str, b: &str) -> Error {
    Error::new(ErrorCode::PathCollision, format!("source archive path collision: {a} and {b}"))
}

/// Spec 01 §2.8: no two spellings of one key among the planned paths and their
/// prefixes, and no existing entry that differs from a planned component only by
/// case or normalization (such pairs are one file on case-insensitive systems).
fn check_path_collisions(paths: &[&str], tree: &dyn ArchiveTree) -> Result<(), Error> {
    let mut seen: HashMap<String, &str> = HashMap::new();
    for path in paths {
        let ends = path.match_indices('/').map(|(i, _)| i).chain([path.len()]);
        for prefix in ends.filter_map(|end| path.get(..end)) {
            let other = *seen.entry(collision_key(prefix)).or_insert(prefix);
            if other != prefix {
                return Err(collision(other, prefix));
            }
        }
    }

    let mut listings: HashMap<String, Option<Vec<String>>> = HashMap::new();
    for path in paths {
        let mut dir = String::new();
        for component in path.split('/') {
            if !listings.contains_key(&dir) {
                let mut entries = tree.list_dir(&dir).map_err(|e| read_failed(&dir, e))?;
                if let Some(entries) = entries.as_mut() {
                    entries.sort();
                }
                listings.insert(dir.clone(), entries);
            }
            let Some(Some(entries)) = listings.get(&dir) else { break };
            let key = collision_key(component);
            let here = if dir.is_empty() { component.to_owned() } else { format!("{dir}/{component}") };
            if let Some(entry) = entries.iter().find(|entry| entry.as_str() != component && collision_key(entry) == key)
            {
                let existing = if dir.is_empty() { entry.clone() } else { format!("{dir}/{entry}") };
                // The reference names the path it was about to write first, then the entry in its way.
                return Err(collision(&here, &existing));
            }
            if !entries.iter().any(|entry| entry == component) {
                break;
            }
            dir = here;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
