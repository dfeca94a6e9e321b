//! One topic file as a lossless list of items (spec 01 §6.2): headings, blank lines,
//! fenced code, HTML comment / anchor lines, footnote definitions and paragraphs.
//!
//! The document keeps every line, so rendering is exact: `render(parse(b)) == b` for a
//! file in normal form (LF line ends, one final LF), and `parse(render(d)) == d` always.

use crate::definition::{Definition, parse_definition};
use crate::error::{ErrorCode, Violation};
use crate::syntax::{citations, heading, invalid_suffix, is_fence, is_markup, suffix_run};
use crate::text::{is_blank, split_lines, strip};

/// What a run of lines is.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ItemKind {
    /// A whitespace-only line.
    Blank,
    /// `# …` to `###### …`.
    Heading {
        /// 1 to 6.
        level: usize,
        /// The heading text, right-stripped.
        text: String,
    },
    /// A fenced code block, delimiters included (unclosed: to the end of the file).
    Fence,
    /// A line starting (after whitespace) with `<!--` or `<a` + whitespace.
    Markup,
    /// A footnote definition line.
    Definition(Definition),
    /// A paragraph: consecutive lines of anything else.
    Paragraph(Paragraph),
}

/// A run of lines `[start, end)` (0-based indexes into the document's lines).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// What the lines are.
    pub kind: ItemKind,
    /// Index of the first line.
    pub start: usize,
    /// Index one past the last line.
    pub end: usize,
}

impl Item {
    /// The 1-based number of the first line.
    pub fn line_number(&self) -> usize {
        self.start + 1
    }
}

/// One citation group of a paragraph: the prose before it and its adjacent `[^id]`s.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Claim {
    /// The text since the previous group (or the paragraph start), unstripped.
    pub text: String,
    /// The footnote ids of the group, in order (at least one).
    pub citations: Vec<String>,
}

impl Claim {
    /// The claim's quote: its text, stripped.
    pub fn quote(&self) -> &str {
        strip(&self.text)
    }
}

/// A paragraph and its block structure (spec 01 §6.3).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Paragraph {
    /// The heading path when the paragraph started.
    pub headings: Vec<String>,
    /// The lines joined with LF, stripped.
    pub text: String,
    /// The block-id run (aliases first, identity last); empty without a valid run.
    pub ids: Vec<String>,
    /// The `^…` token when the paragraph ends in something that is not a valid run.
    pub invalid_id: Option<String>,
    /// The text before the block-id run (the whole text without one).
    pub body: String,
    /// The citation groups of the body, in order.
    pub claims: Vec<Claim>,
    /// The body after the last citation group (the whole body without one).
    pub tail: String,
}

impl Paragraph {
    /// Analyse the stripped paragraph `text` under `headings`.
    pub fn new(text: String, headings: Vec<String>) -> Self {
        let (ids, invalid_id, body_len) = match suffix_run(&text) {
            Some(run) => (run.ids.iter().map(|id| (*id).to_owned()).collect(), None, run.start),
            None => (Vec::new(), invalid_suffix(&text).map(str::to_owned), text.len()),
        };
        let body = text.get(..body_len).unwrap_or_default().to_owned();
        let mut claims: Vec<Claim> = Vec::new();
        let mut group_end = 0;
        let mut previous_end = None;
        for citation in citations(&body) {
            match claims.last_mut() {
                Some(claim) if previous_end == Some(citation.start) => claim.citations.push(citation.id.to_owned()),
                _ => claims.push(Claim {
                    text: body.get(group_end..citation.start).unwrap_or_default().to_owned(),
                    citations: vec![citation.id.to_owned()],
                }),
            }
            previous_end = Some(citation.end);
            group_end = citation.end;
        }
        let tail = body.get(group_end..).unwrap_or_default().to_owned();
        Paragraph { headings, text, ids, invalid_id, body, claims, tail }
    }

    /// The block's identity: the last id of the run.
    pub fn block_id(&self) -> Option<&str> {
        self.ids.last().map(String::as_str)
    }

    /// Every cited footnote id, in order, duplicates kept.
    pub fn cited(&self) -> impl Iterator<Item = &str> {
        self.claims.iter().flat_map(|claim| claim.citations.iter().map(String::as_str))
    }

    /// The body with every citation removed, stripped (a unit's `content`).
    pub fn content(&self) -> String {
        let mut out = String::with_capacity(self.body.len());
        for claim in &self.claims {
            out.push_str(&claim.text);
        }
        out.push_str(&self.tail);
        strip(&out).to_owned()
    }
}

/// One parsed topic file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicDocument {
    path: String,
    lines: Vec<String>,
    items: Vec<Item>,
}

