//! [`WriteFailure`], the closed [`MemoryWriteFailureCode`] set and the classifier of
//! spec 02 §2.9: what a failed write reports, and whether trying again can help.

use scriptorium_transaction::{Error as TxError, ErrorCode as TxCode};

use crate::agent::{AgentError, AgentErrorKind, ProviderReason};
use crate::error::Error;
use crate::records::RecordError;

macro_rules! failure_codes {
    ($($variant:ident => $name:literal),+ $(,)?) => {
        /// Why a write failed: a closed set whose string values are the names (spec 02 §2.9).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum MemoryWriteFailureCode {
            $(
                #[doc = concat!("`", $name, "`.")]
                $variant,
            )+
        }

        impl MemoryWriteFailureCode {
            /// Every member, in the spec's order.
            pub const ALL: &'static [MemoryWriteFailureCode] = &[$(Self::$variant),+];

            /// The stable string value.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $name),+
                }
            }

            /// The member named `name`, if any.
            pub fn from_name(name: &str) -> Option<Self> {
                match name {
                    $($name => Some(Self::$variant),)+
                    _ => None,
                }
            }
        }
    };
}

failure_codes! {
    MissingSessionId => "MISSING_SESSION_ID",
    SessionNodesUnavailable => "SESSION_NODES_UNAVAILABLE",
    WriterNoProgress => "WRITER_NO_PROGRESS",
    WriterPreconditionFailed => "WRITER_PRECONDITION_FAILED",
    MemoryProviderResolutionFailed => "MEMORY_PROVIDER_RESOLUTION_FAILED",
    ModelTransport => "MODEL_TRANSPORT",
    ModelRateLimit => "MODEL_RATE_LIMIT",
    ModelProviderInternal => "MODEL_PROVIDER_INTERNAL",
    ModelAuthentication => "MODEL_AUTHENTICATION",
    ModelAuthorization => "MODEL_AUTHORIZATION",
    ModelInvalidRequest => "MODEL_INVALID_REQUEST",
    ModelContextLength => "MODEL_CONTEXT_LENGTH",
    ModelContentPolicy => "MODEL_CONTENT_POLICY",
    ModelTimeout => "MODEL_TIMEOUT",
    ModelFailureUnknown => "MODEL_FAILURE_UNKNOWN",
    AppendOnlyRequired => "APPEND_ONLY_REQUIRED",
    CommitRejected => "COMMIT_REJECTED",
    ConcurrentUpdate => "CONCURRENT_UPDATE",
    EmbeddingUnavailable => "EMBEDDING_UNAVAILABLE",
    GitCommitFailed => "GIT_COMMIT_FAILED",
    InvalidArgument => "INVALID_ARGUMENT",
    InvalidTopicFormat => "INVALID_TOPIC_FORMAT",
    MissingSource => "MISSING_SOURCE",
    PatchConflict => "PATCH_CONFLICT",
    PathOutsideWorkspace => "PATH_OUTSIDE_WORKSPACE",
    ReadOnlyPath => "READ_ONLY_PATH",
    TransactionFailureUnknown => "TRANSACTION_FAILURE_UNKNOWN",
    WriterFailureUnknown => "WRITER_FAILURE_UNKNOWN",
}

impl std::fmt::Display for MemoryWriteFailureCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A write that did not happen: a free diagnostic (may hold provider text, so it is never
/// persisted), whether trying again can help, and the code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteFailure {
    /// A human diagnostic; never written to a file.
    pub reason: String,
    /// Whether the same write may succeed later.
    pub retryable: bool,
    /// The closed code.
    pub reason_code: MemoryWriteFailureCode,
}

impl WriteFailure {
    /// A failure with `code`, `retryable` and a diagnostic.
    pub fn new(reason_code: MemoryWriteFailureCode, retryable: bool, reason: impl Into<String>) -> Self {
        WriteFailure { reason: reason.into(), retryable, reason_code }
    }
}

/// Everything a write pass can fail with, before classification.
#[derive(Debug)]
pub enum PassError {
    /// A transaction (archive append, writer commit, runtime state) failed.
    Transaction(TxError),
    /// The session store failed.
    Store(Error),
    /// The writer agent failed.
    Agent(AgentError),
    /// The branch cannot become records (a node without id, authority missing).
    Records(RecordError),
}

