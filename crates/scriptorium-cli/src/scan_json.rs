//! The scan of a v2 archive as JSON, in the golden vectors' `expected.scan` shape
//! (the reference's `scan_source_archive`).
//!
//! A copy of `tests/src/conformance/archive_parse.rs`'s `scan_json`: the CLI must not
//! depend on the tests crate. A later cleanup may move the function down a layer;
//! until then the CLI's integration tests compare this output with the vectors.

use serde_json::{Value, json};

use scriptorium_archive_format::{AuthorityTier, Parsed, SourceMeta};

/// The scan in the vectors' shape: `complete`, `frames[...]` with 0-based line indexes,
/// and `stopped_at_line` when the scan stopped early.
pub(crate) fn scan_json(parsed: &Parsed<'_>) -> Value {
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
fn meta_json(meta: &SourceMeta) -> Value {
    json!({
        "authority_tier": meta.authority_tier.map(AuthorityTier::as_str),
        "principal_id": meta.principal_id,
        "speaker_kind": meta.speaker_kind,
        "trust_state": meta.trust_state.as_str(),
        "version": 1,
    })
}
