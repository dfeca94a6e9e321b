//! Errors with stable `RETRIEVAL_*` codes (docs/error-codes.md), each mapped to the
//! public contract code a tool or API reports for it.

/// Stable, machine-readable error codes. The string form is a public contract:
/// never change or reuse one; retire it instead (docs/error-codes.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The query is empty or only whitespace.
    BlankQuery,
    /// The search method is not `bm25`, `embedding` or `hybrid`.
    UnknownMethod,
    /// A `date_from` / `date_to` bound is not `YYYY`, `YYYY-MM` or `YYYY-MM-DD` naming a real date.
    InvalidDate,
    /// The date window's start is not before its end.
    EmptyDateWindow,
    /// A speaker filter was given with the `embedding` or `hybrid` method.
    SpeakerWithEmbedding,
    /// Embedding search was asked for but no embedder is available, or it failed.
    EmbeddingUnavailable,
    /// Reading the workspace (a directory listing or an indexable file) failed.
    ReadFailed,
    /// Writing the index cache (`.scriptorium/retrieval-index.bin`) failed.
    CacheWriteFailed,
    /// A grep regex is invalid, too large, or uses a construct the regex mode refuses.
    InvalidPattern,
}

impl ErrorCode {
    /// Every code this crate can produce, for the registry test.
    pub const ALL: &'static [ErrorCode] = &[
        Self::BlankQuery,
        Self::UnknownMethod,
        Self::InvalidDate,
        Self::EmptyDateWindow,
        Self::SpeakerWithEmbedding,
        Self::EmbeddingUnavailable,
        Self::ReadFailed,
        Self::CacheWriteFailed,
        Self::InvalidPattern,
    ];

    /// The stable string form, for example `"RETRIEVAL_BLANK_QUERY"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::BlankQuery => "RETRIEVAL_BLANK_QUERY",
            Self::UnknownMethod => "RETRIEVAL_UNKNOWN_METHOD",
            Self::InvalidDate => "RETRIEVAL_INVALID_DATE",
            Self::EmptyDateWindow => "RETRIEVAL_EMPTY_DATE_WINDOW",
            Self::SpeakerWithEmbedding => "RETRIEVAL_SPEAKER_WITH_EMBEDDING",
            Self::EmbeddingUnavailable => "RETRIEVAL_EMBEDDING_UNAVAILABLE",
            Self::ReadFailed => "RETRIEVAL_READ_FAILED",
            Self::CacheWriteFailed => "RETRIEVAL_CACHE_WRITE_FAILED",
            Self::InvalidPattern => "RETRIEVAL_INVALID_PATTERN",
        }
    }

    /// The public contract code (spec 02 §6.5, §7) a caller reports for this error:
    /// `INVALID_ARGUMENT` for a bad request, `EMBEDDING_UNAVAILABLE` when embedding search
    /// cannot run. `None` for a read failure, which is no argument problem: the layer
    /// that owns the workspace reports its own I/O code.
    pub const fn contract_code(self) -> Option<&'static str> {
        match self {
            Self::BlankQuery
            | Self::UnknownMethod
            | Self::InvalidDate
            | Self::EmptyDateWindow
            | Self::SpeakerWithEmbedding
            | Self::InvalidPattern => Some("INVALID_ARGUMENT"),
            Self::EmbeddingUnavailable => Some("EMBEDDING_UNAVAILABLE"),
            Self::ReadFailed | Self::CacheWriteFailed => None,
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
/// The message is the reference implementation's wording where one exists (for example
/// `invalid date_from: 2024-13`), so a person comparing the two sees the same words.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_prefixed_unique_and_mapped() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            assert!(code.as_str().starts_with("RETRIEVAL_"), "{code}");
            assert!(seen.insert(code.as_str()), "{code} twice");
        }
        assert_eq!(ErrorCode::InvalidDate.contract_code(), Some("INVALID_ARGUMENT"));
        assert_eq!(ErrorCode::EmbeddingUnavailable.contract_code(), Some("EMBEDDING_UNAVAILABLE"));
        assert_eq!(ErrorCode::ReadFailed.contract_code(), None);
    }

    #[test]
    fn display_shows_code_and_message() {
        let error = Error::new(ErrorCode::BlankQuery, "query is required");
        assert_eq!(error.to_string(), "RETRIEVAL_BLANK_QUERY: query is required");
        assert_eq!(error.message(), "query is required");
    }
}
