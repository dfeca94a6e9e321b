//! Every lower-layer code mapped to exactly one contract code.
//!
//! The lower enums are `#[non_exhaustive]`, so each match ends in `_ => None`: a code added
//! below without an arm here maps to nothing, and the registry test (`error/tests.rs`),
//! which walks each lower crate's `ALL`, fails until it gets one.

use scriptorium_derived_views::ErrorCode as Views;
use scriptorium_retrieval::ErrorCode as Retrieval;
use scriptorium_transaction::ErrorCode as Txn;
use scriptorium_writer_runtime::ErrorCode as Writer;
use scriptorium_writer_runtime::llm::ConfigErrorCode as ModelConfig;

use super::ErrorCode as Code;

/// The contract code of a transaction code: its own contract codes pass through unchanged.
pub const fn from_transaction_code(code: Txn) -> Option<Code> {
    Some(match code {
        Txn::InvalidArgument => Code::InvalidArgument,
        Txn::ConcurrentUpdate => Code::ConcurrentUpdate,
        Txn::WriterPreconditionFailed => Code::WriterPreconditionFailed,
        Txn::MissingSource => Code::MissingSource,
        Txn::PathOutsideWorkspace => Code::PathOutsideWorkspace,
        Txn::ReadOnlyPath => Code::ReadOnlyPath,
        Txn::PatchConflict => Code::PatchConflict,
        Txn::MemoryNotFound => Code::MemoryNotFound,
        Txn::AppendOnlyRequired => Code::AppendOnlyRequired,
        Txn::InvalidTopicFormat => Code::InvalidTopicFormat,
        Txn::GitUnavailable => Code::GitUnavailable,
        Txn::GitCommitFailed => Code::GitCommitFailed,
        Txn::Io => Code::Io,
        Txn::Cancelled => Code::Cancelled,
        Txn::SourceRewritten => Code::StateDamaged,
        _ => return None,
    })
}

/// The contract code of a retrieval code: retrieval's own `contract_code` where it has
/// one, [`Code::Io`] for the read and cache failures it leaves to the layer above.
pub const fn from_retrieval_code(code: Retrieval) -> Option<Code> {
    Some(match code {
        Retrieval::BlankQuery
        | Retrieval::UnknownMethod
        | Retrieval::InvalidDate
        | Retrieval::EmptyDateWindow
        | Retrieval::SpeakerWithEmbedding
        | Retrieval::InvalidPattern => Code::InvalidArgument,
        Retrieval::EmbeddingUnavailable => Code::EmbeddingUnavailable,
        Retrieval::ReadFailed | Retrieval::CacheWriteFailed => Code::Io,
        _ => return None,
    })
}

/// The contract code of a derived-views code, as the derive step already reports it
/// (`VIEWS_NOT_UTF8` as `INVALID_TOPIC_FORMAT`, `VIEWS_SOURCE_UNREADABLE` as I/O).
pub const fn from_views_code(code: Views) -> Option<Code> {
    Some(match code {
        Views::NotUtf8 => Code::InvalidTopicFormat,
        Views::SourceUnreadable => Code::Io,
        _ => return None,
    })
}

/// The contract code of a writer-runtime code.
pub const fn from_writer_code(code: Writer) -> Option<Code> {
    Some(match code {
        Writer::SessionStoreCorrupt | Writer::SessionStoreForeign | Writer::SessionStoreTooNew => {
            Code::SessionStoreUnusable
        }
        Writer::SessionStoreIo | Writer::StateIo => Code::Io,
        Writer::InvalidNode => Code::InvalidArgument,
        // Another process holds the scan lock: the lock-not-obtained meaning of CONCURRENT_UPDATE.
        Writer::ScanBusy => Code::ConcurrentUpdate,
        Writer::WatcherStateCorrupt => Code::StateDamaged,
        _ => return None,
    })
}

/// The contract code of a writer model configuration code: a writer without a usable
/// model is a precondition failure, as a write pass reports it.
pub const fn from_model_config_code(code: ModelConfig) -> Option<Code> {
    Some(match code {
        ModelConfig::ModelSpecInvalid
        | ModelConfig::ApiKeyMissing
        | ModelConfig::ApiKeyInvalid
        | ModelConfig::BaseUrlMissing
        | ModelConfig::BaseUrlInvalid => Code::WriterPreconditionFailed,
        _ => return None,
    })
}
