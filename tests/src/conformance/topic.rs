//! Topic Markdown kinds: `topic_parse` (strict and lenient units, topic prose, claim
//! events), `topic_normalize` (the normalized tree and the minted id maps),
//! `fn_topic_syntax` (paragraph spans) and `fn_temporal` (date windows).
//!
//! Errors compare the reference's message with the first violation's detail: the
//! reference stops at its first error, this crate collects them all in the same order.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use scriptorium_topic_markdown::{
    Baseline, MemorySources, Mode, NormalizeOptions, ParsedTree, PartialDate, Removal, SourceResolver, TimeWindow,
    TopicEvent, Unit, Violation, normalize, paragraph_spans, parse_definition, parse_tree, split_lines, topic_events,
    topic_prose,
};

use super::{Case, Outcome, diff_json, function_of, undispatched};

pub(super) fn run(case: &Case) -> Outcome {
    Outcome::from_check(match case.kind.as_str() {
        "topic_parse" => check_parse(case),
        "topic_normalize" => check_normalize(case),
        "fn_topic_syntax" | "fn_definition" => check_syntax(case),
        "fn_temporal" => check_temporal(case),
        other => Err(format!("topic module cannot run kind `{other}`")),
    })
}

/// Every file under `dir`, keyed `prefix/<relative path>`; empty when `dir` is absent.
fn read_tree(dir: &Path, prefix: &str) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let mut files = BTreeMap::new();
    let mut pending = vec![(dir.to_path_buf(), prefix.to_owned())];
    while let Some((folder, key)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot list {}: {e}", folder.display()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = format!("{key}/{name}");
            if entry.path().is_dir() {
                pending.push((entry.path(), child));
            } else {
                let bytes = std::fs::read(entry.path()).map_err(|e| format!("cannot read {child}: {e}"))?;
                files.insert(child, bytes);
            }
        }
    }
    Ok(files)
}

fn str_field<'a>(value: &'a Value, key: &str) -> Result<&'a str, String> {
    value.get(key).and_then(Value::as_str).ok_or_else(|| format!("input without `{key}`"))
}

fn error_json(violation: Option<&Violation>) -> Value {
    json!({ "ok": false, "error": { "message": violation.map(Violation::detail).unwrap_or_default() } })
}

/// Drop informational fields (the Python exception type) from an expected value.
fn without_type(mut want: Value) -> Value {
    if let Some(error) = want.get_mut("error").and_then(Value::as_object_mut) {
        error.remove("type");
    }
    want
}

fn unit_json(unit: &Unit) -> Value {
    let evidence: Vec<Value> = unit
        .evidence
        .iter()
        .map(|e| {
            json!({
                "citation_id": e.citation_id,
                "quote": e.quote,
                "source_labels": e.source_labels,
                "source_links": e.source_links,
                "source_refs": e.source_refs,
                "when": e.when,
            })
        })
        .collect();
    json!({
        "content": unit.content,
        "created_order": unit.created_order,
        "evidence": evidence,
        "headings": unit.headings,
        "memory_id": unit.memory_id,
        "relation_targets": unit.relation_targets,
        "source_labels": unit.source_labels,
        "source_links": unit.source_links,
        "source_refs": unit.source_refs,
        "topic_path": unit.topic_path(),
        "when": unit.when,
    })
}

fn tree_json(tree: &ParsedTree) -> Value {
    match tree.violations().first() {
        Some(first) => error_json(Some(first)),
        None => json!({ "ok": true, "units": tree.units().iter().map(unit_json).collect::<Vec<_>>() }),
    }
}

/// A claim event in the retrieval index's shape, before trust resolution: the
/// speaker and trust fields are the pre-resolution constants of every topic event.
fn event_json(event: &TopicEvent) -> Value {
    json!({
        "authority_tier": null,
        "content": event.content,
        "date": event.date,
        "dates": event.dates,
        "event_id": event.event_id,
        "headings": event.headings,
        "line": event.line,
        "path": event.path,
        "principal_id": "unknown",
        "refs": event.refs,
        "speaker_display": "",
        "speaker_id": "",
        "speaker_kind": "unknown",
        "speaker_label": "",
        "speaker_trusted": false,
        "trust_state": "unknown",
        "visibility": null,
    })
}

fn sources_of(workspace: &Path) -> Result<SourceResolver<MemorySources>, String> {
    Ok(SourceResolver::new(read_tree(&workspace.join("sources"), "sources")?.into_iter().collect()))
}

fn check_parse(case: &Case) -> Result<(), String> {
    let workspace = case.dir.join(str_field(&case.input, "workspace")?);
    let topics = read_tree(&case.dir.join(str_field(&case.input, "topics_root")?), "topics")?;
    let sources = sources_of(&workspace)?;
    let strict = parse_tree(&topics, &sources, Mode::Strict);
    let lenient = parse_tree(&topics, &sources, Mode::Lenient);
    let field = |key: &str| case.expected.get(key).cloned().ok_or(format!("expected without `{key}`"));
    diff_json("strict", &tree_json(&strict), &without_type(field("strict")?))?;
    diff_json("lenient", &tree_json(&lenient), &without_type(field("lenient")?))?;
    let prose = json!({ "ok": true, "value": topic_prose(lenient.documents()) });
    diff_json("topic_prose", &prose, &field("topic_prose")?)?;
    let mut events = serde_json::Map::new();
    for document in lenient.documents() {
        let list: Vec<Value> = topic_events(document, &sources).iter().map(event_json).collect();
        events.insert(document.path().to_owned(), Value::Array(list));
    }
    diff_json("bm25_topic_events", &Value::Object(events), &field("bm25_topic_events")?)
}

