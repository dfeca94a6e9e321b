//! Errors with stable string codes (docs/error-codes.md).

/// Stable, machine-readable error codes. The string form is a public contract:
/// never change or reuse one; retire it instead (docs/error-codes.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// A source id has no `provider/thread/message` shape, so it has no archive location.
    InvalidSourceIdShape,
    /// A source id holds a character a v2 header cannot carry.
    UnsafeSourceId,
    /// A record timestamp holds `[`, `]`, CR, LF or a non-printable character.
    UnsafeTimestamp,
    /// A record's speaker label and role normalize to nothing.
    EmptySpeakerLabel,
    /// Source metadata is not one of the accepted shapes.
    InvalidSourceMeta,
    /// Two archive paths of a batch, or a planned path and an existing entry, differ
    /// only by case or Unicode normalization.
    PathCollision,
    /// Appending to an archive whose scan is incomplete would write unreachable frames.
    IncompleteArchive,
    /// The archive bytes are not UTF-8.
    NotUtf8,
    /// An input exceeds a limit of this crate.
    LimitExceeded,
    /// A writer record line is not the protocol's JSON object.
    InvalidWriterRecord,
    /// Reading an existing archive or directory listing failed.
    ReadFailed,
    /// No frame of the archive holds the source id.
    SourceNotFound,
    /// The frame has no `source-meta` line, so it has no trust state to change.
    NoSourceMeta,
}

impl ErrorCode {
    /// Every code this crate can produce, for the registry test.
    pub const ALL: &'static [ErrorCode] = &[
        Self::InvalidSourceIdShape,
        Self::UnsafeSourceId,
        Self::UnsafeTimestamp,
        Self::EmptySpeakerLabel,
        Self::InvalidSourceMeta,
        Self::PathCollision,
        Self::IncompleteArchive,
        Self::NotUtf8,
        Self::LimitExceeded,
        Self::InvalidWriterRecord,
        Self::ReadFailed,
        Self::SourceNotFound,
        Self::NoSourceMeta,
    ];

    /// The stable string form, for example `"ARCHIVE_PATH_COLLISION"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidSourceIdShape => "ARCHIVE_INVALID_SOURCE_ID_SHAPE",
            Self::UnsafeSourceId => "ARCHIVE_UNSAFE_SOURCE_ID",
            Self::UnsafeTimestamp => "ARCHIVE_UNSAFE_TIMESTAMP",
            Self::EmptySpeakerLabel => "ARCHIVE_EMPTY_SPEAKER_LABEL",
            Self::InvalidSourceMeta => "ARCHIVE_INVALID_SOURCE_META",
            Self::PathCollision => "ARCHIVE_PATH_COLLISION",
            Self::IncompleteArchive => "ARCHIVE_INCOMPLETE_ARCHIVE",
            Self::NotUtf8 => "ARCHIVE_NOT_UTF8",
            Self::LimitExceeded => "ARCHIVE_LIMIT_EXCEEDED",
            Self::InvalidWriterRecord => "ARCHIVE_INVALID_WRITER_RECORD",
            Self::ReadFailed => "ARCHIVE_READ_FAILED",
            Self::SourceNotFound => "ARCHIVE_SOURCE_NOT_FOUND",
            Self::NoSourceMeta => "ARCHIVE_NO_SOURCE_META",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error from this crate: a stable [`ErrorCode`] plus a short message for humans.
///
/// The message is the reference implementation's wording where one exists, so that a
/// person comparing the two sees the same words.
#[derive(Debug)]
pub struct Error {
    code: ErrorCode,
    message: Box<str>,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl Error {
    pub(crate) fn new(code: ErrorCode, message: impl Into<Box<str>>) -> Self {
        Error { code, message: message.into(), source: None }
    }

    pub(crate) fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
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
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}
