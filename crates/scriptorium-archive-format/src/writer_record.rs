//! The writer record protocol (spec 01 §5): one compact JSON line per turn, grouped
//! under `## Observed <date>` headings, as the writer model receives a batch.

use serde_json::Value;

use crate::error::{Error, ErrorCode};
use crate::python::push_json_string;
use crate::record::SourceRecord;

/// The heading date of a batch in which no record has a timestamp.
pub const UNDATED: &str = "undated";

/// One turn as the writer model sees it: `{"ref","speaker","content"}`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WriterRecord {
    /// The source id, serialized as `ref`.
    pub source_id: String,
    /// The speaker label of spec 01 §4 (not re-normalized).
    pub speaker: String,
    /// The exact body text.
    pub content: String,
}

impl WriterRecord {
    /// The protocol view of an archived record.
    pub fn from_source(record: &SourceRecord) -> Self {
        WriterRecord { source_id: record.source_id(), speaker: record.speaker_label(), content: record.content.clone() }
    }

    /// The JSON line, without a line end: Python `json.dumps(…, ensure_ascii=False,
    /// separators=(",", ":"))` with U+2028 and U+2029 escaped, so that the line holds
    /// no character any line splitter could break on.
    pub fn to_json_line(&self) -> String {
        let mut out = String::with_capacity(self.source_id.len() + self.speaker.len() + self.content.len() + 40);
        out.push_str("{\"ref\":");
        push_json_string(&mut out, &self.source_id);
        out.push_str(",\"speaker\":");
        push_json_string(&mut out, &self.speaker);
        out.push_str(",\"content\":");
        push_json_string(&mut out, &self.content);
        out.push('}');
        // The raw separators can only come from string values, so replacing them
        // afterwards is the same as escaping them inside the strings.
        if out.contains(['\u{2028}', '\u{2029}']) {
            out = out.replace('\u{2028}', "\\u2028").replace('\u{2029}', "\\u2029");
        }
        out
    }

    /// Decode one line: a JSON object with exactly the string members `ref`,
    /// `speaker` and `content` (`ARCHIVE_INVALID_WRITER_RECORD` otherwise).
    pub fn from_json_line(line: &str) -> Result<Self, Error> {
        let invalid = |why: &str| Error::new(ErrorCode::InvalidWriterRecord, format!("invalid writer record: {why}"));
        let value: Value = serde_json::from_str(line).map_err(|e| invalid("not JSON").with_source(e))?;
        let Value::Object(mut object) = value else {
            return Err(invalid("not a JSON object"));
        };
        let mut take = |key: &str| match object.remove(key) {
            Some(Value::String(text)) => Ok(text),
            Some(_) => Err(invalid(&format!("`{key}` is not a string"))),
            None => Err(invalid(&format!("`{key}` is missing"))),
        };
        let record = WriterRecord { source_id: take("ref")?, speaker: take("speaker")?, content: take("content")? };
        if let Some(extra) = object.keys().next() {
            return Err(invalid(&format!("unexpected member `{extra}`")));
        }
        Ok(record)
    }
}

/// The date of an online batch: the first 10 characters of the timestamp of the last
/// record (in batch order) that has a non-empty one, else [`UNDATED`].
pub fn observed_date(records: &[SourceRecord]) -> String {
    records
        .iter()
        .rev()
        .find_map(|record| record.timestamp.as_deref().filter(|ts| !ts.is_empty()))
        .map_or_else(|| UNDATED.to_owned(), |ts| ts.chars().take(10).collect())
}

/// One observed section: `## Observed <date>`, an empty line, then one JSON line per
/// record, the last without a line end. Join several sections with one empty line.
pub fn render_observed_section(date: &str, records: &[WriterRecord]) -> String {
    let mut out = format!("## Observed {date}\n\n");
    for (n, record) in records.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        out.push_str(&record.to_json_line());
    }
    out
}

/// The observed section of an online batch: dated by [`observed_date`], one line per
/// record in batch order.
pub fn render_observed_batch(records: &[SourceRecord]) -> String {
    let lines: Vec<WriterRecord> = records.iter().map(WriterRecord::from_source).collect();
    render_observed_section(&observed_date(records), &lines)
}
