//! `memory_promote` (spec 02 §5, §7): the local owner trusts a pending source, and the
//! writer runtime distills it (`Runtime::promote`).
//!
//! Authority problems answer `{"ok":false,"error":"<text>"}` with a string error, exactly
//! as the spec's row says; transaction errors are `TxError` objects.

use serde_json::{Map, Value, json};

use scriptorium_writer_runtime::{PassError, classify};

use super::update::{error_json, tx_error_with_details};
use super::{Caller, ToolSpec, notice, tx_error};
use crate::error::Error;
use crate::local::Host;
use crate::tier::Capability;

pub(super) const SPEC: ToolSpec = ToolSpec {
    name: "memory_promote",
    description: "Trust a pending source (speech from an unpaired group member) so memory may cite it, \
then distill it into topics. Only the local owner at the keyboard may promote; pass the source's id \
(provider/thread/message) as memory_search shows it. Returns {source_id, promoted, trust_state, \
distilled, changed_files} as JSON.",
    input_schema: r#"{"type":"object","properties":{"source_id":{"type":"string","description":"The pending source's id: provider/thread/message."}},"required":["source_id"]}"#,
    max_chars: 8000,
    capability: Capability::TrustedPromote,
};

/// The refusal for any caller but the interactive local owner.
const OWNER_ONLY: &str = "only the local owner can promote sources (an interactive owner turn)";

pub(super) fn run(host: &Host<'_>, arguments: &Value, caller: &Caller) -> String {
    if !caller.is_local_owner() {
        return string_error(OWNER_ONLY);
    }
    let source_id = match arguments.get("source_id") {
        None | Some(Value::Null) => "",
        Some(Value::String(text)) => text.trim(),
        Some(_) => return string_error("source_id must be a string: provider/thread/message"),
    };
    if source_id.is_empty() {
        return notice("memory_promote needs a source_id (provider/thread/message) of a pending source.");
    }
    match host.warm.runtime.promote(source_id, &caller.principal_id) {
        Ok(report) => serde_json::to_string_pretty(&json!({
            "source_id": report.source_id,
            "promoted": report.promoted,
            "trust_state": report.trust_state,
            "distilled": report.distilled,
            "changed_files": report.changed_files,
        }))
        .unwrap_or_default(),
        Err(PassError::Transaction(error)) => tx_error_with_details(error),
        Err(PassError::Store(error)) => tx_error(&Error::from(error)),
        // Only the distillation runs the writer, after the trust flip was installed: say
        // both, with the closed failure code of the writer run (spec 02 §2.9).
        Err(error) => {
            let failure = classify(&error);
            let mut details = Map::new();
            details.insert("source_id".to_owned(), Value::from(source_id));
            details.insert("trust_state".to_owned(), Value::from("trusted"));
            details.insert("distilled".to_owned(), Value::Bool(false));
            details.insert("retryable".to_owned(), Value::Bool(failure.retryable));
            let message = format!("the source is trusted now, but distilling it failed: {}", failure.reason);
            error_json(failure.reason_code.as_str(), &message, None, details)
        }
    }
}

/// `{"ok":false,"error":"<text>"}`: the string error of the spec's row.
fn string_error(text: &str) -> String {
    json!({"ok": false, "error": text}).to_string()
}
