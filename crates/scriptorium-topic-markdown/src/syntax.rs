//! The small regular languages of topic Markdown, matched by hand with Python `re`
//! semantics (leftmost match, greedy with backtracking, `\s` = Python whitespace).
//!
//! Each function names the reference regex it reproduces. Digits are ASCII only
//! (decision Q5); nothing else differs from the reference.

use nom::bytes::complete::{tag, take_while1};
use nom::sequence::delimited;
use nom::{IResult, Parser};

use crate::text::{is_space, lstrip, rstrip};

/// `[A-Za-z0-9-]`: a block id character.
pub(crate) fn is_block_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

/// `[A-Za-z0-9_-]`: a footnote id character.
pub(crate) fn is_footnote_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Whether `s` fully matches `[A-Za-z0-9-]+`.
pub(crate) fn is_block_id(s: &str) -> bool {
    !s.is_empty() && s.chars().all(is_block_id_char)
}

/// Whether `s` fully matches `[A-Za-z0-9_-]+`.
pub(crate) fn is_footnote_id(s: &str) -> bool {
    !s.is_empty() && s.chars().all(is_footnote_id_char)
}

/// `[^FID]` at the start of `input`.
pub(crate) fn footnote_ref(input: &str) -> IResult<&str, &str> {
    delimited(tag("[^"), take_while1(is_footnote_id_char), tag("]")).parse(input)
}

/// `lstrip(line).startswith("```")`: a fence delimiter.
pub(crate) fn is_fence(line: &str) -> bool {
    lstrip(line).starts_with("```")
}

/// `^\s*(<!--|<a\s)`: an HTML comment or anchor line.
pub(crate) fn is_markup(line: &str) -> bool {
    let rest = lstrip(line);
    rest.starts_with("<!--") || rest.strip_prefix("<a").and_then(|r| r.chars().next()).is_some_and(is_space)
}

/// `^(#{1,6})\s+(.+?)\s*$`: a heading's level and text.
pub(crate) fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = line.get(level..)?;
    let content = lstrip(after);
    let ws_len = after.len() - content.len();
    if ws_len == 0 {
        return None;
    }
    if !content.is_empty() {
        return Some((level, rstrip(content)));
    }
    // Only whitespace follows: `\s+` gives back one character to `.+?`, which needs two.
    let (last, _) = after.char_indices().next_back()?;
    if last == 0 {
        return None;
    }
    Some((level, after.get(last..)?))
}

/// One `[^FID]` found in text: byte range and id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Citation<'a> {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) id: &'a str,
}

/// Every `\[\^([A-Za-z0-9_-]+)\]` in `text`, left to right, non-overlapping.
pub(crate) fn citations(text: &str) -> Vec<Citation<'_>> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(pos) = text.get(from..).and_then(|rest| rest.find("[^")) {
        let start = from + pos;
        let rest = text.get(start..).unwrap_or_default();
        match footnote_ref(rest) {
            Ok((after, id)) => {
                let end = text.len() - after.len();
                found.push(Citation { start, end, id });
                from = end;
            }
            Err(_) => from = start + 1,
        }
    }
    found
}

/// A Markdown link `\[([^]]+)\]\(([^)]+)\)` found in text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Link<'a> {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) label: &'a str,
    pub(crate) target: &'a str,
}

/// The link starting at byte `start` of `text`, if `\[([^]]+)\]\(([^)]+)\)` matches there.
fn link_at(text: &str, start: usize) -> Option<Link<'_>> {
    let rest = text.get(start..)?.strip_prefix('[')?;
    let label_len = rest.find(']')?;
    let label = rest.get(..label_len)?;
    let after_label = rest.get(label_len + 1..)?.strip_prefix('(')?;
    let target_len = after_label.find(')')?;
    if label.is_empty() || target_len == 0 {
        return None;
    }
    let target = after_label.get(..target_len)?;
    let end = text.len() - after_label.len() + target_len + 1;
    Some(Link { start, end, label, target })
}

/// Every Markdown link in `text` (Python `finditer` of the link regex).
pub(crate) fn links(text: &str) -> Vec<Link<'_>> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(pos) = text.get(from..).and_then(|rest| rest.find('[')) {
        let start = from + pos;
        match link_at(text, start) {
            Some(link) => {
                from = link.end;
                found.push(link);
            }
            None => from = start + 1,
        }
    }
    found
}

/// A block link `\[[^]]+\]\([^)#]*#\^(mem_[A-Za-z0-9_-]+|[A-Za-z0-9-]+)\)` found in text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BlockLink<'a> {
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// Byte range of the path part (`[^)#]*`).
    pub(crate) path_start: usize,
    pub(crate) path_end: usize,
    pub(crate) target: &'a str,
}

