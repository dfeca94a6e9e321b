//! Form B of spec 02 §4.2: whole-file `changes` (`write` | `delete`), parsed with their
//! path rules and deduplicated by normalized path, then applied to the stage.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::{Error, ErrorCode};
use crate::patch::MAX_PATCH_BYTES;
use crate::paths::TopicPath;
use crate::update::request::invalid;

/// At most this many changes (or record operations) per call.
pub(crate) const MAX_CHANGES: usize = 64;

/// The fields a change item may carry.
const FIELDS: [&str; 3] = ["path", "action", "content"];

/// One whole-file change: new bytes, or `None` to delete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileChange {
    /// The topic file.
    pub path: TopicPath,
    /// The new content, or `None` to delete the file.
    pub content: Option<String>,
}

/// Parse the `changes` list. Later items for the same normalized path replace earlier
/// ones (the reference applies them in order to one stage, so the last one wins).
pub(crate) fn parse_changes(value: &Value) -> Result<Vec<FileChange>, Error> {
    let items = value.as_array().ok_or_else(|| invalid("changes must be a list"))?;
    if items.is_empty() {
        return Err(invalid("changes must not be empty"));
    }
    if items.len() > MAX_CHANGES {
        return Err(invalid(format!("at most {MAX_CHANGES} changes are allowed")).with_detail("count", items.len()));
    }
    let mut by_path: BTreeMap<TopicPath, usize> = BTreeMap::new();
    let mut changes: Vec<FileChange> = Vec::with_capacity(items.len());
    let mut payload = 0;
    for (index, item) in items.iter().enumerate() {
        let change = parse_item(index, item)?;
        payload += change.content.as_ref().map_or(0, String::len);
        match by_path.get(&change.path).and_then(|&slot| changes.get_mut(slot)) {
            Some(earlier) => *earlier = change,
            None => {
                by_path.insert(change.path.clone(), changes.len());
                changes.push(change);
            }
        }
    }
    if payload > MAX_PATCH_BYTES {
        return Err(invalid(format!("changes content exceeds {MAX_PATCH_BYTES} bytes")).with_detail("bytes", payload));
    }
    Ok(changes)
}

fn parse_item(index: usize, item: &Value) -> Result<FileChange, Error> {
    let object = item.as_object().ok_or_else(|| invalid(format!("changes[{index}] must be an object")))?;
    if let Some(unknown) = object.keys().find(|key| !FIELDS.contains(&key.as_str())) {
        return Err(invalid(format!("changes[{index}] has unknown field: {unknown}")));
    }
    let path = match object.get("path") {
        Some(Value::String(path)) => TopicPath::new(path)?,
        _ => return Err(invalid(format!("changes[{index}].path must be a string"))),
    };
    let content = object.get("content");
    match object.get("action").and_then(Value::as_str) {
        Some("write") => match content {
            Some(Value::String(text)) => Ok(FileChange { path, content: Some(text.clone()) }),
            _ => Err(invalid(format!("changes[{index}].content must be a string for write"))),
        },
        Some("delete") if content.is_none() => Ok(FileChange { path, content: None }),
        Some("delete") => Err(invalid(format!("changes[{index}].content is not allowed for delete"))),
        _ => Err(invalid(format!("changes[{index}].action must be write or delete"))),
    }
}

/// Apply the changes to the staged topics; returns the paths they touched.
pub(crate) fn apply_changes(
    changes: &[FileChange],
    topics: &mut BTreeMap<String, Vec<u8>>,
) -> Result<Vec<String>, Error> {
    let mut touched = Vec::with_capacity(changes.len());
    for change in changes {
        let path = change.path.as_str();
        match &change.content {
            Some(text) => {
                topics.insert(path.to_owned(), text.clone().into_bytes());
            }
            None => {
                if topics.remove(path).is_none() {
                    return Err(Error::new(ErrorCode::PatchConflict, "change deletes a file that does not exist")
                        .with_path(path));
                }
            }
        }
        touched.push(path.to_owned());
    }
    Ok(touched)
}
