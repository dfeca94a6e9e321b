//! `archive_parse`: the scanner's frames and stop line, plus the retrieval view of
//! the same file (checked by `source_view`).

use serde_json::Value;

use scriptorium_archive_format::{SourceMeta, parse_bytes};

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
        Some(want) => {
            let scan: Value = serde_json::from_str(&parse_bytes(&bytes, relative_path).to_json())
                .map_err(|e| format!("scan JSON does not parse: {e}"))?;
            diff_json("scan", &scan, want)?;
        }
    }
    source_view::check_source_view(case, relative_path, &bytes)
}

/// Source metadata in the reference's normalized JSON shape: its canonical JSON.
pub(super) fn meta_json(meta: &SourceMeta) -> Value {
    serde_json::from_str(&meta.canonical_json()).unwrap_or(Value::Null)
}
