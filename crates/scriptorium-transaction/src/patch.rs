//! Form A of a changes request: a unified diff applied to the staged topic files
//! (spec 02 §4.2).
//!
//! Parsing is separate from applying so the transaction can refuse a malformed patch
//! before it takes the write lock. Applying is pure: it reads the stage through
//! [`StageView`] and returns the new bytes of every file it touches; writing them into
//! the stage is the caller's job.
//!
//! Rules, in the reference's terms:
//! - Sections are `--- old` immediately followed by `+++ new`; `a/`/`b/` prefixes and
//!   tab-separated timestamps are dropped; `/dev/null` on the old side creates the file,
//!   on the new side deletes it. Both paths pass the writable-path rule ([`TopicPath`]).
//! - Renames, copies, mode changes, symlinks and binary patches are `INVALID_ARGUMENT`,
//!   and so are an empty patch, a patch with no sections and a section with no hunks.
//! - Hunks apply in order of their start line; each one's context and removed lines must
//!   equal the file's lines ignoring the line end, else `PATCH_CONFLICT`. Overlapping
//!   hunks, a hunk past the end of the file, creating a non-empty file and modifying or
//!   deleting a missing one are `PATCH_CONFLICT` too.
//! - A touched file is read with universal newlines (CRLF and CR become LF, as Python's
//!   text mode reads it), and every added line ends in `\n`; untouched files keep their
//!   bytes.

mod parse;

use std::collections::BTreeMap;

use crate::error::{Error, ErrorCode};
use crate::paths::TopicPath;

pub use self::parse::MAX_PATCH_BYTES;
use self::parse::{Action, Hunk, Line, Section};

/// Read access to the staged files a patch may touch.
///
/// The transaction implements it over its stage directory; tests and the conformance
/// runner use the in-memory map implementation.
pub trait StageView {
    /// The bytes of the staged file at `path`, or `None` when the stage has no such file.
    fn read_staged(&self, path: &TopicPath) -> Result<Option<Vec<u8>>, Error>;
}

/// An in-memory stage keyed by workspace-relative path (`topics/x.md`).
impl StageView for BTreeMap<String, Vec<u8>> {
    fn read_staged(&self, path: &TopicPath) -> Result<Option<Vec<u8>>, Error> {
        Ok(self.get(path.as_str()).cloned())
    }
}

/// A parsed unified diff, ready to apply to a stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patch {
    /// Invariant: at least one section, each with at least one hunk.
    sections: Vec<Section>,
}

/// What applying a patch produced: the new bytes of every file it touched.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PatchResult {
    /// Every touched path with its new bytes, `None` for a deleted file. The map's
    /// order is the reference's order of changed paths (sorted).
    pub files: BTreeMap<TopicPath, Option<Vec<u8>>>,
}

impl PatchResult {
    /// The changed paths, in the reference's order (sorted).
    pub fn changed(&self) -> impl Iterator<Item = &TopicPath> {
        self.files.keys()
    }
}

impl Patch {
    /// Parse a unified diff; see the module documentation for what is refused.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use scriptorium_transaction::Patch;
    ///
    /// let patch = Patch::parse("--- a/topics/x.md\n+++ b/topics/x.md\n@@ -1 +1 @@\n-old\n+new\n")?;
    /// let stage = BTreeMap::from([("topics/x.md".to_owned(), b"old\n".to_vec())]);
    /// let result = patch.apply(&stage)?;
    /// let (path, bytes) = result.files.iter().next().ok_or("one file changed")?;
    /// assert_eq!((path.as_str(), bytes.as_deref()), ("topics/x.md", Some(&b"new\n"[..])));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn parse(text: &str) -> Result<Self, Error> {
        parse::parse(text).map(|sections| Patch { sections })
    }

    /// The paths the patch names, in patch order (a path may repeat).
    pub fn paths(&self) -> impl Iterator<Item = &TopicPath> {
        self.sections.iter().map(|section| &section.path)
    }

    /// Apply every section in patch order; a later section for the same path sees the
    /// result of the earlier one. Nothing is written: the result holds the new bytes.
    pub fn apply(&self, stage: &impl StageView) -> Result<PatchResult, Error> {
        let mut files: BTreeMap<TopicPath, Option<Vec<u8>>> = BTreeMap::new();
        for section in &self.sections {
            let current = match files.get(&section.path) {
                Some(earlier) => earlier.clone(),
                None => stage.read_staged(&section.path)?,
            };
            let next = apply_section(section, current.as_deref())?;
            files.insert(section.path.clone(), next);
        }
        Ok(PatchResult { files })
    }
}

