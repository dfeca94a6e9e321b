//! Parse a unified diff into file sections and hunks (spec 02 §4.2, Form A).
//!
//! The parser reads line prefixes, not the counts in hunk headers: the reference applies
//! patches whose counts are wrong (vector `patch_apply/wrong-counts`), and model-written
//! diffs often miscount. A hunk body therefore runs until a line that cannot be part of
//! it: another `@@` header, a `--- `/`+++ ` pair, or a line with any other first character.

use crate::error::{Error, ErrorCode};
use crate::paths::TopicPath;

/// The largest patch text accepted, in UTF-8 bytes (spec 02 §4.2).
pub const MAX_PATCH_BYTES: usize = 512_000;

/// What a file section does to its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Action {
    /// `--- /dev/null`: the file must not exist (or be empty).
    Create,
    /// Both sides name the file: it must exist.
    Modify,
    /// `+++ /dev/null`: the file must exist and is removed.
    Delete,
}

/// One `---`/`+++` section and its hunks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Section {
    pub(super) path: TopicPath,
    pub(super) action: Action,
    /// Invariant: not empty once the section is finished.
    pub(super) hunks: Vec<Hunk>,
}

/// One `@@` hunk: where it starts in the old file and its body lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Hunk {
    /// The 1-based old start line from the header (0 for an insertion at the top).
    pub(super) old_start: usize,
    pub(super) lines: Vec<Line>,
}

impl Hunk {
    /// The 0-based index of the first old line the hunk touches.
    ///
    /// A hunk with no old lines is a pure insertion, and unified diff writes it as
    /// `-s,0`, meaning "after line s" (GNU diff, git); any other hunk starts *at* line s.
    pub(super) fn first_index(&self) -> usize {
        if self.lines.iter().any(Line::is_old) { self.old_start.saturating_sub(1) } else { self.old_start }
    }
}

/// One body line of a hunk, without its prefix character.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Line {
    /// ` text` or an empty line: must match and is kept.
    Context(String),
    /// `-text`: must match and is dropped.
    Remove(String),
    /// `+text`: inserted, always ending in `\n`.
    Add(String),
}

impl Line {
    /// Whether the line stands for a line of the old file.
    fn is_old(&self) -> bool {
        matches!(self, Line::Context(_) | Line::Remove(_))
    }
}

/// Split a patch into its sections, refusing what the transaction cannot express.
pub(super) fn parse(patch: &str) -> Result<Vec<Section>, Error> {
    if patch.len() > MAX_PATCH_BYTES {
        return Err(invalid(format!("patch exceeds {MAX_PATCH_BYTES} bytes")));
    }
    if patch.trim().is_empty() {
        return Err(invalid("patch is empty"));
    }
    // A patch sent with CRLF line ends means the same as one with LF.
    let lines: Vec<&str> = patch.split_terminator('\n').map(|line| line.strip_suffix('\r').unwrap_or(line)).collect();
    refuse_headers(&lines)?;
    let mut sections = Vec::new();
    let mut current: Option<Section> = None;
    let mut at = 0;
    while let Some(&line) = lines.get(at) {
        if let Some(old) = line.strip_prefix("--- ") {
            let Some(new) = lines.get(at + 1).and_then(|next| next.strip_prefix("+++ ")) else {
                return Err(invalid("malformed patch: --- without +++"));
            };
            if let Some(done) = current.take() {
                sections.push(finish(done)?);
            }
            current = Some(start_section(old, new)?);
            at += 2;
        } else if line.starts_with("@@") {
            let Some(section) = current.as_mut() else {
                return Err(invalid("patch hunk outside a file section"));
            };
            let old_start = hunk_old_start(line).ok_or_else(|| {
                invalid("malformed patch hunk header").with_path(section.path.as_str()).with_detail("header", line)
            })?;
            let (lines_of_hunk, next) = hunk_body(&lines, at + 1);
            section.hunks.push(Hunk { old_start, lines: lines_of_hunk });
            at = next;
        } else {
            // Git's extended headers (`diff --git`, `index`, `new file mode`) and prose
            // between sections are ignored. A `+`/`-` line after a hunk ended, though,
            // is an edit that would silently be lost: refuse it.
            if let Some(section) = current.as_ref()
                && !section.hunks.is_empty()
                && (line.starts_with('+') || line.starts_with('-'))
            {
                return Err(invalid("patch line outside a hunk")
                    .with_path(section.path.as_str())
                    .with_detail("line", at + 1));
            }
            at += 1;
        }
    }
    if let Some(done) = current {
        sections.push(finish(done)?);
    }
    if sections.is_empty() {
        return Err(invalid("patch contains no file sections"));
    }
    Ok(sections)
}

