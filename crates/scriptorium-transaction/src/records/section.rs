//! Destination sections (spec 02 §4.2): a section runs from the line after its heading
//! to the next heading of any level, `headings = []` is the text before the first
//! heading, and missing heading levels are appended after the deepest existing match.

use scriptorium_topic_markdown::{ItemKind, TopicDocument};

use super::edit::{find_paragraph, insert_chunk};
use super::{Destination, Position};
use crate::error::{Error, ErrorCode};

/// Markdown has six heading levels.
const MAX_LEVEL: usize = 6;

/// One heading line: its index, level and the heading path it opens.
struct Heading {
    line: usize,
    level: usize,
    path: Vec<String>,
}

/// Every heading with the path the parser assigns it (the stack is cut to `level - 1`
/// entries before the heading is pushed, exactly as the scanner does).
fn headings(document: &TopicDocument) -> Vec<Heading> {
    let mut stack: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for item in document.items() {
        if let ItemKind::Heading { level, text } = &item.kind {
            stack.truncate(level.saturating_sub(1));
            stack.push(text.clone());
            out.push(Heading { line: item.start, level: *level, path: stack.clone() });
        }
    }
    out
}

/// The line range `[start, end)` of the section with this heading path, if it exists.
fn section(document: &TopicDocument, path: &[String]) -> Option<(usize, usize)> {
    let all = headings(document);
    let len = document.lines().len();
    let (start, after) = if path.is_empty() {
        (0, 0)
    } else {
        let index = all.iter().position(|h| h.path == path)?;
        (all.get(index)?.line + 1, index + 1)
    };
    let end = all.get(after).map_or(len, |next| next.line);
    Some((start, end))
}

/// Make sure the section `path` exists, appending the missing heading levels after the
/// deepest existing section whose path is a prefix of it (after its sub-sections too).
fn ensure_section(document: &TopicDocument, path: &[String]) -> Result<Option<Vec<String>>, Error> {
    if section(document, path).is_some() {
        return Ok(None);
    }
    let all = headings(document);
    let lines = document.lines();
    // The deepest existing prefix: (headings it covers, its level, where its subtree ends).
    let (depth, level, at) = (1..path.len())
        .rev()
        .find_map(|depth| {
            let index = all.iter().position(|h| path.get(..depth) == Some(h.path.as_slice()))?;
            let parent = all.get(index)?;
            let end = all.iter().skip(index + 1).find(|h| h.level <= parent.level).map_or(lines.len(), |h| h.line);
            Some((depth, parent.level, end))
        })
        .unwrap_or((0, 0, lines.len()));
    let missing = path.get(depth..).unwrap_or_default();
    if level + missing.len() > MAX_LEVEL {
        return Err(Error::new(ErrorCode::InvalidArgument, "destination headings would nest deeper than 6 levels"));
    }
    let mut chunk = Vec::with_capacity(missing.len() * 2);
    for (n, text) in missing.iter().enumerate() {
        if n > 0 {
            chunk.push(String::new());
        }
        chunk.push(format!("{} {text}", "#".repeat(level + n + 1)));
    }
    let mut lines = lines.to_vec();
    insert_chunk(&mut lines, at, chunk);
    Ok(Some(lines))
}

/// The line index where new paragraphs go for `destination` in `document` (whose
/// lines may first gain the missing headings: they are returned with the index).
///
/// Errors: `MEMORY_NOT_FOUND` for an anchor that is not in the file, `INVALID_ARGUMENT`
/// for an anchor under other headings.
pub(super) fn insertion_point(
    document: &TopicDocument,
    destination: &Destination,
) -> Result<(usize, Option<Vec<String>>), Error> {
    if let Some(anchor) = destination.position.anchor() {
        let Some(found) = find_paragraph(document, anchor) else {
            return Err(Error::new(
                ErrorCode::MemoryNotFound,
                format!("anchor_memory_id does not exist in {}: {anchor}", destination.topic_path),
            ));
        };
        if found.paragraph.headings != destination.headings {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("anchor_memory_id {anchor} is not under the destination headings"),
            ));
        }
        let at = if matches!(destination.position, Position::Before(_)) { found.start } else { found.end };
        return Ok((at, None));
    }
    let grown = ensure_section(document, &destination.headings)?;
    let grown_document;
    let document = match &grown {
        Some(lines) => {
            grown_document = TopicDocument::from_lines(document.path(), lines.clone());
            &grown_document
        }
        None => document,
    };
    let Some((start, end)) = section(document, &destination.headings) else {
        return Err(Error::new(ErrorCode::InvalidArgument, "destination section could not be created"));
    };
    let lines = document.lines();
    let filled = |n: &usize| lines.get(*n).is_some_and(|line| !line.trim().is_empty());
    let at = match destination.position {
        Position::Start => (start..end).find(filled).unwrap_or(start),
        _ => (start..end).rev().find(filled).map_or(start, |last| last + 1),
    };
    Ok((at, grown))
}
