//! Applying record operations to staged topic text: refusals are checked against the
//! staged tree first, then creates, updates and deletes run in order, then the moves
//! (spec 02 §4.2). The staged map changes only when every op succeeded.

use std::collections::BTreeMap;

use scriptorium_topic_markdown::{SourceLink, render_definition};

use super::check::check;
use super::edit::{
    definition_line, insert_chunk, insert_definition, paragraph_lines, remove_lines, remove_uncited_definitions,
    with_ids,
};
use super::section::insertion_point;
use super::tree::{Labels, Tree};
use super::{Destination, RecordChanges, RecordEvidence, RecordOp};
use crate::error::{Error, ErrorCode};

fn invalid(message: impl Into<Box<str>>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

fn not_found(what: &str, id: &str) -> Error {
    Error::new(ErrorCode::MemoryNotFound, format!("{what} does not exist: {id}"))
}

/// Apply `ops` (from [`super::parse_record_ops`], `new-source-*` labels already
/// substituted) to `topics`, the staged topic files by workspace-relative path.
///
/// New paragraphs carry no block id and cite a fresh local label `new-evidence-record-<n>`, with source
/// links written as plain source ids: the normalizer mints both ids and turns the
/// targets into canonical relative links. Emptied sections and files are left for the
/// normalizer to prune.
///
/// Errors: `MEMORY_NOT_FOUND` for an unknown `memory_id`, moved id or anchor;
/// `INVALID_ARGUMENT` for the refusals of spec 02 §4.2 (one id targeted twice, two
/// updates to one merged paragraph, deleted and moved ids, partial or reordered merged
/// moves, a moved anchor, an anchor elsewhere, a conflicting footnote label);
/// `INVALID_TOPIC_FORMAT` for a staged topic file that is not UTF-8. On error `topics`
/// is unchanged.
pub fn apply_record_ops(ops: &[RecordOp], topics: &mut BTreeMap<String, Vec<u8>>) -> Result<RecordChanges, Error> {
    let mut tree = Tree::load(topics)?;
    let mut changes = RecordChanges::default();
    check(ops, &tree, &mut changes)?;
    let mut labels = Labels::new(&tree);
    for op in ops {
        match op {
            RecordOp::Create { content, evidence, destination } => {
                create(&mut tree, &mut labels, content, evidence, destination)?;
            }
            RecordOp::Update { memory_id, content, evidence } => {
                update(&mut tree, &mut labels, memory_id, content, evidence)?;
            }
            RecordOp::Delete { memory_id } => delete(&mut tree, memory_id)?,
            RecordOp::Move { .. } => {}
        }
    }
    for op in ops {
        if let RecordOp::Move { memory_ids, destination } = op {
            move_records(&mut tree, memory_ids, destination)?;
        }
    }
    for path in &tree.changed {
        if let Some(document) = tree.documents.get(path) {
            topics.insert(path.clone(), document.render());
        }
    }
    changes.changed = tree.changed;
    Ok(changes)
}

/// The footnote definition line for `evidence` under `label`.
fn definition(label: &str, evidence: &RecordEvidence) -> String {
    let links: Vec<SourceLink> =
        evidence.sources.iter().map(|s| SourceLink { label: s.label.clone(), target: s.source.clone() }).collect();
    render_definition(label, &evidence.time, &links)
}

fn create(
    tree: &mut Tree,
    labels: &mut Labels,
    content: &str,
    evidence: &RecordEvidence,
    destination: &Destination,
) -> Result<(), Error> {
    let document = tree.document(&destination.topic_path);
    let (at, grown) = insertion_point(&document, destination)?;
    let mut lines = grown.unwrap_or_else(|| document.into_lines());
    let label = labels.fresh();
    let mut chunk = paragraph_lines(content, &label, &[]);
    chunk.push(String::new());
    chunk.push(definition(&label, evidence));
    insert_chunk(&mut lines, at, chunk);
    tree.set(&destination.topic_path, lines);
    Ok(())
}

fn update(
    tree: &mut Tree,
    labels: &mut Labels,
    memory_id: &str,
    content: &str,
    evidence: &RecordEvidence,
) -> Result<(), Error> {
    let (path, found) = tree.locate(memory_id).ok_or_else(|| not_found("memory_id", memory_id))?;
    let label = labels.fresh();
    let mut lines = tree.lines(&path);
    let new = paragraph_lines(content, &label, &found.paragraph.ids);
    let new_end = found.start + new.len();
    lines.splice(found.start..found.end, new);
    let old: Vec<String> = found.paragraph.cited().map(str::to_owned).collect();
    let line = definition(&label, evidence);
    match remove_uncited_definitions(&path, &mut lines, &old) {
        // The new definition takes the place of the old one it replaces.
        Some(at) => insert_definition(&mut lines, at, line),
        None => insert_chunk(&mut lines, new_end, vec![line]),
    }
    tree.set(&path, lines);
    Ok(())
}

fn delete(tree: &mut Tree, memory_id: &str) -> Result<(), Error> {
    let (path, found) = tree.locate(memory_id).ok_or_else(|| not_found("memory_id", memory_id))?;
    let mut lines = tree.lines(&path);
    if found.paragraph.ids.len() > 1 {
        // A merged paragraph loses only this alias; its prose stays with the other ids.
        let rest: Vec<String> = found.paragraph.ids.iter().filter(|id| *id != memory_id).cloned().collect();
        lines.splice(found.start..found.end, with_ids(&found.paragraph, &rest));
    } else {
        remove_lines(&mut lines, found.start, found.end);
        let cited: Vec<String> = found.paragraph.cited().map(str::to_owned).collect();
        remove_uncited_definitions(&path, &mut lines, &cited);
    }
    tree.set(&path, lines);
    Ok(())
}

/// Take each paragraph out of its file (with the definitions only it cites), then
/// insert them all, in the given order, at the destination.
fn move_records(tree: &mut Tree, memory_ids: &[String], destination: &Destination) -> Result<(), Error> {
    let mut chunk: Vec<String> = Vec::new();
    let mut definitions: BTreeMap<String, String> = BTreeMap::new();
    let mut n = 0;
    while let Some(id) = memory_ids.get(n) {
        let (path, found) = tree.locate(id).ok_or_else(|| not_found("memory_id", id))?;
        n += found.paragraph.ids.len().max(1);
        let document = tree.document(&path);
        let mut own = Vec::new();
        for cited in found.paragraph.cited() {
            if definitions.contains_key(cited) || own.iter().any(|(c, _)| c == cited) {
                continue;
            }
            if let Some(line) = definition_line(&document, cited) {
                own.push((cited.to_owned(), line));
            }
        }
        let mut lines = document.into_lines();
        let text = lines.get(found.start..found.end).map(<[String]>::to_vec).unwrap_or_default();
        remove_lines(&mut lines, found.start, found.end);
        let cited: Vec<String> = own.iter().map(|(c, _)| c.clone()).collect();
        remove_uncited_definitions(&path, &mut lines, &cited);
        tree.set(&path, lines);
        if !chunk.is_empty() {
            chunk.push(String::new());
        }
        chunk.extend(text);
        if !own.is_empty() {
            chunk.push(String::new());
            for (cited, line) in own {
                chunk.push(line.clone());
                definitions.insert(cited, line);
            }
        }
    }
    let document = tree.document(&destination.topic_path);
    for (id, line) in &definitions {
        if let Some(existing) = definition_line(&document, id) {
            if &existing != line {
                return Err(invalid(format!(
                    "footnote label {id} conflicts with an existing definition in {}",
                    destination.topic_path
                )));
            }
            // The same definition is there already (cited elsewhere too): keep one copy.
            chunk.retain(|l| l != line);
        }
    }
    // A dropped duplicate definition may leave blank lines behind: keep single ones inside.
    chunk.dedup_by(|next, previous| next.is_empty() && previous.is_empty());
    while chunk.last().is_some_and(String::is_empty) {
        chunk.pop();
    }
    let (at, grown) = insertion_point(&document, destination)?;
    let mut lines = grown.unwrap_or_else(|| document.into_lines());
    insert_chunk(&mut lines, at, chunk);
    tree.set(&destination.topic_path, lines);
    Ok(())
}
