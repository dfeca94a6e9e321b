//! `Edit` (spec 02 §10.4): an exact replacement in an existing topic file; no
//! occurrence, or more than one without `replace_all`, is an error.

use super::{Args, MAX_FILE_BYTES, ToolError};
use crate::stage::Stage;

impl Stage {
    pub(super) fn tool_edit(&mut self, args: &Args<'_>) -> Result<String, ToolError> {
        let raw = args.string("file_path")?;
        let old = args.string("old_string")?;
        let new = args.string("new_string")?;
        let replace_all = args.flag("replace_all")?;
        let path = self.writable(raw)?;
        if old.is_empty() {
            return Err(ToolError::invalid_call("old_string must not be empty; use Write to create a file"));
        }
        if !self.is_file(&path) {
            return Err(ToolError::not_found(&path));
        }
        let bytes = self.read(&path)?;
        let text = String::from_utf8(bytes).map_err(|_| ToolError::not_utf8(&path))?;
        let count = text.matches(old).count();
        match count {
            0 => return Err(ToolError::no_match(&path)),
            1 => {}
            _ if !replace_all => return Err(ToolError::ambiguous(&path, count)),
            _ => {}
        }
        // The size is known before any replacement is built.
        let grown = count.saturating_mul(new.len());
        let size = text.len().saturating_sub(count.saturating_mul(old.len())).saturating_add(grown);
        if size > MAX_FILE_BYTES {
            return Err(ToolError::too_large(&path));
        }
        let edited = if replace_all { text.replace(old, new) } else { text.replacen(old, new, 1) };
        self.write(&path, edited.as_bytes())?;
        let noun = if count == 1 { "occurrence" } else { "occurrences" };
        Ok(format!("Edited {path}: replaced {count} {noun}"))
    }
}
