//! `memory_update` (spec 02 §7, §4.2): one all-or-nothing transaction through the warm
//! runtime's workspace handle and derived-views cache.
//!
//! Authority comes from the [`Caller`] only: whether the edit is append-only, the
//! provenance new evidence is archived with, and the history mode are set here, and a
//! request that carries any of them itself is refused (`INVALID_ARGUMENT`), so a model
//! can never widen its own authority.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use scriptorium_transaction::{Error as TxError, Provenance, UpdateRequest};

use super::{Caller, ToolSpec};
use crate::error::Error;
use crate::local::Host;
use crate::tier::Capability;

pub(super) const SPEC: ToolSpec = ToolSpec {
    name: "memory_update",
    description: "Change long-term memory in one all-or-nothing transaction. Use it for explicit \
\"remember this now\" requests and for corrections; recording the conversation itself is the \
background writer's job, so there is no need to save what was said. Prefer memory_changes \
(record operations: create_record, update_record, delete_record, move_records) over patch or \
changes. base_revision is required: take it from memory_status; if memory changed since, the \
call fails with CONCURRENT_UPDATE and you retry with the new revision. New evidence goes in \
sources with a label new-source-<name>, cited from memory_changes[].sources[].source. Returns \
the transaction result as JSON, or a TxError.",
    input_schema: INPUT_SCHEMA,
    max_chars: 8000,
    capability: Capability::SourceAppend,
};

/// The input schema of spec 02 §7's row, with its notes (`time` a string, `null` also
/// accepted; `source_refs` accepted but not declared; the label guidance).
const INPUT_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "base_revision": {"type": "string", "description": "The revision your edit is based on (memory_status shows it)."},
    "patch": {"type": "string", "description": "A unified diff over topics/**.md files."},
    "changes": {
      "type": "array",
      "description": "Whole-file writes and deletes of topics/**.md files.",
      "items": {
        "type": "object",
        "properties": {
          "path": {"type": "string"},
          "action": {"type": "string", "enum": ["write", "delete"]},
          "content": {"type": "string"}
        },
        "required": ["path", "action"]
      }
    },
    "memory_changes": {
      "type": "array",
      "description": "Record operations (preferred).",
      "items": {
        "type": "object",
        "properties": {
          "op": {"type": "string", "enum": ["create_record", "update_record", "delete_record", "move_records"]},
          "memory_id": {"type": "string"},
          "memory_ids": {"type": "array", "items": {"type": "string"}},
          "destination": {
            "type": "object",
            "properties": {
              "topic_path": {"type": "string"},
              "headings": {"type": "array", "items": {"type": "string"}},
              "position": {"type": "string", "enum": ["start", "end", "before", "after"]},
              "anchor_memory_id": {"type": "string"}
            }
          },
          "content": {"type": "string"},
          "time": {"type": "string", "description": "YYYY, YYYY-MM, YYYY-MM-DD or undated."},
          "sources": {
            "type": "array",
            "items": {
              "type": "object",
              "properties": {
                "source": {"type": "string", "description": "An existing source id or a new-source-* label declared in sources."},
                "label": {"type": "string", "description": "A short context keyword (at most 8 CJK characters or 6 English words); no ids, speakers, dates, URLs or markup."}
              },
              "required": ["source", "label"]
            }
          }
        },
        "required": ["op"]
      }
    },
    "sources": {
      "type": "array",
      "description": "New evidence to archive with the edit.",
      "items": {
        "type": "object",
        "properties": {
          "label": {"type": "string", "description": "new-source-[a-z0-9-]+, unique in the call."},
          "role": {"type": "string", "enum": ["user", "assistant", "system", "tool"]},
          "content": {"type": "string"},
          "observed_at": {"type": "string", "description": "ISO-8601 time, optional."}
        },
        "required": ["label", "role", "content"]
      }
    },
    "commit_message": {"type": "string"}
  },
  "required": ["base_revision"]
}"#;

/// Request fields only the runtime may set; a model that sends one is refused.
const AUTHORITY_FIELDS: [&str; 3] = ["append_only", "provenance", "git_commit"];

pub(super) fn run(host: &Host<'_>, arguments: &Value, caller: &Caller) -> String {
    let request = match request(arguments, caller) {
        Ok(request) => request,
        Err(error) => return tx_error_with_details(error),
    };
    match host.warm.runtime.update(&request) {
        Ok(result) => fitted(result.to_json(), SPEC.max_chars),
        Err(error) => tx_error_with_details(error),
    }
}

