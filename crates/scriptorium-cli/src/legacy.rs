//! What the CLI reports about a legacy (pre-v2) archive: the records the legacy
//! reader finds in it (spec 01 §3.2), via `scriptorium_backend_api::layers::archive_format::source_events`.
//!
//! Legacy files have no completeness notion: nothing writes them any more and readers
//! take whatever records they find, so the report is a list, not a verdict.

use scriptorium_backend_api::layers::archive_format::{SourceEvent, source_events};
use serde_json::{Value, json};

/// The records of a legacy archive, in file order.
#[derive(Debug)]
pub(crate) struct LegacySummary {
    /// One event per runtime record, plus anonymous events for loose lines that cite
    /// benchmark refs (`D<c>:<t>`).
    pub(crate) records: Vec<SourceEvent>,
}

impl LegacySummary {
    /// Read the legacy archive `text` found at the workspace-relative `relative_path`
    /// (the path decides which anchor/source-id pairs are records of this file).
    pub(crate) fn read(relative_path: &str, text: &str) -> Self {
        LegacySummary { records: source_events(relative_path, text) }
    }

    /// The summary as JSON: `{"kind": "legacy", "records": [...]}`, each record with
    /// its 1-based header `line`, `event_id`, `refs`, `date`, the untrusted
    /// `speaker_label` hint and the cleaned `content`.
    pub(crate) fn to_json(&self) -> Value {
        let records: Vec<Value> = self
            .records
            .iter()
            .map(|r| {
                json!({
                    "line": r.line,
                    "event_id": r.event_id,
                    "refs": r.refs,
                    "date": r.date,
                    "speaker_label": r.speaker_label,
                    "content": r.content,
                })
            })
            .collect();
        json!({ "kind": "legacy", "records": records })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_runtime_records_and_benchmark_lines() {
        let text = "# t\n\n<a id=\"source-0\"></a>\n<!-- source-id:p/t/m1 -->\n[d] user: hi\n\nloose [D1:2]\n";
        let summary = LegacySummary::read("sources/p/t.md", text);
        // The anchor does not match the id, so only the loose benchmark line is a record.
        assert_eq!(summary.records.len(), 1);
        assert_eq!(summary.records[0].refs, ["D1:2"]);
        assert_eq!(summary.records[0].line, 7);
    }
}
