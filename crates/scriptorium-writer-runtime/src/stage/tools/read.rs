//! `Read` (spec 02 §10.4): an existing file of the stage as UTF-8 text (lossy), cut at
//! [`READ_LIMIT_CHARS`] characters with a marker that says so.

use super::{Args, READ_LIMIT_CHARS, ToolError};
use crate::stage::Stage;
use crate::stage::confine::stage_path;

impl Stage {
    pub(super) fn tool_read(&mut self, args: &Args<'_>) -> Result<String, ToolError> {
        let raw = args.string("file_path")?;
        let path = stage_path(raw)?;
        if path.is_empty() {
            return Err(ToolError::not_a_file(raw));
        }
        self.check_blocked(&path)?;
        let bytes = self.read(&path)?;
        Ok(truncated(&String::from_utf8_lossy(&bytes)))
    }
}

/// `text`, or its first [`READ_LIMIT_CHARS`] characters and a marker.
pub(crate) fn truncated(text: &str) -> String {
    match text.char_indices().nth(READ_LIMIT_CHARS) {
        None => text.to_owned(),
        Some((at, _)) => {
            let total = text.chars().count();
            let head = text.get(..at).unwrap_or_default();
            format!("{head}\n[truncated: showing the first {READ_LIMIT_CHARS} of {total} characters]")
        }
    }
}