/// The pretty JSON result within `max_chars`. The registry's cap would cut a long result
/// (an edit dated on many days lists every timeline file it touched) into text that is no
/// longer JSON, losing the revision the next call needs. Instead entries are left out, in
/// this order, each list from its end: derived-view paths of `changed_files`, then
/// `evidence_ids`, then the topic and source paths, then `block_ids`; a
/// `<field>_omitted` count says how many of each.
fn fitted(result: Value, max_chars: usize) -> String {
    let pretty = |value: &Value| serde_json::to_string_pretty(value).unwrap_or_default();
    let whole = pretty(&result);
    if whole.chars().count() <= max_chars {
        return whole;
    }
    let files: Vec<String> = result
        .get("changed_files")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let keys = |field: &str| -> Vec<String> {
        result.get(field).and_then(Value::as_object).map(|map| map.keys().rev().cloned().collect()).unwrap_or_default()
    };
    let is_view = |path: &String| !(path.starts_with("topics/") || path.starts_with("sources/"));
    let mut order: Vec<(&str, String)> = Vec::new();
    order.extend(files.iter().rev().filter(|path| is_view(path)).map(|path| ("changed_files", path.clone())));
    order.extend(keys("evidence_ids").into_iter().map(|key| ("evidence_ids", key)));
    order.extend(files.iter().rev().filter(|path| !is_view(path)).map(|path| ("changed_files", path.clone())));
    order.extend(keys("block_ids").into_iter().map(|key| ("block_ids", key)));
    let shortened = |dropped: usize| {
        // One pass per field over a set of what goes, so a result of thousands of paths
        // costs linear time per try.
        let mut gone: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (field, entry) in order.iter().take(dropped) {
            gone.entry(*field).or_default().insert(entry.as_str());
        }
        let mut value = result.clone();
        for (field, entries) in &gone {
            match value.get_mut(*field) {
                Some(Value::Array(list)) => list.retain(|item| !item.as_str().is_some_and(|e| entries.contains(e))),
                Some(Value::Object(map)) => map.retain(|key, _| !entries.contains(key.as_str())),
                _ => {}
            }
            if let Value::Object(map) = &mut value {
                map.insert(format!("{field}_omitted"), Value::from(entries.len()));
            }
        }
        pretty(&value)
    };
    // The fewest left-out entries that fit: the text only shrinks as more are left out.
    let (mut low, mut high) = (0, order.len());
    while low < high {
        let middle = low + (high - low) / 2;
        if shortened(middle).chars().count() <= max_chars { high = middle } else { low = middle + 1 }
    }
    shortened(low)
}

/// The transaction request: the model's fields, with the authority of `caller`.
fn request(arguments: &Value, caller: &Caller) -> Result<UpdateRequest, TxError> {
    let Some(fields) = arguments.as_object() else {
        return Err(invalid("the arguments must be a JSON object"));
    };
    if let Some(field) = AUTHORITY_FIELDS.iter().find(|field| fields.contains_key(**field)) {
        return Err(invalid(format!("{field} is set by the runtime from the current turn, never by the caller")));
    }
    let mut fields = fields.clone();
    fields.insert("append_only".to_owned(), Value::Bool(caller.append_only()));
    fields.insert("git_commit".to_owned(), Value::from("auto"));
    if let Some(provenance) = caller.provenance() {
        fields.insert("provenance".to_owned(), provenance_json(&provenance));
    }
    UpdateRequest::from_json(&Value::Object(fields))
}

fn provenance_json(provenance: &Provenance) -> Value {
    json!({
        "principal_id": provenance.principal_id,
        "speaker_kind": provenance.speaker_kind,
        "speaker_id": provenance.speaker_id,
        "speaker_display": provenance.speaker_display,
        "authority_tier": provenance.authority_tier,
        "origin_id": provenance.origin_id,
    })
}

fn invalid(message: impl Into<Box<str>>) -> TxError {
    TxError::new(scriptorium_transaction::ErrorCode::InvalidArgument, message)
}

/// The `TxError` JSON of a transaction error with its contract code and, when the
/// transaction gave any, its `details` (the revisions of a `CONCURRENT_UPDATE`, the
/// violations of an `INVALID_TOPIC_FORMAT`, the labels of a `MISSING_SOURCE`).
pub(super) fn tx_error_with_details(error: TxError) -> String {
    let details = error.details().clone();
    let mapped = Error::from(error);
    error_json(mapped.code().as_str(), mapped.message(), mapped.path(), details)
}

/// `{"ok":false,"error":{"code","message","path"[,"details"]}}` with any code string.
pub(super) fn error_json(
    code: impl Into<String>,
    message: &str,
    path: Option<&str>,
    details: Map<String, Value>,
) -> String {
    let mut body = Map::new();
    body.insert("code".to_owned(), Value::String(code.into()));
    body.insert("message".to_owned(), Value::from(message));
    body.insert("path".to_owned(), path.map_or(Value::Null, Value::from));
    if !details.is_empty() {
        body.insert("details".to_owned(), Value::Object(details));
    }
    json!({"ok": false, "error": Value::Object(body)}).to_string()
}
