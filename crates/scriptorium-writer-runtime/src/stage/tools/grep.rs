//! `Grep` (spec 02 §10.4): lines of the stage's files matching a regular expression,
//! as `path:line:text` (at most [`GREP_LINE_CHARS`] characters of text), at most
//! [`GREP_LIMIT`] matches, files in path order. `path` limits the search to one file or
//! directory. The `regex` crate matches in linear time, so no pattern can stall a run.

use super::{Args, GREP_LIMIT, GREP_LINE_CHARS, ToolError};
use crate::stage::Stage;
use crate::stage::confine::stage_path;

/// The longest pattern accepted, in bytes.
const MAX_PATTERN_BYTES: usize = 4096;

/// The compiled size a pattern may reach.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

impl Stage {
    pub(super) fn tool_grep(&mut self, args: &Args<'_>) -> Result<String, ToolError> {
        let pattern = args.string("pattern")?;
        if pattern.len() > MAX_PATTERN_BYTES {
            return Err(ToolError::pattern("the pattern is too long"));
        }
        let regex = regex::RegexBuilder::new(pattern)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map_err(ToolError::pattern)?;
        let scope = match args.optional_string("path")? {
            Some(raw) => {
                let path = stage_path(raw)?;
                self.check_blocked(&path)?;
                if !self.is_file(&path) && !self.is_dir(&path) {
                    return Err(ToolError::not_found(&path));
                }
                path
            }
            None => String::new(),
        };
        let mut files = self.files_at(&scope);
        files.sort_by(|a, b| crate::stage::component_order(a, b));
        let mut out = Vec::new();
        let mut more = false;
        'files: for file in &files {
            let bytes = self.read(file)?;
            let text = String::from_utf8_lossy(&bytes);
            for (index, line) in text.split('\n').enumerate() {
                let line = line.strip_suffix('\r').unwrap_or(line);
                if !regex.is_match(line) {
                    continue;
                }
                if out.len() == GREP_LIMIT {
                    more = true;
                    break 'files;
                }
                let shown: String = line.chars().take(GREP_LINE_CHARS).collect();
                out.push(format!("{file}:{}:{shown}", index + 1));
            }
        }
        if out.is_empty() {
            return Ok(format!("No lines match {pattern:?}."));
        }
        if more {
            out.push(format!("[stopped at {GREP_LIMIT} matches; use a narrower pattern or path]"));
        }
        Ok(out.join("\n"))
    }
}
