//! The shape checks of `memory_changes` (spec 02 §4.2, Form C): each op takes exactly
//! its listed fields, and every value is checked before any topic text is touched.

use std::collections::BTreeSet;

use scriptorium_topic_markdown::{ItemKind, PartialDate, TopicDocument};
use serde_json::{Map, Value};

use super::{Destination, Position, RecordEvidence, RecordOp, RecordSource};
use crate::error::{Error, ErrorCode};
use crate::paths::TopicPath;

/// At most this many operations per call.
pub const MAX_RECORD_OPS: usize = 64;

/// At most this many UTF-8 bytes of string values across all operations.
pub const MAX_RECORD_PAYLOAD_BYTES: usize = 512_000;

/// At most this many heading levels (Markdown has six).
const MAX_HEADINGS: usize = 6;

/// The time message, as the reference words it (vector `err-invalid-time`).
const TIME_RULE: &str = "must be null or YYYY, YYYY-MM, or YYYY-MM-DD";

fn invalid(message: impl Into<Box<str>>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

/// Parse and check the `memory_changes` array.
///
/// Errors: `INVALID_ARGUMENT` for a non-list, an empty list, more than
/// [`MAX_RECORD_OPS`] items or [`MAX_RECORD_PAYLOAD_BYTES`] of strings, an unknown op,
/// an unknown or missing field, or a bad value; a destination path outside `topics/**.md`
/// fails with the path rule's own code (`PATH_OUTSIDE_WORKSPACE`, `READ_ONLY_PATH`).
pub fn parse_record_ops(value: &Value) -> Result<Vec<RecordOp>, Error> {
    let Some(items) = value.as_array() else {
        return Err(invalid("memory_changes must be a list"));
    };
    if items.is_empty() {
        return Err(invalid("memory_changes must not be empty"));
    }
    if items.len() > MAX_RECORD_OPS {
        return Err(invalid(format!("memory_changes has more than {MAX_RECORD_OPS} operations")));
    }
    if items.iter().map(string_bytes).sum::<usize>() > MAX_RECORD_PAYLOAD_BYTES {
        return Err(invalid(format!("memory_changes strings exceed {MAX_RECORD_PAYLOAD_BYTES} bytes")));
    }
    items.iter().enumerate().map(|(n, item)| parse_op(&format!("memory_changes[{n}]"), item)).collect()
}

/// The UTF-8 bytes of every string inside `value` (keys excluded: they are field names).
fn string_bytes(value: &Value) -> usize {
    match value {
        Value::String(text) => text.len(),
        Value::Array(items) => items.iter().map(string_bytes).sum(),
        Value::Object(fields) => fields.values().map(string_bytes).sum(),
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

fn parse_op(at: &str, item: &Value) -> Result<RecordOp, Error> {
    let Some(fields) = item.as_object() else {
        return Err(invalid(format!("{at} must be an object")));
    };
    let op = match fields.get("op") {
        Some(Value::String(op)) => op.as_str(),
        Some(_) => return Err(invalid(format!("{at}.op must be a string"))),
        None => return Err(invalid(format!("{at}.op is required"))),
    };
    let allowed: &[&str] = match op {
        "create_record" => &["op", "content", "time", "source_refs", "sources", "destination"],
        "create" => &["op", "content", "time", "source_refs", "sources", "topic_path", "headings"],
        "update_record" | "update" => &["op", "memory_id", "content", "time", "source_refs", "sources"],
        "delete_record" | "delete" => &["op", "memory_id"],
        "move_records" => &["op", "memory_ids", "destination"],
        other => return Err(invalid(format!("{at}.op is not a known operation: {other}"))),
    };
    known_fields(at, fields, allowed)?;
    match op {
        "create_record" => Ok(RecordOp::Create {
            content: content(at, fields)?,
            evidence: evidence(at, fields)?,
            destination: destination(&format!("{at}.destination"), required(at, fields, "destination")?)?,
        }),
        "create" => {
            let headings = match fields.get("headings") {
                Some(value) => headings(&format!("{at}.headings"), value)?,
                None => Vec::new(),
            };
            let topic_path = topic_path(&format!("{at}.topic_path"), required(at, fields, "topic_path")?)?;
            Ok(RecordOp::Create {
                content: content(at, fields)?,
                evidence: evidence(at, fields)?,
                destination: Destination { topic_path, headings, position: Position::End },
            })
        }
        "update_record" | "update" => Ok(RecordOp::Update {
            memory_id: id(&format!("{at}.memory_id"), required(at, fields, "memory_id")?)?,
            content: content(at, fields)?,
            evidence: evidence(at, fields)?,
        }),
        "delete_record" | "delete" => {
            Ok(RecordOp::Delete { memory_id: id(&format!("{at}.memory_id"), required(at, fields, "memory_id")?)? })
        }
        _ => Ok(RecordOp::Move {
            memory_ids: ids(&format!("{at}.memory_ids"), required(at, fields, "memory_ids")?)?,
            destination: destination(&format!("{at}.destination"), required(at, fields, "destination")?)?,
        }),
    }
}

/// Refuse the first field (in key order) that the op does not list.
fn known_fields(at: &str, fields: &Map<String, Value>, allowed: &[&str]) -> Result<(), Error> {
    match fields.keys().find(|key| !allowed.contains(&key.as_str())) {
        Some(unknown) => Err(invalid(format!("{at} has unknown field: {unknown}"))),
        None => Ok(()),
    }
}

fn required<'v>(at: &str, fields: &'v Map<String, Value>, key: &str) -> Result<&'v Value, Error> {
    fields.get(key).ok_or_else(|| invalid(format!("{at}.{key} is required")))
}

/// A non-blank single-token string, stripped.
fn id(at: &str, value: &Value) -> Result<String, Error> {
    match value.as_str().map(str::trim) {
        Some(text) if !text.is_empty() && !text.contains(char::is_whitespace) => Ok(text.to_owned()),
        _ => Err(invalid(format!("{at} must be a non-empty id string"))),
    }
}

fn ids(at: &str, value: &Value) -> Result<Vec<String>, Error> {
    match value.as_array() {
        Some(items) if !items.is_empty() => {
            items.iter().enumerate().map(|(n, item)| id(&format!("{at}[{n}]"), item)).collect()
        }
        _ => Err(invalid(format!("{at} must be a non-empty list of ids"))),
    }
}

/// `content`: exactly one paragraph of prose, with no citation and no block id, so the
/// op's own footnote and the normalizer's id are the only ones it ends up with.
fn content(at: &str, fields: &Map<String, Value>) -> Result<String, Error> {
    let at = format!("{at}.content");
    let Some(text) = required_in(&at, fields.get("content"))?.as_str() else {
        return Err(invalid(format!("{at} must be a string")));
    };
    let text = text.trim();
    if text.is_empty() {
        return Err(invalid(format!("{at} must not be blank")));
    }
    if text.contains("[^") {
        return Err(invalid(format!("{at} must not contain footnote citations")));
    }
    let document = TopicDocument::from_text("topics/content.md", text);
    let [item] = document.items() else {
        return Err(invalid(format!("{at} must be exactly one paragraph")));
    };
    match &item.kind {
        ItemKind::Paragraph(paragraph) if paragraph.ids.is_empty() && paragraph.invalid_id.is_none() => {
            Ok(text.to_owned())
        }
        ItemKind::Paragraph(_) => Err(invalid(format!("{at} must not end with a block id"))),
        ItemKind::Heading { .. } => Err(invalid(format!("{at} must not contain a heading line"))),
        _ => Err(invalid(format!("{at} must be exactly one paragraph"))),
    }
}

fn required_in<'v>(at: &str, value: Option<&'v Value>) -> Result<&'v Value, Error> {
    value.ok_or_else(|| invalid(format!("{at} is required")))
}

