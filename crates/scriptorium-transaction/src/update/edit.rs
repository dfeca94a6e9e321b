//! Applying the request's one edit to the staged topics, after `new-source-…` labels
//! are replaced by the archived source ids, and working out which committed block ids
//! that edit may remove (decision "dropped block ids").

use std::collections::{BTreeMap, BTreeSet};

use scriptorium_topic_markdown::Baseline;
use serde_json::Value;

use crate::error::Error;
use crate::evidence::substitute_source_labels;
use crate::patch::Patch;
use crate::update::changes::{FileChange, apply_changes};
use crate::update::memory_changes;
use crate::update::request::Edit;

/// What applying an edit did.
#[derive(Debug, Default)]
pub(crate) struct Applied {
    /// Committed block ids the edit removes explicitly: those of whole deleted files
    /// (patch, changes) or named by delete operations (memory_changes).
    pub(crate) removable: BTreeSet<String>,
    /// Existing source ids the operations declare as evidence (memory_changes).
    pub(crate) declared_sources: BTreeSet<String>,
}

/// Apply `edit` to `staged` (the committed topics, path → bytes).
pub(crate) fn apply(
    edit: &Edit,
    source_ids: &BTreeMap<String, String>,
    baseline: &Baseline,
    staged: &mut BTreeMap<String, Vec<u8>>,
) -> Result<Applied, Error> {
    let mut deleted_files = Vec::new();
    let mut applied = Applied::default();
    match edit {
        Edit::Patch(text) => {
            let patch = Patch::parse(&substitute_source_labels(text, source_ids)?)?;
            for (path, content) in patch.apply(&*staged)?.files {
                match content {
                    Some(bytes) => {
                        staged.insert(path.into_string(), bytes);
                    }
                    None => {
                        staged.remove(path.as_str());
                        deleted_files.push(path.into_string());
                    }
                }
            }
        }
        Edit::Changes(changes) => {
            let substituted = changes
                .iter()
                .map(|change| {
                    let content = change.content.as_deref().map(|text| substitute_source_labels(text, source_ids));
                    Ok(FileChange { path: change.path.clone(), content: content.transpose()? })
                })
                .collect::<Result<Vec<_>, Error>>()?;
            apply_changes(&substituted, staged)?;
            deleted_files.extend(changes.iter().filter(|c| c.content.is_none()).map(|c| c.path.as_str().to_owned()));
        }
        Edit::MemoryChanges(ops) => {
            let ops = substitute_in_ops(ops, source_ids)?;
            let outcome = memory_changes::apply(&ops, staged)?;
            applied.removable = outcome.deleted_ids;
            applied.declared_sources = outcome.declared_sources;
        }
    }
    // Most edits delete no file: then no committed id needs looking at.
    if !deleted_files.is_empty() {
        for id in baseline.ids() {
            if baseline.unit(id).is_some_and(|unit| deleted_files.contains(&unit.path)) {
                applied.removable.insert(id.to_owned());
            }
        }
    }
    Ok(applied)
}

/// Replace labels in `source_refs[]` and `sources[].source` of every operation (spec
/// 02 §4.2); nothing else in an operation is a source reference.
fn substitute_in_ops(ops: &Value, source_ids: &BTreeMap<String, String>) -> Result<Value, Error> {
    let mut ops = ops.clone();
    let Value::Array(items) = &mut ops else { return Ok(ops) };
    for item in items.iter_mut().filter_map(Value::as_object_mut) {
        if let Some(Value::Array(refs)) = item.get_mut("source_refs") {
            for reference in refs.iter_mut() {
                if let Value::String(text) = reference {
                    *text = substitute_source_labels(text, source_ids)?;
                }
            }
        }
        if let Some(Value::Array(sources)) = item.get_mut("sources") {
            for source in sources.iter_mut().filter_map(Value::as_object_mut) {
                if let Some(Value::String(text)) = source.get_mut("source") {
                    *text = substitute_source_labels(text, source_ids)?;
                }
            }
        }
    }
    Ok(ops)
}
