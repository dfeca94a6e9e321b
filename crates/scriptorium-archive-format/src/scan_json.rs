//! A scan as JSON, in the shape the reference's `scan_source_archive` reports it (the
//! golden vectors' `expected.scan`): one machine-readable form for tools and tests.

use serde_json::{Value, json};

use crate::meta::SourceMeta;
use crate::parse::Parsed;

impl Parsed<'_> {
    /// The scan as compact JSON: `complete`, `frames` (0-based line indexes, the
    /// encoded and decoded speaker id, metadata, the exact record text) and, when the
    /// scan stopped early, `stopped_at_line`.
    pub fn to_json(&self) -> String {
        let frames: Vec<Value> = self
            .frames
            .iter()
            .map(|frame| {
                json!({
                    "encoded_speaker_id": frame.encoded_speaker_id,
                    "frame_start": frame.frame_start,
                    "metadata": frame.meta.as_deref().map(meta_value),
                    "metadata_index": frame.meta_line,
                    "record_end": frame.record_end,
                    "record_index": frame.record_start,
                    "record_text": frame.record_text,
                    "source_id": frame.source_id,
                    "speaker_id": frame.speaker_id,
                })
            })
            .collect();
        let scan = match self.stop {
            None => json!({ "complete": true, "frames": frames }),
            Some(stop) => json!({ "complete": false, "frames": frames, "stopped_at_line": stop.line }),
        };
        scan.to_string()
    }
}

/// The normalized metadata object; its canonical JSON is exactly the reference's shape.
fn meta_value(meta: &SourceMeta) -> Value {
    // The canonical form is built by this crate and is always valid JSON.
    serde_json::from_str(&meta.canonical_json()).unwrap_or(Value::Null)
}
