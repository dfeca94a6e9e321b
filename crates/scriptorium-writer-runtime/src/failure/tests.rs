//! The closed code set and the classifier's table (spec 02 §2.9).

use scriptorium_transaction::{Error as TxError, ErrorCode as TxCode};

use super::*;
use crate::agent::{AgentError, AgentErrorKind, ProviderReason};

#[test]
fn every_code_round_trips_by_name_and_unknown_names_are_refused() {
    assert_eq!(MemoryWriteFailureCode::ALL.len(), 28);
    for code in MemoryWriteFailureCode::ALL {
        assert_eq!(MemoryWriteFailureCode::from_name(code.as_str()), Some(*code));
    }
    assert_eq!(MemoryWriteFailureCode::from_name("NOPE"), None);
}

#[test]
fn transaction_errors_keep_named_codes_and_only_concurrent_update_is_retryable() {
    let cases = [
        (TxCode::ConcurrentUpdate, MemoryWriteFailureCode::ConcurrentUpdate, true),
        (TxCode::InvalidTopicFormat, MemoryWriteFailureCode::InvalidTopicFormat, false),
        (TxCode::PatchConflict, MemoryWriteFailureCode::PatchConflict, false),
        (TxCode::MemoryNotFound, MemoryWriteFailureCode::TransactionFailureUnknown, false),
        (TxCode::WriterPreconditionFailed, MemoryWriteFailureCode::TransactionFailureUnknown, false),
        (TxCode::Io, MemoryWriteFailureCode::TransactionFailureUnknown, false),
    ];
    for (tx, code, retryable) in cases {
        let failure = classify(&PassError::Transaction(TxError::new(tx, "x")));
        assert_eq!((failure.reason_code, failure.retryable), (code, retryable), "{tx}");
    }
}

#[test]
fn explicit_reasons_win_and_the_errors_own_verdict_beats_the_classifier() {
    let explicit =
        AgentError { provider_reason: Some(ProviderReason::Context), http_status: Some(500), ..AgentError::default() };
    let failure = classify(&PassError::Agent(explicit));
    assert_eq!((failure.reason_code, failure.retryable), (MemoryWriteFailureCode::ModelContextLength, true));
    let own = AgentError { http_status: Some(503), retryable: Some(false), ..AgentError::default() };
    let failure = classify(&PassError::Agent(own));
    assert_eq!((failure.reason_code, failure.retryable), (MemoryWriteFailureCode::ModelProviderInternal, false));
    let statuses = [
        (403, MemoryWriteFailureCode::ModelAuthorization),
        (400, MemoryWriteFailureCode::ModelInvalidRequest),
        (404, MemoryWriteFailureCode::ModelInvalidRequest),
    ];
    for (status, code) in statuses {
        let failure = classify(&PassError::Agent(AgentError { http_status: Some(status), ..AgentError::default() }));
        assert_eq!((failure.reason_code, failure.retryable), (code, false));
    }
    let timeout = classify(&PassError::Agent(AgentError { timeout: true, ..AgentError::default() }));
    assert_eq!((timeout.reason_code, timeout.retryable), (MemoryWriteFailureCode::ModelTimeout, true));
    let other = classify(&PassError::Agent(AgentError {
        retryable: Some(true),
        ..AgentError::new(AgentErrorKind::Other, "?")
    }));
    assert_eq!((other.reason_code, other.retryable), (MemoryWriteFailureCode::WriterFailureUnknown, true));
    let plain = classify(&PassError::Agent(AgentError::new(AgentErrorKind::Other, "?")));
    assert_eq!(
        (plain.reason_code, plain.retryable),
        (MemoryWriteFailureCode::WriterFailureUnknown, false),
        "unknown is not retryable"
    );
}
