//! Function tables of the archive layer: source locations, speaker ids, source
//! metadata and identity-header normalization.

use serde_json::{Value, json};

use scriptorium_archive_format::{
    SourceMeta, SpeakerView, decode_speaker_id, encode_speaker_id, is_canonical_speaker_id, is_v2_source_path,
    is_valid_v2_source_id, legacy_location, normalize_identity_part, source_anchor, speaker_label, v2_location,
};

use super::archive_parse::meta_json;
use super::{Case, Outcome, diff_json, undispatched};

pub(super) fn run(case: &Case) -> Outcome {
    let function = case.input.get("function").and_then(Value::as_str).unwrap_or_default();
    if !FUNCTIONS.contains(&function) {
        return Outcome::Fail(undispatched(function));
    }
    let Some(inputs) = case.input.get("cases").and_then(Value::as_array) else {
        return Outcome::fail("input without cases");
    };
    let Some(results) = case.expected.get("results") else {
        return Outcome::fail("expected without results");
    };
    let got: Result<Vec<Value>, String> = inputs.iter().map(|input| call(function, input)).collect();
    Outcome::from_check(got.and_then(|got| diff_json("results", &Value::Array(got), results)))
}

/// Every function [`call`] dispatches, checked before any case runs so that an empty
/// table cannot pass for a function this runner does not know.
const FUNCTIONS: &[&str] = &[
    "source_format.is_v2_source_path",
    "source_format.provider_source_location",
    "source_format.encode_speaker_id",
    "source_format.is_canonical_speaker_id",
    "source_format.encode_source_metadata",
    "source_format.decode_source_metadata",
    "_text.normalize_identity_header_part",
    "runtime.state.SourceRecord.speaker_label",
    "retrieval.bm25._structured_speaker",
];

fn call(function: &str, input: &Value) -> Result<Value, String> {
    let text = || input.as_str().ok_or_else(|| format!("{function}: input is not a string: {input}"));
    let opt = |key: &str| input.get(key).and_then(Value::as_str);
    Ok(match function {
        "source_format.is_v2_source_path" => json!(is_v2_source_path(text()?)),
        "source_format.provider_source_location" => {
            let id = text()?;
            let located = |path: Option<String>| path.map(|p| json!([p, source_anchor(id)]));
            json!({
                "v1": located(legacy_location(id)),
                "v2": located(v2_location(id)),
                "valid_v2_source_id": is_valid_v2_source_id(id),
            })
        }
        "source_format.encode_speaker_id" => {
            let encoded = encode_speaker_id(text()?);
            json!({ "canonical": is_canonical_speaker_id(&encoded), "encoded": encoded })
        }
        "source_format.is_canonical_speaker_id" => json!(is_canonical_speaker_id(text()?)),
        "source_format.encode_source_metadata" => match SourceMeta::normalize(input) {
            Ok(meta) => json!({
                "encoded": { "ok": true, "value": meta.to_line() },
                "normalized": meta_json(&meta),
            }),
            Err(e) => json!({
                "encoded": { "ok": false, "error": { "message": e.message(), "type": "ValueError" } },
                "normalized": null,
            }),
        },
        "_text.normalize_identity_header_part" => json!(normalize_identity_part(text()?)),
        "source_format.decode_source_metadata" => json!(SourceMeta::decode_token(text()?).as_ref().map(meta_json)),
        "retrieval.bm25._structured_speaker" => {
            let arg =
                |i: usize| input.get(i).and_then(Value::as_str).ok_or(format!("{function}: argument {i} missing"));
            let (label, marker) = (arg(0)?, arg(1)?);
            match decode_speaker_id(marker) {
                Some(decoded) => {
                    let view = SpeakerView::from_frame(&decoded, label);
                    json!([view.speaker_id, view.speaker_display, view.speaker_label])
                }
                None => Value::Null,
            }
        }
        "runtime.state.SourceRecord.speaker_label" => {
            json!(speaker_label(opt("role").unwrap_or_default(), opt("speaker_id"), opt("speaker_display")))
        }
        other => return Err(undispatched(other)),
    })
}
