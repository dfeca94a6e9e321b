//! The refusals of spec 02 §4.2 that depend on the whole op list (ids targeted twice,
//! deleted and moved ids, merged paragraphs, anchors), checked on the staged tree
//! before any edit, so a refused list changes nothing.

use std::collections::{BTreeMap, BTreeSet};

use super::tree::Tree;
use super::{Destination, RecordChanges, RecordOp};
use crate::error::{Error, ErrorCode};

fn invalid(message: impl Into<Box<str>>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

fn not_found(what: &str, id: &str) -> Error {
    Error::new(ErrorCode::MemoryNotFound, format!("{what} does not exist: {id}"))
}

/// The refusals that depend on the whole op list, checked before any edit.
pub(super) fn check(ops: &[RecordOp], tree: &Tree, changes: &mut RecordChanges) -> Result<(), Error> {
    let mut targeted = BTreeSet::new();
    let mut updated: BTreeMap<(String, usize), &str> = BTreeMap::new();
    for op in ops {
        let (RecordOp::Update { memory_id, .. } | RecordOp::Delete { memory_id }) = op else { continue };
        let (path, found) = tree.locate(memory_id).ok_or_else(|| not_found("memory_id", memory_id))?;
        if !targeted.insert(memory_id.as_str()) {
            return Err(invalid(format!("memory_id is targeted twice: {memory_id}")));
        }
        match op {
            RecordOp::Update { evidence, .. } => {
                if let Some(other) = updated.insert((path, found.start), memory_id) {
                    return Err(invalid(format!("two updates target one merged paragraph: {other}, {memory_id}")));
                }
                changes.declared_sources.extend(evidence.sources.iter().map(|s| s.source.clone()));
            }
            _ => {
                changes.deleted_ids.insert(memory_id.clone());
            }
        }
    }
    let mut moved = BTreeSet::new();
    for op in ops {
        let RecordOp::Move { memory_ids, .. } = op else { continue };
        let mut n = 0;
        while let Some(id) = memory_ids.get(n) {
            let (_, found) = tree.locate(id).ok_or_else(|| not_found("memory_id", id))?;
            let count = found.paragraph.ids.len();
            if memory_ids.get(n..n + count) != Some(found.paragraph.ids.as_slice()) {
                return Err(invalid(format!(
                    "move_records must move every id of a merged paragraph, in its order: {}",
                    found.paragraph.ids.join(", ")
                )));
            }
            for id in &found.paragraph.ids {
                if changes.deleted_ids.contains(id) {
                    return Err(invalid(format!("memory_id is both deleted and moved: {id}")));
                }
                if !moved.insert(id.clone()) {
                    return Err(invalid(format!("memory_id is moved twice: {id}")));
                }
            }
            n += count;
        }
    }
    for op in ops {
        let RecordOp::Create { evidence, destination, .. } = op else { continue };
        changes.declared_sources.extend(evidence.sources.iter().map(|s| s.source.clone()));
        check_anchor(tree, destination, &moved)?;
    }
    for op in ops {
        if let RecordOp::Move { destination, .. } = op {
            check_anchor(tree, destination, &moved)?;
        }
    }
    Ok(())
}

/// An anchor must exist, sit in the destination file, and not move itself.
fn check_anchor(tree: &Tree, destination: &Destination, moved: &BTreeSet<String>) -> Result<(), Error> {
    let Some(anchor) = destination.position.anchor() else { return Ok(()) };
    let (path, _) = tree.locate(anchor).ok_or_else(|| not_found("anchor_memory_id", anchor))?;
    if moved.contains(anchor) {
        return Err(invalid(format!("anchor_memory_id is itself moved: {anchor}")));
    }
    if path != destination.topic_path {
        return Err(invalid(format!("anchor_memory_id {anchor} is not in {}", destination.topic_path)));
    }
    Ok(())
}
