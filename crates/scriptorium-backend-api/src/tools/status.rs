//! `memory_status` (spec 02 §7, §2.11): the workspace at a glance as pretty JSON, in the
//! spec's key order. Relations are counted as links, not as the file's two top-level
//! keys (decision 7).

use std::path::Path;

use scriptorium_topic_markdown::TopicDocument;
use scriptorium_transaction::FileClass;
use scriptorium_writer_runtime::read_status;
use serde_json::Value;

use super::output::tx_error;
use super::{Caller, ToolSpec};
use crate::local::Host;
use crate::tier::Capability;

pub(super) const SPEC: ToolSpec = ToolSpec {
    name: "memory_status",
    description: "Show the state of long-term memory as JSON: its revision, how many topic files, blocks, source \
files and timeline files it holds, whether core.md exists, and the background writer's last outcome and how many \
conversation turns it has not written yet.",
    input_schema: r#"{"type":"object","properties":{}}"#,
    max_chars: 8000,
    capability: Capability::MemoryRead,
};

/// The derived view listing every unit and its block links (spec 01 §8.3).
const RELATIONS: &str = "relations.json";
/// The derived view of recent units, one per line (spec 01 §8.2).
const RECENT: &str = "recent_events.jsonl";

pub(super) fn run(host: &Host<'_>, _arguments: &Value, _caller: &Caller) -> String {
    let workspace = host.warm.runtime.workspace();
    let id = workspace.workspace_id();
    let name = if id.is_empty() { "workspace" } else { id };
    let revision = match host.warm.revision() {
        Ok(revision) => revision,
        Err(error) => return tx_error(&error),
    };
    let head = [("workspace", Value::from(name).to_string()), ("revision", Value::from(revision.as_str()).to_string())];
    let counted = || host.warm.listed(host.root).map(|listed| counts(host.root, &listed.files));
    match host.warm.status_counts(counted) {
        Ok(counts) => {
            let fields: Vec<_> = head.into_iter().chain(counts.iter().cloned()).chain([writer(host)]).collect();
            pretty_object(&fields)
        }
        // The spec's fallback: what is known for sure, nothing guessed.
        Err(_) => pretty_object(&head),
    }
}

/// The fields after `workspace` and `revision` that the visible files decide, rendered
/// (kept while the watcher vouches that none changed); `files` is every visible file with its class.
pub(crate) fn counts(root: &Path, files: &[(String, FileClass)]) -> Vec<(&'static str, String)> {
    let visible = || files.iter();
    let topics: Vec<&str> =
        visible().filter(|(_, class)| *class == FileClass::Topic).map(|(path, _)| path.as_str()).collect();
    let sources = visible().filter(|(_, class)| *class == FileClass::Source).count();
    let timeline = visible().filter(|(path, _)| path.starts_with("timeline/")).count();
    let (blocks, relations) = match relation_counts(root) {
        Some(counts) => counts,
        None => (topics.iter().map(|path| units_in(root, path)).sum(), 0),
    };
    let recent = std::fs::read(root.join(RECENT))
        .map(|bytes| String::from_utf8_lossy(&bytes).lines().filter(|line| !line.trim().is_empty()).count())
        .unwrap_or(0);
    let core_exists = std::fs::symlink_metadata(root.join("core.md")).is_ok_and(|meta| meta.is_file());
    vec![
        ("topic_files", topics.len().to_string()),
        ("blocks", blocks.to_string()),
        ("source_files", sources.to_string()),
        ("timeline_files", timeline.to_string()),
        ("recent_events", recent.to_string()),
        ("relations", relations.to_string()),
        ("core_exists", core_exists.to_string()),
        // No embedder ships yet (decision 12): embedding search always answers EMBEDDING_UNAVAILABLE.
        ("embedding_available", false.to_string()),
    ]
}

/// The `writer` field, read afresh each call: its status and the session store change
/// without any visible file changing.
fn writer(host: &Host<'_>) -> (&'static str, String) {
    let runtime = &host.warm.runtime;
    let mut writer = read_status(runtime.workspace()).to_json();
    let pending = runtime.pending_turns().ok();
    let field = |key: &str| writer.get(key).cloned().unwrap_or(Value::Null).to_string();
    let writer_fields = [
        ("last_outcome", field("last_outcome")),
        ("last_success_at", field("last_success_at")),
        (
            "last_failure",
            serde_json::to_string_pretty(&writer.get_mut("last_failure").map_or(Value::Null, Value::take))
                .unwrap_or_default(),
        ),
        ("pending_turns", pending.map_or(Value::Null, Value::from).to_string()),
    ];
    ("writer", pretty_object(&writer_fields))
}

/// From `relations.json`: the units (every unit id is a key of `outbound`, aliases
/// included) and the relations (the block links, one per target of each unit).
/// `None` when the view is missing or not in its format.
fn relation_counts(root: &Path) -> Option<(usize, usize)> {
    let bytes = std::fs::read(root.join(RELATIONS)).ok()?;
    let view: Value = serde_json::from_slice(&bytes).ok()?;
    let outbound = view.get("outbound")?.as_object()?;
    let links = outbound.values().map(|targets| targets.as_array().map_or(0, Vec::len)).sum();
    Some((outbound.len(), links))
}

/// The units of one topic file (block ids and their merge aliases), for a workspace whose
/// views were never built.
fn units_in(root: &Path, path: &str) -> usize {
    let Ok(bytes) = std::fs::read(root.join(path)) else { return 0 };
    let text = String::from_utf8_lossy(&bytes);
    TopicDocument::from_text(path, &text).paragraphs().map(|(_, paragraph)| paragraph.ids.len()).sum()
}

/// `{ "key": value, … }` with two-space indentation in the order given; each value is
/// rendered JSON, and a multi-line one is indented to its depth.
fn pretty_object(fields: &[(&str, String)]) -> String {
    if fields.is_empty() {
        return "{}".to_owned();
    }
    let members: Vec<String> =
        fields.iter().map(|(key, value)| format!("  {}: {}", Value::from(*key), value.replace('\n', "\n  "))).collect();
    format!("{{\n{}\n}}", members.join(",\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_objects_keep_their_order_and_indent_nested_values() {
        let inner = pretty_object(&[("b", "1".to_owned()), ("a", "[\n  2\n]".to_owned())]);
        let outer = pretty_object(&[("z", "true".to_owned()), ("inner", inner)]);
        assert_eq!(outer, "{\n  \"z\": true,\n  \"inner\": {\n    \"b\": 1,\n    \"a\": [\n      2\n    ]\n  }\n}");
        let parsed: Value = serde_json::from_str(&outer).expect("valid JSON");
        assert_eq!(parsed["inner"]["a"][0], 2);
    }
}