fn check_normalize(case: &Case) -> Result<(), String> {
    let before = case.dir.join(str_field(&case.input, "before")?);
    let sources = sources_of(&before)?;
    let committed = read_tree(&before.join("topics"), "topics")?;
    let baseline = Baseline::from_units(parse_tree(&committed, &sources, Mode::Strict).units().iter().cloned());
    let mut staged = committed;
    if let Some(edits) = case.input.get("edits").and_then(Value::as_object) {
        for (path, file) in edits {
            match file.as_str() {
                Some(relative) => {
                    staged.insert(path.clone(), case.read(relative)?);
                }
                None => {
                    staged.remove(path);
                }
            }
        }
    }
    let allow_removed = case.input.get("allow_removed").and_then(Value::as_bool).unwrap_or(false);
    let options = NormalizeOptions::with_removal(if allow_removed { Removal::Allowed } else { Removal::Forbidden });
    let want = &case.expected;
    let result = normalize(&staged, &baseline, &sources, &options);
    let normalized = match (result, want.get("ok").and_then(Value::as_bool)) {
        (Err(violations), Some(false)) => {
            return diff_json("", &error_json(violations.first()), &without_type(want.clone()));
        }
        (Err(violations), _) => return Err(format!("normalize failed: {violations}")),
        (Ok(_), Some(false)) => return Err(format!("normalize succeeded, want error {}", want["error"])),
        (Ok(normalized), _) => normalized,
    };
    diff_json("block_id_map", &json!(normalized.block_id_map), &want["block_id_map"])?;
    diff_json("evidence_id_map", &json!(normalized.evidence_id_map), &want["evidence_id_map"])?;
    let expected_topics = want.get("topics").and_then(Value::as_object).ok_or("expected without topics")?;
    let got_paths: Vec<&String> = normalized.files.keys().collect();
    let want_paths: Vec<&String> = expected_topics.keys().collect();
    if got_paths != want_paths {
        return Err(format!("topics: got files {got_paths:?}, want {want_paths:?}"));
    }
    for (path, entry) in expected_topics {
        let expected = case.read(str_field(entry, "path")?)?;
        let got = normalized.files.get(path).map(Vec::as_slice).unwrap_or_default();
        if got != expected.as_slice() {
            return Err(format!(
                "{path}: got {:?}, want {:?}",
                String::from_utf8_lossy(got),
                String::from_utf8_lossy(&expected)
            ));
        }
    }
    Ok(())
}

fn check_syntax(case: &Case) -> Result<(), String> {
    let function = function_of(case)?;
    if !["markdown.syntax.paragraph_spans", "markdown.syntax.definition_match"].contains(&function) {
        return Err(undispatched(function));
    }
    let inputs = case.input.get("cases").and_then(Value::as_array).ok_or("input without cases")?;
    let got: Vec<Value> = inputs
        .iter()
        .map(|input| {
            let text = input.as_str().unwrap_or_default();
            match function {
                "markdown.syntax.paragraph_spans" => {
                    let lines = split_lines(text);
                    let spans: Vec<Value> =
                        paragraph_spans(&lines).into_iter().map(|s| json!([s.start, s.end, s.headings])).collect();
                    Ok(json!({ "lines": lines, "spans": spans }))
                }
                "markdown.syntax.definition_match" => Ok(parse_definition(text).map_or(Value::Null, |d| {
                    let links: Vec<Value> = d.links.iter().map(|l| json!([l.label, l.target])).collect();
                    json!({ "id": d.id, "time": d.time.as_str(), "sources": d.sources, "links": links })
                })),
                other => Err(undispatched(other)),
            }
        })
        .collect::<Result<_, _>>()?;
    diff_json("results", &Value::Array(got), &case.expected["results"])
}

fn check_temporal(case: &Case) -> Result<(), String> {
    let function = function_of(case)?;
    let known = [
        "retrieval.bm25.event_matches_time_window",
        "markdown.temporal.is_valid_temporal_value",
        "markdown.temporal.temporal_bounds",
    ];
    if !known.contains(&function) {
        return Err(undispatched(function));
    }
    let inputs = case.input.get("cases").and_then(Value::as_array).ok_or("input without cases")?;
    let results = case.expected.get("results").and_then(Value::as_array).ok_or("expected without results")?;
    let got: Vec<Value> = inputs
        .iter()
        .map(|input| {
            let text = input.as_str().unwrap_or_default();
            Ok(match function {
                "retrieval.bm25.event_matches_time_window" => {
                    let bound = |key: &str| input.get(key).and_then(Value::as_str);
                    match TimeWindow::new(bound("date_from"), bound("date_to")) {
                        Ok(window) => {
                            let dates = input.get("dates").and_then(Value::as_array).cloned().unwrap_or_default();
                            json!({ "ok": true, "value": window.matches(dates.iter().filter_map(Value::as_str)) })
                        }
                        Err(violation) => error_json(Some(&violation)),
                    }
                }
                "markdown.temporal.is_valid_temporal_value" => json!(PartialDate::parse(text).is_some()),
                "markdown.temporal.temporal_bounds" => match PartialDate::parse(text) {
                    Some(date) => {
                        let (start, end) = date.bounds();
                        json!({ "ok": true, "value": [start, end] })
                    }
                    None => json!({ "ok": false }),
                },
                other => return Err(undispatched(other)),
            })
        })
        .collect::<Result<_, String>>()?;
    let want: Vec<Value> = results.iter().cloned().map(without_type).collect();
    diff_json("results", &Value::Array(got), &Value::Array(want))
}
