//! What one import run did: counts, the sessions it touched, and the problems it
//! skipped over (each with a stable code, the file and, for a line, its number).

use std::collections::BTreeSet;
use std::path::PathBuf;

/// Why an import skipped a line or a file. Stable strings (docs/error-codes.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProblemCode {
    /// A line is not a JSON object, or lacks what its format requires; it was skipped.
    MalformedLine,
    /// A whole-file transcript (ChatGPT's `conversations.json`) is not the documented
    /// JSON shape; nothing of it was imported.
    MalformedFile,
    /// A file or directory could not be read (or does not exist); it was skipped.
    Unreadable,
}

impl ProblemCode {
    /// Every problem code, for the registry test.
    pub const ALL: &'static [ProblemCode] = &[Self::MalformedLine, Self::MalformedFile, Self::Unreadable];

    /// The stable string form.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::MalformedLine => "WRITER_IMPORT_MALFORMED_LINE",
            Self::MalformedFile => "WRITER_IMPORT_MALFORMED_FILE",
            Self::Unreadable => "WRITER_IMPORT_UNREADABLE",
        }
    }
}

impl std::fmt::Display for ProblemCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One skipped line or file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Why it was skipped.
    pub code: ProblemCode,
    /// The file (or directory) concerned.
    pub path: PathBuf,
    /// The 1-based line number, for a line problem.
    pub line: Option<u64>,
    /// A short human explanation (never the line's content: it may hold secrets).
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}: {}", self.path.display(), self.code, self.message),
            None => write!(f, "{}: {}: {}", self.path.display(), self.code, self.message),
        }
    }
}

/// The outcome of [`import_paths`](super::import_paths).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportReport {
    /// Transcript files found under the given paths.
    pub files_seen: usize,
    /// Files with nothing new since the last run (not parsed).
    pub files_unchanged: usize,
    /// Files read again from the start because their prefix changed.
    pub files_reread: usize,
    /// Complete lines (or, for whole-file formats, files) parsed in this run.
    pub lines_read: u64,
    /// Bytes read from transcript files in this run.
    pub bytes_read: u64,
    /// Nodes new to the session store (turns and machinery).
    pub nodes_added: usize,
    /// Of them, conversation turns (user and assistant nodes).
    pub turns_added: usize,
    /// Stored assistant turns whose text grew because more of the reply arrived.
    pub turns_extended: usize,
    /// The sessions that received new nodes or text.
    pub sessions: BTreeSet<String>,
    /// Lines and files skipped, in the order met.
    pub problems: Vec<Problem>,
}

impl ImportReport {
    pub(crate) fn problem(&mut self, code: ProblemCode, path: PathBuf, line: Option<u64>, message: impl Into<String>) {
        self.problems.push(Problem { code, path, line, message: message.into() });
    }
}
