//! The one error type of the backend contract: a public contract code, the lower-layer
//! code it came from (if any), a message for people, and the lower error as its source.

mod map;

pub use self::map::{
    from_model_config_code, from_retrieval_code, from_transaction_code, from_views_code, from_writer_code,
};

/// The public contract codes (spec 02 §4.5, §7, §1.2) and the backend's own `BACKEND_*`
/// codes for failures that are no caller's mistake. Stable strings: never change or reuse one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// An argument has the wrong shape or breaks a limit.
    InvalidArgument,
    /// The base revision is stale, or a lock was not obtained in time.
    ConcurrentUpdate,
    /// The writer cannot run: no usable model, or evidence without provenance.
    WriterPreconditionFailed,
    /// An edit uses a `new-source-*` label the request does not declare.
    MissingSource,
    /// A path leaves the workspace or names an internal path.
    PathOutsideWorkspace,
    /// A path is not an editable topic file.
    ReadOnlyPath,
    /// A patch does not apply.
    PatchConflict,
    /// A record id or anchor does not exist.
    MemoryNotFound,
    /// A paired caller would rewrite or delete existing bytes.
    AppendOnlyRequired,
    /// The staged topics do not parse or validate.
    InvalidTopicFormat,
    /// History is required and Git history could not be opened or initialised.
    GitUnavailable,
    /// History is required and the commit failed.
    GitCommitFailed,
    /// Embedding or hybrid search was asked for and no embedder can run.
    EmbeddingUnavailable,
    /// Memory is disabled by `memory.backend = none`.
    MemoryDisabled,
    /// The caller's tier lacks the capability a tool or hook needs (spec 02 §5's gate).
    PermissionDenied,
    /// Reading or writing the workspace, the session store or a runtime file failed.
    Io,
    /// The caller cancelled before the install; nothing was installed.
    Cancelled,
    /// The session store is damaged, another program's, or newer than this build.
    SessionStoreUnusable,
    /// Committed state is damaged (a source rewritten in place, an unreadable watcher state).
    StateDamaged,
    /// A lower-layer code this build maps to nothing: a bug, reported instead of a panic.
    Internal,
}

impl ErrorCode {
    /// Every code, for the registry test.
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
        Self::EmbeddingUnavailable,
        Self::MemoryDisabled,
        Self::PermissionDenied,
        Self::Io,
        Self::Cancelled,
        Self::SessionStoreUnusable,
        Self::StateDamaged,
        Self::Internal,
    ];

    /// The stable string form, for example `"INVALID_TOPIC_FORMAT"`.
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
            Self::EmbeddingUnavailable => "EMBEDDING_UNAVAILABLE",
            Self::MemoryDisabled => "MEMORY_DISABLED",
            Self::PermissionDenied => "PERMISSION_DENIED",
            Self::Io => "BACKEND_IO",
            Self::Cancelled => "BACKEND_CANCELLED",
            Self::SessionStoreUnusable => "BACKEND_SESSION_STORE_UNUSABLE",
            Self::StateDamaged => "BACKEND_STATE_DAMAGED",
            Self::Internal => "BACKEND_INTERNAL",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed backend call: one contract [`ErrorCode`], the lower-layer code it was mapped
/// from, a message, the path it concerns, and the lower error as [`std::error::Error::source`].
#[derive(Debug)]
pub struct Error {
    code: ErrorCode,
    lower_code: Option<&'static str>,
    message: String,
    path: Option<String>,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl Error {
    /// An error with `code` and a message, from no lower layer.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error { code, lower_code: None, message: message.into(), path: None, source: None }
    }

    /// The error about the workspace-relative `path` (as the caller wrote it).
    pub(crate) fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// The contract code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The lower layer's own code (`TXN_IO`, `RETRIEVAL_READ_FAILED`, …), if it came from one.
    pub fn lower_code(&self) -> Option<&'static str> {
        self.lower_code
    }

    /// The message for people; programs match on [`Error::code`].
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The workspace-relative path the error concerns, if any.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// The structured details of the transaction error this came from (the violations of
    /// an `INVALID_TOPIC_FORMAT`, the revisions of a `CONCURRENT_UPDATE`, …), if any.
    pub fn details(&self) -> Option<&serde_json::Map<String, serde_json::Value>> {
        let source = self.source.as_deref()?;
        let lower = source.downcast_ref::<scriptorium_transaction::Error>()?;
        Some(lower.details()).filter(|details| !details.is_empty())
    }

    fn lowered(
        code: Option<ErrorCode>,
        lower: &'static str,
        message: String,
        source: Box<dyn std::error::Error + Send + Sync>,
    ) -> Self {
        Error {
            code: code.unwrap_or(ErrorCode::Internal),
            lower_code: Some(lower),
            message,
            path: None,
            source: Some(source),
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|source| source as &(dyn std::error::Error + 'static))
    }
}

impl From<scriptorium_transaction::Error> for Error {
    fn from(error: scriptorium_transaction::Error) -> Self {
        let lower = error.code();
        let path = error.path().map(str::to_owned);
        let mut mapped =
            Error::lowered(from_transaction_code(lower), lower.as_str(), error.message().to_owned(), Box::new(error));
        mapped.path = path;
        mapped
    }
}

impl From<scriptorium_retrieval::Error> for Error {
    fn from(error: scriptorium_retrieval::Error) -> Self {
        let lower = error.code();
        Error::lowered(from_retrieval_code(lower), lower.as_str(), error.message().to_owned(), Box::new(error))
    }
}

impl From<scriptorium_derived_views::Error> for Error {
    fn from(error: scriptorium_derived_views::Error) -> Self {
        let lower = error.code();
        Error::lowered(from_views_code(lower), lower.as_str(), error.to_string(), Box::new(error))
    }
}

impl From<scriptorium_writer_runtime::Error> for Error {
    fn from(error: scriptorium_writer_runtime::Error) -> Self {
        let lower = error.code();
        Error::lowered(from_writer_code(lower), lower.as_str(), error.message().to_owned(), Box::new(error))
    }
}

impl From<scriptorium_writer_runtime::llm::ConfigError> for Error {
    fn from(error: scriptorium_writer_runtime::llm::ConfigError) -> Self {
        let lower = error.code();
        Error::lowered(from_model_config_code(lower), lower.as_str(), error.to_string(), Box::new(error))
    }
}

#[cfg(test)]
mod tests;