/// Parse `patch` and apply it to `stage`: [`Patch::parse`] then [`Patch::apply`].
pub fn apply_patch(stage: &impl StageView, patch: &str) -> Result<PatchResult, Error> {
    Patch::parse(patch)?.apply(stage)
}

/// The new bytes of one section's file (`None` = deleted).
fn apply_section(section: &Section, current: Option<&[u8]>) -> Result<Option<Vec<u8>>, Error> {
    let path = section.path.as_str();
    let conflict = |message: &str| Error::new(ErrorCode::PatchConflict, message).with_path(path);
    let base = match (section.action, current) {
        (Action::Create, Some(bytes)) if !bytes.is_empty() => {
            return Err(conflict("patch creates a file that already exists"));
        }
        (Action::Create, _) => &[][..],
        (Action::Modify, None) => return Err(conflict("patch modifies a file that does not exist")),
        (Action::Delete, None) => return Err(conflict("patch deletes a file that does not exist")),
        (Action::Modify | Action::Delete, Some(bytes)) => bytes,
    };
    let text = std::str::from_utf8(base).map_err(|e| {
        Error::new(ErrorCode::InvalidTopicFormat, "topic file is not UTF-8").with_path(path).with_source(e)
    })?;
    // A delete still checks its hunks, so a stale view of the file cannot remove it.
    let patched = apply_hunks(&universal_newlines(text), &section.hunks, path)?;
    Ok(match section.action {
        Action::Delete => None,
        Action::Create | Action::Modify => Some(patched.into_bytes()),
    })
}

/// Python's text-mode reading: `\r\n` and a lone `\r` both become `\n`.
fn universal_newlines(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// Apply hunks, sorted by start line, to LF text.
fn apply_hunks(text: &str, hunks: &[Hunk], path: &str) -> Result<String, Error> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut ordered: Vec<&Hunk> = hunks.iter().collect();
    // By first touched line: an insertion after line s (`-s,0`) sorts after a hunk that
    // starts at line s. The sort is stable, so equal starts keep their patch order.
    ordered.sort_by_key(|hunk| hunk.first_index());
    let mut out = Output::with_capacity(text.len());
    let mut cursor = 0;
    for hunk in ordered {
        let start = hunk.first_index();
        if start < cursor {
            return Err(Error::new(ErrorCode::PatchConflict, "overlapping patch hunks").with_path(path));
        }
        let Some(untouched) = lines.get(cursor..start) else {
            return Err(past_end(path, hunk.old_start));
        };
        untouched.iter().for_each(|line| out.push(line));
        let mut at = start;
        for line in &hunk.lines {
            match line {
                Line::Add(text) => out.push_added(text),
                Line::Context(expected) | Line::Remove(expected) => {
                    let Some(&found) = lines.get(at) else {
                        return Err(past_end(path, at + 1).with_detail("expected", expected.as_str()));
                    };
                    let found_text = found.strip_suffix('\n').unwrap_or(found);
                    if found_text != expected {
                        return Err(Error::new(ErrorCode::PatchConflict, "patch context does not match file contents")
                            .with_path(path)
                            .with_detail("line", at + 1)
                            .with_detail("expected", expected.as_str())
                            .with_detail("found", found_text));
                    }
                    if matches!(line, Line::Context(_)) {
                        out.push(found);
                    }
                    at += 1;
                }
            }
        }
        cursor = at;
    }
    lines.get(cursor..).unwrap_or_default().iter().for_each(|line| out.push(line));
    Ok(out.text)
}

fn past_end(path: &str, line: usize) -> Error {
    Error::new(ErrorCode::PatchConflict, "patch hunk extends past the end of the file")
        .with_path(path)
        .with_detail("line", line)
}

/// The patched text being built.
struct Output {
    text: String,
}

impl Output {
    fn with_capacity(capacity: usize) -> Self {
        Output { text: String::with_capacity(capacity) }
    }

    /// Append a line of the old file, with its line end if it has one.
    fn push(&mut self, line: &str) {
        self.end_open_line();
        self.text.push_str(line);
    }

    /// Append an added line; added lines always end in `\n`.
    fn push_added(&mut self, line: &str) {
        self.end_open_line();
        self.text.push_str(line);
        self.text.push('\n');
    }

    /// Only the old file's last line can lack its `\n`; when a hunk adds lines after
    /// it, end it first so the two never run together.
    fn end_open_line(&mut self) {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
    }
}

#[cfg(test)]
mod tests;