impl TopicDocument {
    /// Parse file bytes. Errors only when the bytes are not UTF-8.
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, Violation> {
        match std::str::from_utf8(bytes) {
            Ok(text) => Ok(Self::from_text(path, text)),
            Err(e) => {
                let line = bytes.get(..e.valid_up_to()).map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count());
                Err(Violation::new(ErrorCode::NotUtf8, path, Some(line + 1), "topic file is not UTF-8"))
            }
        }
    }

    /// Parse text, splitting lines as Python's `str.splitlines()` does.
    pub fn from_text(path: &str, text: &str) -> Self {
        Self::from_lines(path, split_lines(text).into_iter().map(str::to_owned).collect())
    }

    /// Build a document from lines that hold no line break.
    pub fn from_lines(path: &str, lines: Vec<String>) -> Self {
        let items = scan(&lines);
        TopicDocument { path: path.to_owned(), lines, items }
    }

    /// A document from lines and the items [`scan`] found in them.
    pub(crate) fn from_parts(path: &str, lines: Vec<String>, items: Vec<Item>) -> Self {
        TopicDocument { path: path.to_owned(), lines, items }
    }

    /// The workspace-relative path (`topics/…`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The lines, without line breaks.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// Give up the lines.
    pub fn into_lines(self) -> Vec<String> {
        self.lines
    }

    /// Give up the path, lines and items.
    pub(crate) fn into_parts(self) -> (String, Vec<String>, Vec<Item>) {
        (self.path, self.lines, self.items)
    }

    /// Every item, in file order.
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// The paragraphs with their items, in file order.
    pub fn paragraphs(&self) -> impl Iterator<Item = (&Item, &Paragraph)> {
        self.items.iter().filter_map(|item| match &item.kind {
            ItemKind::Paragraph(p) => Some((item, p)),
            _ => None,
        })
    }

    /// The definition lines with their items, in file order.
    pub fn definitions(&self) -> impl Iterator<Item = (&Item, &Definition)> {
        self.items.iter().filter_map(|item| match &item.kind {
            ItemKind::Definition(d) => Some((item, d)),
            _ => None,
        })
    }

    /// The file bytes: lines joined with LF, plus a final LF unless there is no line.
    pub fn render(&self) -> Vec<u8> {
        render_lines(&self.lines).into_bytes()
    }
}

/// Lines joined with LF plus one final LF (nothing for no lines).
pub(crate) fn render_lines(lines: &[String]) -> String {
    let mut out = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Render a document to bytes (see [`TopicDocument::render`]).
pub fn render(document: &TopicDocument) -> Vec<u8> {
    document.render()
}

/// A paragraph's line range and heading path, as `markdown.syntax.paragraph_spans`
/// reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParagraphSpan {
    /// Index of the first line.
    pub start: usize,
    /// Index one past the last line.
    pub end: usize,
    /// The heading path when the paragraph started.
    pub headings: Vec<String>,
}

/// The paragraphs of `lines` (spec 01 §6.2).
pub fn paragraph_spans<S: AsRef<str>>(lines: &[S]) -> Vec<ParagraphSpan> {
    scan(lines)
        .into_iter()
        .filter_map(|item| match item.kind {
            ItemKind::Paragraph(p) => Some(ParagraphSpan { start: item.start, end: item.end, headings: p.headings }),
            _ => None,
        })
        .collect()
}

/// Classify lines into items, keeping the heading stack and the fence state.
pub(crate) fn scan<S: AsRef<str>>(lines: &[S]) -> Vec<Item> {
    // At most one item per line, and usually close to that (blank lines are items).
    let mut items = Vec::with_capacity(lines.len());
    let mut stack: Vec<String> = Vec::new();
    let mut paragraph: Option<(usize, Vec<String>)> = None;
    let mut fence: Option<usize> = None;
    let close = |items: &mut Vec<Item>, paragraph: &mut Option<(usize, Vec<String>)>, end: usize| {
        if let Some((start, headings)) = paragraph.take() {
            let text = match lines.get(start..end).unwrap_or_default() {
                [one] => strip(one.as_ref()).to_owned(),
                many => strip(&many.iter().map(AsRef::as_ref).collect::<Vec<_>>().join("\n")).to_owned(),
            };
            items.push(Item { kind: ItemKind::Paragraph(Paragraph::new(text, headings)), start, end });
        }
    };
    for (index, line) in lines.iter().map(AsRef::as_ref).enumerate() {
        if is_fence(line) {
            close(&mut items, &mut paragraph, index);
            match fence.take() {
                Some(start) => items.push(Item { kind: ItemKind::Fence, start, end: index + 1 }),
                None => fence = Some(index),
            }
            continue;
        }
        if fence.is_some() {
            continue;
        }
        let kind = if let Some(definition) = parse_definition(line) {
            ItemKind::Definition(definition)
        } else if is_markup(line) {
            ItemKind::Markup
        } else if let Some((level, text)) = heading(line) {
            stack.truncate(level - 1);
            stack.push(text.to_owned());
            ItemKind::Heading { level, text: text.to_owned() }
        } else if is_blank(line) {
            ItemKind::Blank
        } else {
            if paragraph.is_none() {
                paragraph = Some((index, stack.clone()));
            }
            continue;
        };
        close(&mut items, &mut paragraph, index);
        items.push(Item { kind, start: index, end: index + 1 });
    }
    close(&mut items, &mut paragraph, lines.len());
    if let Some(start) = fence {
        items.push(Item { kind: ItemKind::Fence, start, end: lines.len() });
    }
    items
}

#[cfg(test)]
mod tests;
