//! The path rules of spec 02 §4.2 and decision 6: which workspace paths a request may
//! name at all, and which of those an edit may write.
//!
//! Paths are POSIX and workspace-relative. They are normalized the way Python's
//! `PurePosixPath` does (empty and `.` components dropped, so `topics/./x.md` is
//! `topics/x.md`) but never resolved: `..` is refused outright rather than folded away,
//! so no spelling of a path can climb out of the workspace.

use crate::error::{Error, ErrorCode};
use crate::listing::{FileClass, classify};
use crate::revision::is_internal_name;
use crate::workspace::SUPERSEDED_DIR;

/// The message of every `PATH_OUTSIDE_WORKSPACE` error, as the reference words it.
const OUTSIDE_MESSAGE: &str = "path escapes the workspace";

/// The message of every `READ_ONLY_PATH` error, as the reference words it.
const READ_ONLY_MESSAGE: &str = "only topics/**/*.md is writable";

/// The directory that holds every editable topic file.
const TOPICS_DIR: &str = "topics";

/// The suffix of an editable topic file.
const TOPIC_SUFFIX: &str = ".md";

/// Normalize a workspace-relative path that a request names, for reading or writing.
///
/// Refused with `PATH_OUTSIDE_WORKSPACE`: an absolute path, any `..` component, and
/// (decision 6) anything under the runtime directory `.scriptorium/` (which holds the
/// stage and quarantine), the install backup `.scriptorium-block-backup/`, `.git/`, or a
/// copy of the superseded layout `memory-superseded/`, at any depth: `topics/.git/x.md` is no more memory than `.git/x.md`, since no reader
/// lists it (the [`Listing`](crate::Listing) rule).
/// The superseded-layout archive is a sibling of the workspace, so it is out of reach
/// already. A NUL character is `INVALID_ARGUMENT`: no file system can name it.
///
/// The error's path is the string as given, so the caller sees what it wrote.
pub fn workspace_relative(raw: &str) -> Result<String, Error> {
    if raw.contains('\0') {
        return Err(Error::new(ErrorCode::InvalidArgument, "path contains a NUL character").with_path(raw));
    }
    let outside = || Error::new(ErrorCode::PathOutsideWorkspace, OUTSIDE_MESSAGE).with_path(raw);
    if raw.starts_with('/') {
        return Err(outside());
    }
    let mut parts = Vec::new();
    for part in raw.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(outside()),
            _ => parts.push(part),
        }
    }
    if parts.iter().any(|part| is_private(part)) {
        return Err(outside());
    }
    Ok(parts.join("/"))
}

/// Whether a path component names workspace state no request may touch.
fn is_private(component: &str) -> bool {
    // `.scriptorium` covers the stage and quarantine inside it; the prefix match also
    // covers `.scriptorium-block-backup`, where an install parks the committed tree.
    component.starts_with(".scriptorium")
        || component == SUPERSEDED_DIR
        || is_internal_name(std::ffi::OsStr::new(component))
}

/// A normalized path an edit may write: a Markdown file under `topics/`.
///
/// Invariant: the string starts with `topics/`, ends with `.md` after a non-empty
/// file stem, and has no empty, `.` or `..` component. Everything outside `topics/`
/// (sources, derived views, `core.md`, runtime state) is read-only to edits, so a
/// `TopicPath` can never name it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TopicPath(String);

impl TopicPath {
    /// Validate and normalize `raw` by the writable-path rule of spec 02 §4.2.
    ///
    /// Errors: `PATH_OUTSIDE_WORKSPACE` as [`workspace_relative`] says; then
    /// `READ_ONLY_PATH` ("only topics/**/*.md is writable") for anything that is not
    /// `topics/**.md`, or that has a hidden component (one starting with `.`): no reader
    /// would ever list such a file, so writing it would lose the memory. The error's
    /// path is `raw` as given.
    ///
    /// ```
    /// use scriptorium_transaction::{ErrorCode, TopicPath};
    ///
    /// assert_eq!(TopicPath::new("topics/./people/dave.md")?.as_str(), "topics/people/dave.md");
    /// assert_eq!(TopicPath::new("../x.md").map_err(|e| e.code()), Err(ErrorCode::PathOutsideWorkspace));
    /// assert_eq!(TopicPath::new("core.md").map_err(|e| e.code()), Err(ErrorCode::ReadOnlyPath));
    /// # Ok::<(), scriptorium_transaction::Error>(())
    /// ```
    pub fn new(raw: &str) -> Result<Self, Error> {
        let normalized = workspace_relative(raw)?;
        if is_topic_file(&normalized) && classify(normalized.as_bytes()) == FileClass::Topic {
            Ok(TopicPath(normalized))
        } else {
            Err(Error::new(ErrorCode::ReadOnlyPath, READ_ONLY_MESSAGE).with_path(raw))
        }
    }

    /// The normalized path, for example `topics/people/dave.md`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The normalized path as an owned string.
    pub fn into_string(self) -> String {
        self.0
    }
}

/// Whether a normalized path is `topics/<at least one component>.md` with a non-empty stem.
fn is_topic_file(normalized: &str) -> bool {
    let Some(rest) = normalized.strip_prefix(TOPICS_DIR).and_then(|rest| rest.strip_prefix('/')) else {
        return false;
    };
    let name = rest.rsplit('/').next().unwrap_or(rest);
    // `.md` alone is a hidden file with no suffix (pathlib's reading), not a topic.
    name.len() > TOPIC_SUFFIX.len() && name.ends_with(TOPIC_SUFFIX)
}

impl AsRef<str> for TopicPath {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for TopicPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests;
