//! `archive_parse`: the scanner's frames and stop line, plus the retrieval view of
//! the same file (checked by `source_view`).

use serde_json::{Value, json};

use scriptorium_archive_format::{AuthorityTier, Parsed, SourceMeta, parse_bytes};

use super::{Case, Outcome, diff_json, source_view};

pub(super) fn run(case: &Case) -> Outcome {
    Outcome::from_check(check(case))
}

fn check(case: &Case) -> Result<(), String> {
    let archive = case.input.get("archive").and_then(Value::as_str).unwrap_or("archive.md");
    let relative_path = case.input.get("relative_path").and_then(Value::as_str).ok_or("input without relative_path")?;
    let bytes = case.read(archive)?;
    match case.expected.get("scan") {
        Some(Value::Null) | None => {}
        Some(want) => diff_json("scan", &scan_json(&parse_bytes(&bytes, relative_path)), want)?,
    }
    source_view::check_source_view(case, relative_path, &bytes)
}

/// The scan in the vectors' shape (`scan_source_archive`).
pub(super) fn scan_json(parsed: &Parsed<'_>) -> Value {
    let frames: Vec<Value> = parsed
        .frames
        .iter()
        .map(|frame| {
            json!({
                "encoded_speaker_id": frame.encoded_speaker_id,
                "frame_start": frame.frame_start,
                "metadata": frame.meta.as_deref().map(meta_json),
                "metadata_index": frame.meta_line,
                "record_end": frame.record_end,
                "record_index": frame.record_start,
                "record_text": frame.record_text,
                "source_id": frame.source_id,
                "speaker_id": frame.speaker_id,
            })
        })
        .collect();
    match parsed.stop {
        None => json!({ "complete": true, "frames": frames }),
        Some(stop) => json!({ "complete": false, "frames": frames, "stopped_at_line": stop.line }),
    }
}

/// Source metadata in the reference's normalized JSON shape.
pub(super) fn meta_json(meta: &SourceMeta) -> Value {
    json!({
        "authority_tier": meta.authority_tier.map(AuthorityTier::as_str),
        "principal_id": meta.principal_id,
        "speaker_kind": meta.speaker_kind,
        "trust_state": meta.trust_state.as_str(),
        "version": 1,
    })
}
