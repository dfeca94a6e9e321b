//! `Write` (spec 02 §10.4): create or replace a whole topic file, parents created;
//! refused under `sources/` (in any case) and outside `topics/**.md`.

use super::{Args, MAX_FILE_BYTES, ToolError};
use crate::stage::Stage;
use crate::stage::confine::writable_path;

impl Stage {
    pub(super) fn tool_write(&mut self, args: &Args<'_>) -> Result<String, ToolError> {
        let raw = args.string("file_path")?;
        let content = args.string("content")?;
        let path = self.writable(raw)?;
        if content.len() > MAX_FILE_BYTES {
            return Err(ToolError::too_large(&path));
        }
        let created = self.write(&path, content.as_bytes())?;
        let verb = if created { "Created" } else { "Replaced" };
        Ok(format!("{verb} {path} ({} bytes)", content.len()))
    }

    /// A writable path for a file that may be new: confined, not through a link, no
    /// parent that is a file, not a directory, and no case alias of an existing path.
    pub(super) fn writable(&mut self, raw: &str) -> Result<String, ToolError> {
        let path = writable_path(raw)?;
        self.check_blocked(&path)?;
        if self.is_dir(&path) {
            return Err(ToolError::not_a_file(&path));
        }
        if let Some(parent) = super::super::prefixes(&path).find(|prefix| *prefix != path && self.is_file(prefix)) {
            return Err(ToolError::not_a_file(parent));
        }
        if !self.is_file(&path) {
            self.check_alias(&path)?;
        }
        Ok(path)
    }
}