fn block_link_at(text: &str, start: usize) -> Option<BlockLink<'_>> {
    let rest = text.get(start..)?.strip_prefix('[')?;
    let label_len = rest.find(']')?;
    if label_len == 0 {
        return None;
    }
    let path_part = rest.get(label_len + 1..)?.strip_prefix('(')?;
    let path_start = text.len() - path_part.len();
    let path_len = path_part.find([')', '#'])?;
    let after_path = path_part.get(path_len..)?.strip_prefix("#^")?;
    let id_len = if let Some(tail) = after_path.strip_prefix("mem_") {
        let n = tail.find(|c: char| !is_footnote_id_char(c)).unwrap_or(tail.len());
        if n > 0 && tail.get(n..)?.starts_with(')') { Some(4 + n) } else { None }
    } else {
        None
    };
    let id_len = match id_len {
        Some(n) => n,
        None => {
            let n = after_path.find(|c: char| !is_block_id_char(c)).unwrap_or(after_path.len());
            if n == 0 || !after_path.get(n..)?.starts_with(')') {
                return None;
            }
            n
        }
    };
    let target = after_path.get(..id_len)?;
    let target_start = text.len() - after_path.len();
    Some(BlockLink { start, end: target_start + id_len + 1, path_start, path_end: path_start + path_len, target })
}

/// Every block link in `text`, left to right.
pub(crate) fn block_links(text: &str) -> Vec<BlockLink<'_>> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(pos) = text.get(from..).and_then(|rest| rest.find('[')) {
        let start = from + pos;
        match block_link_at(text, start) {
            Some(link) => {
                from = link.end;
                found.push(link);
            }
            None => from = start + 1,
        }
    }
    found
}

/// The block-id run that ends a stripped paragraph:
/// `(?:\s+\^ID)*\s+\^(?P<id>ID)\s*$` searched leftmost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SuffixRun<'a> {
    /// Byte index where the run (its first whitespace) starts.
    pub(crate) start: usize,
    /// The ids left to right; the last is the block's identity.
    pub(crate) ids: Vec<&'a str>,
}

/// Find the block-id run at the end of `text` (which must be right-stripped).
pub(crate) fn suffix_run(text: &str) -> Option<SuffixRun<'_>> {
    let mut end = text.len();
    let mut ids = Vec::new();
    let mut start = None;
    loop {
        let before = text.get(..end)?;
        let id_start = before.trim_end_matches(is_block_id_char).len();
        if id_start == end {
            break;
        }
        let Some(caret_side) = before.get(..id_start).and_then(|s| s.strip_suffix('^')) else { break };
        let ws_start = rstrip(caret_side).len();
        if ws_start == caret_side.len() {
            break;
        }
        ids.push(text.get(id_start..end)?);
        start = Some(ws_start);
        end = ws_start;
    }
    ids.reverse();
    start.map(|start| SuffixRun { start, ids })
}

/// `\s+\^\S+\s*$` on a right-stripped paragraph that has no valid run: the `\S+`
/// token after the caret, which makes the paragraph an `invalid block_id` error.
pub(crate) fn invalid_suffix(text: &str) -> Option<&str> {
    let token_start = text.trim_end_matches(|c: char| !is_space(c)).len();
    if token_start == 0 {
        return None;
    }
    let token = text.get(token_start..)?.strip_prefix('^')?;
    (!token.is_empty()).then_some(token)
}

/// A line-final `[ \t]*\^([A-Za-z0-9-]+)\s*$`: the byte index where the spaces before
/// the caret start, and the id.
pub(crate) fn line_final_id(line: &str) -> Option<(usize, &str)> {
    let body = rstrip(line);
    let id_start = body.trim_end_matches(is_block_id_char).len();
    if id_start == body.len() {
        return None;
    }
    let before = body.get(..id_start)?.strip_suffix('^')?;
    let cut = before.trim_end_matches([' ', '\t']).len();
    Some((cut, body.get(id_start..)?))
}

/// `\s\^[A-Za-z0-9-]+\s*$` on one line: whether it already ends in a block id.
pub(crate) fn has_spaced_final_id(line: &str) -> bool {
    let body = rstrip(line);
    let id_start = body.trim_end_matches(is_block_id_char).len();
    if id_start == body.len() {
        return false;
    }
    body.get(..id_start).and_then(|s| s.strip_suffix('^')).and_then(|s| s.chars().next_back()).is_some_and(is_space)
}

#[cfg(test)]
mod tests;
