//! The input side of the transaction layer: `patch_apply` (a unified diff applied to a
//! stage read from the case folder) and `fn_source_identity` (evidence validation and
//! identity).
//!
//! Errors compare on code, message, path and details; the Python exception type is
//! informational (FORMAT.md) and is dropped from the expectation.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use scriptorium_archive_format::SourceRecord;
use scriptorium_transaction::{Error, Provenance, apply_patch, evidence_records, parse_evidence};

use super::{Case, Outcome, diff_json, function_of, undispatched};

/// `patch_apply`: apply `input.patch` to the files of `input.stage`, then compare the
/// changed paths and every staged file byte for byte, or the error.
pub(super) fn run_patch(case: &Case) -> Outcome {
    Outcome::from_check(check_patch(case))
}

fn check_patch(case: &Case) -> Result<(), String> {
    let patch = case.input.get("patch").and_then(Value::as_str).ok_or("input without patch")?;
    let stage_dir = case.input.get("stage").and_then(Value::as_str).unwrap_or("stage");
    let mut stage = BTreeMap::new();
    read_tree(&case.dir.join(stage_dir), "", &mut stage)?;
    let result = match apply_patch(&stage, patch) {
        Ok(result) => result,
        Err(e) => return compare_error(case, &e),
    };
    if case.expected.get("ok") != Some(&Value::Bool(true)) {
        return Err(format!("applied, want error {}", case.expected.get("error").cloned().unwrap_or_default()));
    }
    let changed: Vec<&str> = result.changed().map(|path| path.as_str()).collect();
    diff_json("changed", &json!(changed), case.expected.get("changed").unwrap_or(&Value::Null))?;
    for (path, bytes) in &result.files {
        match bytes {
            Some(bytes) => stage.insert(path.as_str().to_owned(), bytes.clone()),
            None => stage.remove(path.as_str()),
        };
    }
    let want = case.expected.get("files").and_then(Value::as_object).ok_or("expected without files")?;
    if let Some(extra) = stage.keys().find(|path| !want.contains_key(*path)) {
        return Err(format!("files.{extra}: unexpected"));
    }
    for (path, relative) in want {
        let relative = relative.as_str().ok_or(format!("files.{path} is not a path"))?;
        let got = stage.get(path).ok_or(format!("files.{path}: missing"))?;
        if *got != case.read(relative)? {
            return Err(format!("files.{path}: got {:?}", String::from_utf8_lossy(got)));
        }
    }
    Ok(())
}

/// Every file under `dir` keyed by its `/`-separated path relative to the stage root.
/// A missing folder is an empty stage (FORMAT.md).
fn read_tree(dir: &Path, prefix: &str, files: &mut BTreeMap<String, Vec<u8>>) -> Result<(), String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("cannot list {}: {e}", dir.display())),
    };
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        let name = entry.file_name().into_string().map_err(|name| format!("non-UTF-8 name {name:?}"))?;
        let relative = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        let path = entry.path();
        if path.is_dir() {
            read_tree(&path, &relative, files)?;
        } else {
            let bytes = std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            files.insert(relative, bytes);
        }
    }
    Ok(())
}

/// Compare a refusal with `expected.error`.
fn compare_error(case: &Case, error: &Error) -> Result<(), String> {
    let Some(want) = case.expected.get("error") else {
        return Err(format!("refused: {error} {:?}", error.details()));
    };
    diff_json("error", &error_json(error), &without_type(want))
}

/// A transaction error as the vectors record it, without the exception type.
fn error_json(error: &Error) -> Value {
    json!({
        "code": error.code().as_str(),
        "message": error.message(),
        "path": error.path(),
        "details": Value::Object(error.details().clone()),
    })
}

fn without_type(error: &Value) -> Value {
    let mut error = error.clone();
    if let Some(object) = error.as_object_mut() {
        object.remove("type");
    }
    error
}

/// `fn_source_identity`: validate `sources` and derive the records for `provenance`,
/// one result per input case.
pub(super) fn run_source_identity(case: &Case) -> Outcome {
    match function_of(case) {
        Ok("management.transaction.source_records") => {}
        Ok(other) => return Outcome::Fail(undispatched(other)),
        Err(why) => return Outcome::Fail(why),
    }
    let Some(inputs) = case.input.get("cases").and_then(Value::as_array) else {
        return Outcome::fail("input without cases");
    };
    let Some(want) = case.expected.get("results").and_then(Value::as_array) else {
        return Outcome::fail("expected without results");
    };
    let got: Vec<Value> = inputs.iter().map(source_identity).collect();
    let want: Vec<Value> = want
        .iter()
        .map(|result| {
            let mut result = result.clone();
            if let Some(error) = result.get_mut("error") {
                *error = without_type(error);
            }
            result
        })
        .collect();
    Outcome::from_check(diff_json("results", &Value::Array(got), &Value::Array(want)))
}

fn source_identity(input: &Value) -> Value {
    let provenance = input.get("provenance").and_then(provenance);
    let sources = input.get("sources").unwrap_or(&Value::Null);
    let parsed = match parse_evidence(sources) {
        Ok(parsed) => parsed,
        Err(e) => return json!({ "ok": false, "error": error_json(&e) }),
    };
    match evidence_records(&parsed, provenance.as_ref()) {
        Ok(archived) => {
            let parsed: Vec<Value> = parsed
                .iter()
                .map(
                    |e| json!({ "label": e.label, "role": e.role, "content": e.content, "observed_at": e.observed_at }),
                )
                .collect();
            let records: Vec<Value> = archived.records.iter().map(record_json).collect();
            json!({ "ok": true, "value": { "parsed": parsed, "records": records, "source_ids": archived.source_ids } })
        }
        Err(e) => json!({ "ok": false, "error": error_json(&e) }),
    }
}

/// A source record in the field names of `archive_write` inputs.
fn record_json(r: &SourceRecord) -> Value {
    json!({
        "authority_tier": r.authority_tier, "content": r.content, "message_id": r.message_id, "ordinal": r.ordinal,
        "principal_id": r.principal_id, "provider": r.provider, "role": r.role, "speaker_display": r.speaker_display,
        "speaker_id": r.speaker_id, "speaker_kind": r.speaker_kind, "thread_id": r.thread_id,
        "timestamp": r.timestamp, "trust_state": r.trust_state,
    })
}

/// The runtime's provenance record as the vectors spell it.
fn provenance(value: &Value) -> Option<Provenance> {
    let field = |name: &str| value.get(name).and_then(Value::as_str).map(str::to_owned);
    Some(Provenance {
        principal_id: field("principal_id")?,
        speaker_kind: field("speaker_kind")?,
        speaker_id: field("speaker_id")?,
        speaker_display: field("speaker_display")?,
        authority_tier: field("authority_tier")?,
        origin_id: field("origin_id")?,
    })
}
