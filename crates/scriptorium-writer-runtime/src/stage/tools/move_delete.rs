//! `Move` and `Delete`: what the reference's shell was used for (decision "writer stage
//! tools"). Both take a topic file or a directory of topic files; a directory moves or
//! goes with everything in it. A move never overwrites.

use super::{Args, ToolError};
use crate::stage::Stage;
use crate::stage::confine::{stage_path, writable_path};

impl Stage {
    pub(super) fn tool_move(&mut self, args: &Args<'_>) -> Result<String, ToolError> {
        let from_raw = args.string("source_path")?;
        let to_raw = args.string("destination_path")?;
        let from = self.existing_target(from_raw)?;
        let to = stage_path(to_raw)?;
        if to == from {
            return Err(ToolError::invalid_call("source_path and destination_path name the same path"));
        }
        if to.starts_with(&format!("{from}/")) {
            return Err(ToolError::invalid_call("a directory cannot move into itself"));
        }
        if self.is_file(&to) || self.is_dir(&to) {
            return Err(ToolError::exists(&to));
        }
        let files = self.files_at(&from);
        // Check every destination before moving anything, so a refusal changes nothing.
        let mut plan = Vec::with_capacity(files.len());
        for file in &files {
            let rest = file.get(from.len()..).unwrap_or_default();
            let target = self.writable(&format!("{to}{rest}"))?;
            let bytes = self.read(file)?;
            if std::str::from_utf8(&bytes).is_err() {
                return Err(ToolError::not_utf8(file));
            }
            plan.push((file.clone(), target, bytes));
        }
        for (file, target, bytes) in &plan {
            self.write(target, bytes)?;
            self.delete(file)?;
        }
        Ok(format!("Moved {from} to {to} ({} {})", plan.len(), files_noun(plan.len())))
    }

    pub(super) fn tool_delete(&mut self, args: &Args<'_>) -> Result<String, ToolError> {
        let raw = args.string("path")?;
        let path = self.existing_target(raw)?;
        let files = self.files_at(&path);
        for file in &files {
            self.delete(file)?;
        }
        Ok(format!("Deleted {path} ({} {})", files.len(), files_noun(files.len())))
    }

    /// An existing topic file or directory to move or delete: confined, not the root,
    /// not through a link, and holding only topic files.
    fn existing_target(&self, raw: &str) -> Result<String, ToolError> {
        let path = stage_path(raw)?;
        if path.is_empty() {
            return Err(ToolError::read_only(raw));
        }
        self.check_blocked(&path)?;
        if self.is_file(&path) {
            return writable_path(&path);
        }
        if !self.is_dir(&path) {
            return Err(ToolError::not_found(&path));
        }
        if let Some(file) = self.files_under(&path).find(|file| writable_path(file).is_err()) {
            return Err(ToolError::read_only(file));
        }
        Ok(path)
    }
}

fn files_noun(count: usize) -> &'static str {
    if count == 1 { "file" } else { "files" }
}
