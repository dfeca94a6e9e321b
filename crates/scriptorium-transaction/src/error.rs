//! The closed set of codes a transaction fails with.
//!
//! The contract codes (`INVALID_ARGUMENT`, `PATCH_CONFLICT`, …) are the public names of
//! spec 02 §4.5; this crate is the lowest layer that produces them, so it defines them
//! and the layers above re-export them (docs/ARCHITECTURE.md, "Decisions"). Failures
//! that are not a caller's mistake (I/O, a damaged journal) carry `TXN_` codes.

use serde_json::{Map, Value};

/// Why a transaction was rejected or failed. Stable strings: never change or reuse one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// Argument shapes, limits, labels, roles, timestamps, operation fields.
    InvalidArgument,
    /// The base revision is stale, or the write lock was not obtained in time.
    ConcurrentUpdate,
    /// Evidence was offered without the runtime's record of who said it.
    WriterPreconditionFailed,
    /// A `new-source-*` label is used but not declared.
    MissingSource,
    /// A path is absolute, climbs out with `..`, or resolves outside the workspace.
    PathOutsideWorkspace,
    /// A path is not an editable topic file (`topics/**.md`).
    ReadOnlyPath,
    /// A patch does not apply: context mismatch, overlap, create-existing, edit-missing.
    PatchConflict,
    /// A record id or anchor does not exist.
    MemoryNotFound,
    /// A paired caller rewrote or deleted existing bytes.
    AppendOnlyRequired,
    /// The staged topics do not parse or validate.
    InvalidTopicFormat,
    /// History is required but Git history could not be initialised.
    GitUnavailable,
    /// History is required and the commit failed.
    GitCommitFailed,
    /// Reading or writing the workspace failed; nothing was installed.
    Io,
    /// The caller cancelled the update before its install (an interrupted CLI); nothing
    /// was installed.
    Cancelled,
    /// `check`: a committed source archive no longer starts with its committed bytes
    /// (changed in place or removed), so sources are not append-only against history.
    SourceRewritten,
}

impl ErrorCode {
    /// Every code this crate can produce, for the registry test.
    pub const ALL: &'static [ErrorCode] = &[
        Self::InvalidArgument,
        Self::ConcurrentUpdate,
        Self::WriterPreconditionFailed,
        Self::MissingSource,
        Self::PathOutsideWorkspace,
        Self::ReadOnlyPath,
        Self::PatchConflict,
        Self::MemoryNotFound,
        Self::AppendOnlyRequired,
        Self::InvalidTopicFormat,
        Self::GitUnavailable,
        Self::GitCommitFailed,
        Self::Io,
        Self::Cancelled,
        Self::SourceRewritten,
    ];

    /// The stable string form.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArgument => "INVALID_ARGUMENT",
            Self::ConcurrentUpdate => "CONCURRENT_UPDATE",
            Self::WriterPreconditionFailed => "WRITER_PRECONDITION_FAILED",
            Self::MissingSource => "MISSING_SOURCE",
            Self::PathOutsideWorkspace => "PATH_OUTSIDE_WORKSPACE",
            Self::ReadOnlyPath => "READ_ONLY_PATH",
            Self::PatchConflict => "PATCH_CONFLICT",
            Self::MemoryNotFound => "MEMORY_NOT_FOUND",
            Self::AppendOnlyRequired => "APPEND_ONLY_REQUIRED",
            Self::InvalidTopicFormat => "INVALID_TOPIC_FORMAT",
            Self::GitUnavailable => "GIT_UNAVAILABLE",
            Self::GitCommitFailed => "GIT_COMMIT_FAILED",
            Self::Io => "TXN_IO",
            Self::Cancelled => "TXN_CANCELLED",
            Self::SourceRewritten => "TXN_SOURCE_REWRITTEN",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A rejected or failed transaction: one [`ErrorCode`], a message, the path it concerns
/// (if any), structured details, and the lower-layer cause (if any).
#[derive(Debug)]
pub struct Error {
    code: ErrorCode,
    message: Box<str>,
    path: Option<String>,
    details: Map<String, Value>,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl Error {
    /// A new error with a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<Box<str>>) -> Self {
        Error { code, message: message.into(), path: None, details: Map::new(), source: None }
    }

    /// The same error, concerning `path` (workspace-relative).
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// The same error with one more detail entry.
    pub fn with_detail(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    /// The same error, caused by `source`.
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// The stable code; match on this, never on the message.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The human-readable message without the code.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The workspace-relative path the error concerns, if any.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// Structured details (for example the expected and found lines of a conflict).
    pub fn details(&self) -> &Map<String, Value> {
        &self.details
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.path {
            Some(path) => write!(f, "{}: {path}: {}", self.code.as_str(), self.message),
            None => write!(f, "{}: {}", self.code.as_str(), self.message),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl From<std::io::Error> for Error {
    fn from(error: std::io::Error) -> Self {
        Error::new(ErrorCode::Io, error.to_string()).with_source(error)
    }
}
