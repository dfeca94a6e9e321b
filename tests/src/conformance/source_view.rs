//! The retrieval view of source archives: BM25 events, the trusted-id set, and the
//! legacy speaker hint.

use serde_json::{Value, json};

use scriptorium_archive_format::{legacy_speaker, source_events, trusted_source_ids};
use scriptorium_retrieval::source_memory_event;

use super::retrieval::event_json;
use super::{Case, Outcome, diff_json, function_of, undispatched};

/// Compare `expected.bm25_events` and `expected.trusted_source_ids`, when present,
/// with the events and trusted ids of the file's text.
pub(super) fn check_source_view(case: &Case, relative_path: &str, bytes: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("archive is not UTF-8: {e}"))?;
    if let Some(want) = case.expected.get("bm25_events") {
        let got: Vec<Value> = source_events(relative_path, text)
            .into_iter()
            .map(|event| event_json(&source_memory_event(event)))
            .collect();
        diff_json("bm25_events", &Value::Array(got), want)?;
    }
    if let Some(want) = case.expected.get("trusted_source_ids") {
        diff_json("trusted_source_ids", &json!(trusted_source_ids(relative_path, text)), want)?;
    }
    Ok(())
}

/// `legacy_source_parse`: a pre-v2 file has no scan, only the retrieval view.
pub(super) fn run_legacy(case: &Case) -> Outcome {
    Outcome::from_check(check_legacy(case))
}

fn check_legacy(case: &Case) -> Result<(), String> {
    let archive = case.input.get("archive").and_then(Value::as_str).unwrap_or("archive.md");
    let relative_path = case.input.get("relative_path").and_then(Value::as_str).ok_or("input without relative_path")?;
    if !matches!(case.expected.get("scan"), None | Some(Value::Null)) {
        return Err("a legacy case with a v2 scan".to_owned());
    }
    check_source_view(case, relative_path, &case.read(archive)?)
}

/// `fn_speaker_decode`: `_legacy_speaker(label, body)` → `[speaker_id, display, label]`.
pub(super) fn run_legacy_speaker(case: &Case) -> Outcome {
    Outcome::from_check(check_legacy_speaker(case))
}

fn check_legacy_speaker(case: &Case) -> Result<(), String> {
    let function = function_of(case)?;
    if function != "retrieval.bm25._legacy_speaker" {
        return Err(undispatched(function));
    }
    let cases = case.input.get("cases").and_then(Value::as_array).ok_or("input without cases")?;
    let results = case.expected.get("results").and_then(Value::as_array).ok_or("expected without results")?;
    if cases.len() != results.len() {
        return Err(format!("{} cases but {} results", cases.len(), results.len()));
    }
    for (n, (input, want)) in cases.iter().zip(results).enumerate() {
        let arg = |i: usize| input.get(i).and_then(Value::as_str).ok_or(format!("cases[{n}]: argument {i} missing"));
        let got = match legacy_speaker(arg(0)?, arg(1)?) {
            Some(hint) => json!([hint.speaker_id, hint.speaker_display, hint.speaker_label]),
            None => json!(["", "", ""]),
        };
        diff_json(&format!("results[{n}]"), &got, want)?;
    }
    Ok(())
}