/// Read hunk body lines from `at`; return them and the index of the first line after.
fn hunk_body(lines: &[&str], mut at: usize) -> (Vec<Line>, usize) {
    let mut body = Vec::new();
    while let Some(&line) = lines.get(at) {
        if starts_section(lines, at) {
            break;
        }
        if line.is_empty() {
            // Editors and models strip the lone space of a blank context line.
            body.push(Line::Context(String::new()));
        } else if let Some(text) = line.strip_prefix(' ') {
            body.push(Line::Context(text.to_owned()));
        } else if let Some(text) = line.strip_prefix('-') {
            body.push(Line::Remove(text.to_owned()));
        } else if let Some(text) = line.strip_prefix('+') {
            body.push(Line::Add(text.to_owned()));
        } else if !line.starts_with('\\') {
            // `\ No newline at end of file` is skipped: added lines always end in `\n`.
            break;
        }
        at += 1;
    }
    (body, at)
}

/// Whether a `--- `/`+++ ` header pair starts at `at`. A lone `--- x` inside a hunk is
/// the removal of the line `-- x`.
fn starts_section(lines: &[&str], at: usize) -> bool {
    lines.get(at).is_some_and(|line| line.starts_with("--- "))
        && lines.get(at + 1).is_some_and(|next| next.starts_with("+++ "))
}

/// Headers of git features a topic edit cannot express, with the reference's refusal.
const REFUSED: &[(&str, &str)] = &[
    ("rename from ", "patch renames are not supported"),
    ("rename to ", "patch renames are not supported"),
    ("copy from ", "patch copies are not supported"),
    ("copy to ", "patch copies are not supported"),
    ("old mode ", "patch mode changes are not supported"),
    ("new mode ", "patch mode changes are not supported"),
    ("new file mode 120000", "patch symlinks are not supported"),
    ("deleted file mode 120000", "patch symlinks are not supported"),
    ("Binary files ", "binary patches are not supported"),
    ("GIT binary patch", "binary patches are not supported"),
];

/// Refuse the first line that is one of the [`REFUSED`] headers. Hunk body lines start
/// with ` `, `+`, `-` or `\`, so no body line can be mistaken for one.
fn refuse_headers(lines: &[&str]) -> Result<(), Error> {
    for line in lines {
        if let Some((_, message)) = REFUSED.iter().find(|(prefix, _)| line.starts_with(prefix)) {
            return Err(invalid(*message));
        }
        // A symlink whose target changes keeps its mode on the `index` line.
        if line.starts_with("index ") && line.ends_with(" 120000") {
            return Err(invalid("patch symlinks are not supported"));
        }
    }
    Ok(())
}

/// The section a `--- old` / `+++ new` pair opens, its paths checked by the writable-path rule.
fn start_section(old: &str, new: &str) -> Result<Section, Error> {
    let (path, action) = match (header_path(old), header_path(new)) {
        (None, None) => return Err(invalid("patch file section names no file")),
        (None, Some(new)) => (TopicPath::new(new)?, Action::Create),
        (Some(old), None) => (TopicPath::new(old)?, Action::Delete),
        (Some(old), Some(new)) => {
            let old = TopicPath::new(old)?;
            let new_path = TopicPath::new(new)?;
            if old != new_path {
                return Err(invalid("patch renames are not supported").with_path(new_path.as_str()));
            }
            (new_path, Action::Modify)
        }
    };
    Ok(Section { path, action, hunks: Vec::new() })
}

/// The path a header names, or `None` for `/dev/null`: the text before the first tab (a
/// timestamp may follow it), trimmed, without a git `a/` or `b/` prefix.
fn header_path(raw: &str) -> Option<&str> {
    let path = raw.split('\t').next().unwrap_or(raw).trim();
    if path == "/dev/null" {
        return None;
    }
    Some(path.strip_prefix("a/").or_else(|| path.strip_prefix("b/")).unwrap_or(path))
}

/// Close a section: one with no hunks is refused.
fn finish(section: Section) -> Result<Section, Error> {
    if section.hunks.is_empty() {
        return Err(invalid("patch file section has no hunks").with_path(section.path.as_str()));
    }
    Ok(section)
}

/// The old start of a `@@ -s[,n] +s[,n] @@…` header; the counts are parsed but unused.
fn hunk_old_start(header: &str) -> Option<usize> {
    let rest = header.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, _section_heading) = rest.split_once(" @@")?;
    range(new)?;
    range(old).map(|(start, _count)| start)
}

/// `start[,count]` with ASCII digits only.
fn range(text: &str) -> Option<(usize, Option<usize>)> {
    let number = |digits: &str| {
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse::<usize>().ok()
    };
    match text.split_once(',') {
        Some((start, count)) => Some((number(start)?, Some(number(count)?))),
        None => Some((number(text)?, None)),
    }
}

fn invalid(message: impl Into<Box<str>>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}
