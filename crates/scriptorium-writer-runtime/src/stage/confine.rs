//! The path rules of the writer stage's tools (spec 02 §10.4): what a tool path may
//! spell before the stage looks at its own state (links, case aliases).
//!
//! The transaction's [`workspace_relative`] does the normalization and refuses absolute
//! paths, `..` and the internal names, so the stage and `memory_update` read a path the
//! same way; the stage adds what a model-chosen path must not do on top.

use scriptorium_archive_format::collision_key;
use scriptorium_transaction::{
    ErrorCode as TxCode, SUPERSEDED_DIR, TopicPath, is_hidden_component, workspace_relative,
};

use super::tools::ToolError;

/// The longest tool path accepted, in bytes (Linux `PATH_MAX` is 4096; a topic path is short).
pub(crate) const MAX_PATH_BYTES: usize = 1024;

/// The longest path component accepted, in bytes (`NAME_MAX`).
pub(crate) const MAX_COMPONENT_BYTES: usize = 255;

/// The top-level directory the stage never shows.
const SOURCES: &str = "sources";

/// Normalize a tool path naming something to read (or the root, as `""`): relative to the
/// stage root, no `..`, no hidden or internal component (in any case), not under
/// `sources/` (in any case), no control character.
pub(crate) fn stage_path(raw: &str) -> Result<String, ToolError> {
    if raw.len() > MAX_PATH_BYTES {
        return Err(ToolError::invalid_path(raw, "the path is too long"));
    }
    if raw.chars().any(char::is_control) {
        return Err(ToolError::invalid_path(raw, "the path contains a control character"));
    }
    let normalized = workspace_relative(raw).map_err(|error| match error.code() {
        TxCode::PathOutsideWorkspace => ToolError::outside(raw),
        _ => ToolError::invalid_path(raw, "the path cannot name a file"),
    })?;
    let superseded = collision_key(SUPERSEDED_DIR);
    for part in normalized.split('/').filter(|part| !part.is_empty()) {
        if part.len() > MAX_COMPONENT_BYTES {
            return Err(ToolError::invalid_path(raw, "a path component is too long"));
        }
        // `.Git`, `MEMORY-superseded`: hidden on a case-insensitive file system too.
        if is_hidden_component(part) || collision_key(part) == superseded {
            return Err(ToolError::outside(raw));
        }
    }
    let first = normalized.split('/').next().unwrap_or_default();
    if collision_key(first) == SOURCES {
        return Err(ToolError::sources(raw));
    }
    Ok(normalized)
}

/// Normalize a tool path naming a file to write: [`stage_path`], then a topic file
/// (`topics/**.md`), the only files an edit may change.
pub(crate) fn writable_path(raw: &str) -> Result<String, ToolError> {
    let normalized = stage_path(raw)?;
    match TopicPath::new(&normalized) {
        Ok(path) => Ok(path.into_string()),
        Err(_) => Err(ToolError::read_only(raw)),
    }
}

#[cfg(test)]
mod tests;
