//! The writer runtime's own error type: session-store failures and bad nodes, each with a
//! stable `WRITER_*` code (docs/error-codes.md).

/// Why a runtime operation failed. Stable strings: never change or reuse one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The session store file is not a readable SQLite database, or fails its integrity check.
    SessionStoreCorrupt,
    /// The file is a SQLite database of another program (another application id, or tables
    /// without our schema version); it is never touched.
    SessionStoreForeign,
    /// The session store was written by a newer schema version than this build knows.
    SessionStoreTooNew,
    /// SQLite failed while reading or writing the session store.
    SessionStoreIo,
    /// A node offered to the store is malformed (empty id or session id, a predecessor
    /// cycle, content that is neither text nor a list of parts).
    InvalidNode,
    /// A runtime state file (writer status, watcher state, unpaired quota) could not be
    /// read or written.
    StateIo,
    /// Another process is scanning for idle sessions (`session-end.lock` is held).
    ScanBusy,
    /// `session-end.json` is unreadable or not a JSON object; the scan stops and keeps it.
    WatcherStateCorrupt,
}

impl ErrorCode {
    /// Every code this crate can produce, for the registry test.
    pub const ALL: &'static [ErrorCode] = &[
        Self::SessionStoreCorrupt,
        Self::SessionStoreForeign,
        Self::SessionStoreTooNew,
        Self::SessionStoreIo,
        Self::InvalidNode,
        Self::StateIo,
        Self::ScanBusy,
        Self::WatcherStateCorrupt,
    ];

    /// The stable string form.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::SessionStoreCorrupt => "WRITER_SESSION_STORE_CORRUPT",
            Self::SessionStoreForeign => "WRITER_SESSION_STORE_FOREIGN",
            Self::SessionStoreTooNew => "WRITER_SESSION_STORE_TOO_NEW",
            Self::SessionStoreIo => "WRITER_SESSION_STORE_IO",
            Self::InvalidNode => "WRITER_INVALID_NODE",
            Self::StateIo => "WRITER_STATE_IO",
            Self::ScanBusy => "WRITER_SCAN_BUSY",
            Self::WatcherStateCorrupt => "WRITER_WATCHER_STATE_CORRUPT",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed runtime operation: one [`ErrorCode`], a message and the cause, if any.
#[derive(Debug)]
pub struct Error {
    code: ErrorCode,
    message: Box<str>,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl Error {
    /// An error with `code` and a human message.
    pub fn new(code: ErrorCode, message: impl Into<Box<str>>) -> Self {
        Error { code, message: message.into(), source: None }
    }

    /// Attach the lower-level cause.
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The human message.
    pub fn message(&self) -> &str {
        &self.message
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
