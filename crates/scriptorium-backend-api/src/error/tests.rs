//! The registry test: every code of every lower crate maps to exactly one contract code,
//! and the mapping agrees with what the lower crate itself says its contract code is.

use super::*;

use scriptorium_derived_views::ErrorCode as Views;
use scriptorium_retrieval::ErrorCode as Retrieval;
use scriptorium_transaction::ErrorCode as Txn;
use scriptorium_writer_runtime::ErrorCode as Writer;
use scriptorium_writer_runtime::llm::ConfigErrorCode as ModelConfig;

fn check_all<C: Copy + std::fmt::Debug>(
    crate_name: &str,
    all: &[C],
    name: impl Fn(C) -> &'static str,
    map: impl Fn(C) -> Option<ErrorCode>,
    missing: &mut Vec<String>,
) {
    for &code in all {
        match map(code) {
            Some(mapped) => assert!(ErrorCode::ALL.contains(&mapped), "{mapped:?} is not in ErrorCode::ALL"),
            None => missing.push(format!("{crate_name}: {} has no contract code", name(code))),
        }
    }
}

#[test]
fn every_lower_code_maps_to_one_contract_code() {
    let mut missing = Vec::new();
    check_all("transaction", Txn::ALL, Txn::as_str, from_transaction_code, &mut missing);
    check_all("retrieval", Retrieval::ALL, Retrieval::as_str, from_retrieval_code, &mut missing);
    check_all("derived-views", Views::ALL, Views::as_str, from_views_code, &mut missing);
    check_all("writer-runtime", Writer::ALL, Writer::as_str, from_writer_code, &mut missing);
    check_all("writer-runtime llm", ModelConfig::ALL, ModelConfig::as_str, from_model_config_code, &mut missing);
    assert!(missing.is_empty(), "unmapped lower codes:\n  {}", missing.join("\n  "));
}

#[test]
fn transaction_contract_codes_pass_through_with_their_spelling() {
    for &code in Txn::ALL {
        let mapped = from_transaction_code(code).map(ErrorCode::as_str);
        if !code.as_str().starts_with("TXN_") {
            assert_eq!(mapped, Some(code.as_str()), "{code}");
        } else {
            assert!(mapped.is_some_and(|m| m.starts_with("BACKEND_")), "{code} -> {mapped:?}");
        }
    }
}

#[test]
fn retrieval_mapping_agrees_with_its_own_contract_code() {
    for &code in Retrieval::ALL {
        let mapped = from_retrieval_code(code);
        match code.contract_code() {
            Some(contract) => assert_eq!(mapped.map(ErrorCode::as_str), Some(contract), "{code}"),
            None => assert_eq!(mapped, Some(ErrorCode::Io), "{code}"),
        }
    }
}

#[test]
fn contract_codes_are_unique_and_screaming_snake_case() {
    let mut seen = std::collections::BTreeSet::new();
    for code in ErrorCode::ALL {
        let text = code.as_str();
        assert!(seen.insert(text), "{text} twice");
        assert!(text.chars().all(|c| c.is_ascii_uppercase() || c == '_'), "{text}");
    }
}

#[test]
fn a_lower_error_keeps_its_code_message_and_source() {
    let root = std::env::temp_dir().join(format!("scriptorium-backend-err-{}", std::process::id()));
    std::fs::write(&root, b"a file, not a directory").expect("the temp dir is writable");
    let lower = scriptorium_transaction::Workspace::open(&root).expect_err("a file is no workspace");
    let lower_code = lower.code();
    let error = Error::from(lower);
    let _ = std::fs::remove_file(&root);
    assert_eq!(error.lower_code(), Some(lower_code.as_str()));
    assert_eq!(Some(error.code()), from_transaction_code(lower_code));
    assert!(std::error::Error::source(&error).is_some());
}