impl std::fmt::Display for PassError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PassError::Transaction(error) => write!(f, "{error}"),
            PassError::Store(error) => write!(f, "{error}"),
            PassError::Agent(error) => write!(f, "{error}"),
            PassError::Records(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for PassError {}

impl From<TxError> for PassError {
    fn from(error: TxError) -> Self {
        PassError::Transaction(error)
    }
}

impl From<Error> for PassError {
    fn from(error: Error) -> Self {
        PassError::Store(error)
    }
}

impl From<AgentError> for PassError {
    fn from(error: AgentError) -> Self {
        PassError::Agent(error)
    }
}

impl From<RecordError> for PassError {
    fn from(error: RecordError) -> Self {
        PassError::Records(error)
    }
}

/// The provider classifier's verdict on an HTTP status, transport failure or timeout.
fn provider_verdict(error: &AgentError) -> Option<(ProviderReason, bool)> {
    if error.timeout {
        return Some((ProviderReason::Timeout, true));
    }
    if error.transport {
        return Some((ProviderReason::Transport, true));
    }
    let status = error.http_status?;
    Some(match status {
        429 if error.quota_exhausted => (ProviderReason::RateLimit, false),
        429 => (ProviderReason::RateLimit, true),
        500..=599 => (ProviderReason::Provider, true),
        401 => (ProviderReason::Auth, false),
        403 => (ProviderReason::Authz, false),
        400..=499 => (ProviderReason::Invalid, false),
        _ => return None,
    })
}

fn model_code(reason: ProviderReason) -> MemoryWriteFailureCode {
    use MemoryWriteFailureCode as Code;
    match reason {
        ProviderReason::Transport => Code::ModelTransport,
        ProviderReason::RateLimit => Code::ModelRateLimit,
        ProviderReason::Provider => Code::ModelProviderInternal,
        ProviderReason::Auth => Code::ModelAuthentication,
        ProviderReason::Authz => Code::ModelAuthorization,
        ProviderReason::Invalid => Code::ModelInvalidRequest,
        ProviderReason::Context => Code::ModelContextLength,
        ProviderReason::Policy => Code::ModelContentPolicy,
        ProviderReason::Timeout => Code::ModelTimeout,
        ProviderReason::Unknown => Code::ModelFailureUnknown,
    }
}

/// The transaction codes that keep their name (spec 02 §2.9, first row).
fn named_transaction_code(code: TxCode) -> Option<MemoryWriteFailureCode> {
    use MemoryWriteFailureCode as Code;
    Some(match code {
        TxCode::AppendOnlyRequired => Code::AppendOnlyRequired,
        TxCode::ConcurrentUpdate => Code::ConcurrentUpdate,
        TxCode::GitCommitFailed => Code::GitCommitFailed,
        TxCode::InvalidArgument => Code::InvalidArgument,
        TxCode::InvalidTopicFormat => Code::InvalidTopicFormat,
        TxCode::MissingSource => Code::MissingSource,
        TxCode::PatchConflict => Code::PatchConflict,
        TxCode::PathOutsideWorkspace => Code::PathOutsideWorkspace,
        TxCode::ReadOnlyPath => Code::ReadOnlyPath,
        _ => return None,
    })
}

/// Classify a pass error (spec 02 §2.9, first match wins; unknown ⇒ not retryable).
pub fn classify(error: &PassError) -> WriteFailure {
    use MemoryWriteFailureCode as Code;
    let reason = error.to_string();
    match error {
        PassError::Transaction(error) => match named_transaction_code(error.code()) {
            Some(code) => WriteFailure::new(code, code == Code::ConcurrentUpdate, reason),
            None => WriteFailure::new(Code::TransactionFailureUnknown, false, reason),
        },
        PassError::Agent(agent) => {
            if let Some(code) = agent.commit_rejected.then_some(Code::CommitRejected) {
                return WriteFailure::new(code, false, reason);
            }
            if let Some(explicit) = agent.provider_reason {
                let verdict = provider_verdict(agent).map(|(_, retryable)| retryable);
                let retryable = agent.retryable.or(verdict).unwrap_or(false);
                return WriteFailure::new(model_code(explicit), retryable, reason);
            }
            if let Some((found, verdict)) = provider_verdict(agent) {
                return WriteFailure::new(model_code(found), agent.retryable.unwrap_or(verdict), reason);
            }
            let code = match agent.kind {
                AgentErrorKind::Precondition => {
                    return WriteFailure::new(Code::WriterPreconditionFailed, false, reason);
                }
                AgentErrorKind::Execution => Code::ModelFailureUnknown,
                AgentErrorKind::Other => Code::WriterFailureUnknown,
            };
            WriteFailure::new(code, agent.retryable.unwrap_or(false), reason)
        }
        PassError::Records(_) => WriteFailure::new(Code::WriterPreconditionFailed, false, reason),
        PassError::Store(_) => WriteFailure::new(Code::WriterFailureUnknown, false, reason),
    }
}

#[cfg(test)]
mod tests;
