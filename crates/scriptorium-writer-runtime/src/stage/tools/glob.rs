//! `Glob` (spec 02 §10.4): the stage's files and directories matching a recursive glob,
//! at most [`GLOB_LIMIT`] sorted relative paths (directories end in `/`).
//!
//! The pattern is matched against the whole relative path, as Python's `Path.glob`
//! does: `*` and `?` stay within one component, `**` spans any number of them, `[…]`
//! (`[!…]` negated) is a character class and `{a,b}` an alternation. It is translated to
//! a regular expression, so matching is linear in the path, whatever the pattern.

use std::collections::BTreeSet;

use regex::Regex;

use super::{Args, GLOB_LIMIT, ToolError};
use crate::stage::{Stage, prefixes};

/// The longest pattern accepted, in bytes.
const MAX_PATTERN_BYTES: usize = 4096;

/// The compiled size a pattern may reach.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

impl Stage {
    pub(super) fn tool_glob(&mut self, args: &Args<'_>) -> Result<String, ToolError> {
        let pattern = args.string("pattern")?;
        let regex = compile(pattern)?;
        let mut matched: BTreeSet<String> = BTreeSet::new();
        let mut dirs: BTreeSet<&str> = BTreeSet::new();
        // Only the files below the pattern's literal leading directories can match.
        let base = literal_dir(pattern);
        let candidates: Vec<&str> =
            if base.is_empty() { self.live_files().collect() } else { self.files_under(&base).collect() };
        for file in candidates {
            if regex.is_match(file) {
                matched.insert(file.to_owned());
            }
            for dir in prefixes(file).filter(|prefix| *prefix != file) {
                dirs.insert(dir);
            }
        }
        for dir in dirs {
            if regex.is_match(dir) {
                matched.insert(format!("{dir}/"));
            }
        }
        if matched.is_empty() {
            return Ok(format!("No files match {pattern:?}."));
        }
        let total = matched.len();
        let mut out: Vec<String> = matched.into_iter().take(GLOB_LIMIT).collect();
        if total > GLOB_LIMIT {
            out.push(format!("[{} more paths not shown; use a narrower pattern]", total - GLOB_LIMIT));
        }
        Ok(out.join("\n"))
    }
}

/// The leading components of `pattern` that hold no glob syntax and are followed by more,
/// joined (`topics/people` for `topics/people/*.md`); empty when there are none.
fn literal_dir(pattern: &str) -> String {
    let pattern = pattern.trim_start_matches("./");
    let mut parts: Vec<&str> = pattern.split('/').collect();
    parts.pop();
    let literal: Vec<&str> = parts
        .into_iter()
        .take_while(|part| !part.is_empty() && *part != "." && !part.contains(['*', '?', '[', '{', '}', ',', ']']))
        .collect();
    literal.join("/")
}

/// The anchored regular expression of a glob pattern.
pub(crate) fn compile(pattern: &str) -> Result<Regex, ToolError> {
    if pattern.is_empty() {
        return Err(ToolError::pattern("the pattern is empty"));
    }
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(ToolError::pattern("the pattern is too long"));
    }
    if pattern.starts_with('/') {
        return Err(ToolError::pattern("patterns are relative to the workspace root"));
    }
    let source = format!("^{}$", translate(pattern));
    regex::RegexBuilder::new(&source)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(ToolError::pattern)
}

/// The regular expression of `pattern`, unanchored. `./` components are dropped.
fn translate(pattern: &str) -> String {
    let pattern = pattern.trim_start_matches("./");
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut at = 0;
    let mut braces = 0usize;
    while let Some(&c) = chars.get(at) {
        at += 1;
        match c {
            '*' if chars.get(at) == Some(&'*') => {
                at += 1;
                if chars.get(at) == Some(&'/') {
                    at += 1;
                    // Zero or more whole components.
                    out.push_str("(?:[^/]*/)*");
                } else {
                    out.push_str(".*");
                }
            }
            '*' => out.push_str("[^/]*"),
            '?' => out.push_str("[^/]"),
            '[' => match class(&chars, at) {
                Some((class, next)) => {
                    out.push_str(&class);
                    at = next;
                }
                None => out.push_str(r"\["),
            },
            '{' if has_close(&chars, at) => {
                braces += 1;
                out.push_str("(?:");
            }
            ',' if braces > 0 => out.push('|'),
            '}' if braces > 0 => {
                braces -= 1;
                out.push(')');
            }
            _ => out.push_str(&regex::escape(c.encode_utf8(&mut [0; 4]))),
        }
    }
    out
}

/// The class `[…]` whose content starts at `at`, and the index after its `]`.
fn class(chars: &[char], mut at: usize) -> Option<(String, usize)> {
    let mut out = String::from("[");
    if matches!(chars.get(at), Some('!' | '^')) {
        out.push('^');
        at += 1;
    }
    let start = at;
    loop {
        let c = *chars.get(at)?;
        at += 1;
        match c {
            // A `]` first is literal, as in shell globs.
            ']' if at - 1 > start => break,
            '/' => return None,
            '-' => out.push('-'),
            _ => out.push_str(&regex::escape(c.encode_utf8(&mut [0; 4]))),
        }
    }
    // A class never matches the separator.
    if out.starts_with("[^") {
        out.push('/');
    }
    out.push(']');
    Some((out, at))
}

/// Whether a `}` follows before the end of the pattern.
fn has_close(chars: &[char], at: usize) -> bool {
    chars.get(at..).is_some_and(|rest| rest.contains(&'}'))
}