/// `time` plus exactly one of `source_refs` or `sources`.
fn evidence(at: &str, fields: &Map<String, Value>) -> Result<RecordEvidence, Error> {
    let time = match required(at, fields, "time")? {
        Value::Null => "undated".to_owned(),
        Value::String(text) if text.trim() == "undated" || PartialDate::parse(text.trim()).is_some() => {
            text.trim().to_owned()
        }
        _ => return Err(invalid(format!("{at}.time {TIME_RULE}"))),
    };
    let sources = match (fields.get("source_refs"), fields.get("sources")) {
        (Some(refs), None) => source_refs(&format!("{at}.source_refs"), refs)?,
        (None, Some(sources)) => source_objects(&format!("{at}.sources"), sources)?,
        _ => return Err(invalid(format!("{at} needs exactly one of source_refs or sources"))),
    };
    let mut seen = BTreeSet::new();
    if let Some(twice) = sources.iter().find(|s| !seen.insert(s.source.as_str())) {
        return Err(invalid(format!("{at} cites a source twice: {}", twice.source)));
    }
    Ok(RecordEvidence { time, sources })
}

fn source_refs(at: &str, value: &Value) -> Result<Vec<RecordSource>, Error> {
    let Some(items) = value.as_array().filter(|items| !items.is_empty()) else {
        return Err(invalid(format!("{at} must be a non-empty list of source ids")));
    };
    items
        .iter()
        .enumerate()
        .map(|(n, item)| {
            let source = source_id(&format!("{at}[{n}]"), item)?;
            Ok(RecordSource { label: source.clone(), source })
        })
        .collect()
}

