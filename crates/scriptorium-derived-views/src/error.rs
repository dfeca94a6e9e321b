//! Errors with stable `VIEWS_*` codes (docs/error-codes.md).
//!
//! The derive step reports through the transaction's own error type (the trait it
//! implements is defined there), so each code also travels as the `views_code` detail.

/// Stable, machine-readable error codes. The string form is a public contract: never
/// change or reuse one; retire it instead (docs/error-codes.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// A staged topic or runtime file is not UTF-8, so no view can be built from it.
    NotUtf8,
    /// A staged source archive could not be read while resolving citations.
    SourceUnreadable,
}

impl ErrorCode {
    /// Every code this crate can produce, for the registry test.
    pub const ALL: &'static [ErrorCode] = &[Self::NotUtf8, Self::SourceUnreadable];

    /// The stable string form, for example `"VIEWS_NOT_UTF8"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::NotUtf8 => "VIEWS_NOT_UTF8",
            Self::SourceUnreadable => "VIEWS_SOURCE_UNREADABLE",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error from this crate: a stable [`ErrorCode`], the file it concerns and a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    code: ErrorCode,
    path: String,
    message: String,
}

impl Error {
    /// An error with `code` about the workspace-relative `path`.
    pub fn new(code: ErrorCode, path: impl Into<String>, message: impl Into<String>) -> Self {
        Error { code, path: path.into(), message: message.into() }
    }

    /// The stable code; match on this, never on the message.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The workspace-relative path the error concerns.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The human-readable message without the code.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl Error {
    /// The error as the transaction reports it from the derive step, the views code kept
    /// as the `views_code` detail.
    pub(crate) fn into_transaction(self) -> scriptorium_transaction::Error {
        let code = match self.code {
            ErrorCode::NotUtf8 => scriptorium_transaction::ErrorCode::InvalidTopicFormat,
            ErrorCode::SourceUnreadable => scriptorium_transaction::ErrorCode::Io,
        };
        scriptorium_transaction::Error::new(code, self.to_string())
            .with_path(self.path())
            .with_detail("views_code", self.code.as_str())
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}: {}", self.code, self.path, self.message)
    }
}

impl std::error::Error for Error {}