fn source_objects(at: &str, value: &Value) -> Result<Vec<RecordSource>, Error> {
    let Some(items) = value.as_array().filter(|items| !items.is_empty()) else {
        return Err(invalid(format!("{at} must be a non-empty list of {{source, label}} objects")));
    };
    let mut out = Vec::with_capacity(items.len());
    for (n, item) in items.iter().enumerate() {
        let at = format!("{at}[{n}]");
        let Some(fields) = item.as_object() else {
            return Err(invalid(format!("{at} must be an object with source and label")));
        };
        known_fields(&at, fields, &["source", "label"])?;
        let source = source_id(&format!("{at}.source"), required(&at, fields, "source")?)?;
        let label = match required(&at, fields, "label")?.as_str().map(str::trim) {
            Some(label) if !label.is_empty() && !label.contains(['\n', '\r', '[', ']']) => label.to_owned(),
            _ => return Err(invalid(format!("{at}.label must be a non-empty single-line string without brackets"))),
        };
        out.push(RecordSource { source, label });
    }
    Ok(out)
}

/// A source id is written as a link target, so it may hold no whitespace or parenthesis.
fn source_id(at: &str, value: &Value) -> Result<String, Error> {
    match value.as_str().map(str::trim) {
        Some(text) if !text.is_empty() && !text.contains(|c: char| c.is_whitespace() || c == '(' || c == ')') => {
            Ok(text.to_owned())
        }
        _ => Err(invalid(format!("{at} must be a non-empty source id string"))),
    }
}

fn destination(at: &str, value: &Value) -> Result<Destination, Error> {
    let Some(fields) = value.as_object() else {
        return Err(invalid(format!("{at} must be an object")));
    };
    known_fields(at, fields, &["topic_path", "headings", "position", "anchor_memory_id"])?;
    let topic_path = topic_path(&format!("{at}.topic_path"), required(at, fields, "topic_path")?)?;
    let headings = match fields.get("headings") {
        Some(value) => headings(&format!("{at}.headings"), value)?,
        None => Vec::new(),
    };
    let anchor = match fields.get("anchor_memory_id") {
        None | Some(Value::Null) => None,
        Some(value) => Some(id(&format!("{at}.anchor_memory_id"), value)?),
    };
    let position = match fields.get("position").map(|p| (p.as_str(), p)) {
        None | Some((Some("end"), _)) => Position::End,
        Some((Some("start"), _)) => Position::Start,
        Some((Some(side @ ("before" | "after")), _)) => {
            let Some(anchor) = anchor else {
                return Err(invalid(format!("{at}.anchor_memory_id is required for position {side}")));
            };
            return Ok(Destination {
                topic_path,
                headings,
                position: if side == "before" { Position::Before(anchor) } else { Position::After(anchor) },
            });
        }
        Some(_) => return Err(invalid(format!("{at}.position must be start, end, before or after"))),
    };
    if anchor.is_some() {
        return Err(invalid(format!("{at}.anchor_memory_id is only allowed with position before or after")));
    }
    Ok(Destination { topic_path, headings, position })
}

fn topic_path(at: &str, value: &Value) -> Result<String, Error> {
    match value.as_str() {
        Some(raw) => Ok(TopicPath::new(raw)?.into_string()),
        None => Err(invalid(format!("{at} must be a string"))),
    }
}

/// At most six non-empty single-line heading texts, stripped as the parser reads them.
fn headings(at: &str, value: &Value) -> Result<Vec<String>, Error> {
    let Some(items) = value.as_array() else {
        return Err(invalid(format!("{at} must be a list of strings")));
    };
    if items.len() > MAX_HEADINGS {
        return Err(invalid(format!("{at} must have at most {MAX_HEADINGS} entries")));
    }
    items
        .iter()
        .enumerate()
        .map(|(n, item)| match item.as_str().map(str::trim) {
            Some(text) if !text.is_empty() && !text.contains(['\n', '\r']) => Ok(text.to_owned()),
            _ => Err(invalid(format!("{at}[{n}] must be a non-empty single-line string"))),
        })
        .collect()
}
