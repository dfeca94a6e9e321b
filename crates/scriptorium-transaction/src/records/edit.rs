//! Line edits on one topic file that keep its blank-line rhythm: chunks are inserted
//! with one blank line on each side, and removals leave no doubled blank line behind,
//! so the normalizer only has ids and links left to settle.

use scriptorium_topic_markdown::{ItemKind, Paragraph, TopicDocument, parse_definition};

/// A paragraph found by one of its ids: its line range and its parsed form.
#[derive(Clone, Debug)]
pub(super) struct Found {
    /// Index of the first line.
    pub(super) start: usize,
    /// Index one past the last line.
    pub(super) end: usize,
    /// The paragraph.
    pub(super) paragraph: Paragraph,
}

/// The paragraph carrying `id` in its block-id run, if any.
pub(super) fn find_paragraph(document: &TopicDocument, id: &str) -> Option<Found> {
    document.paragraphs().find(|(_, p)| p.ids.iter().any(|own| own == id)).map(|(item, paragraph)| Found {
        start: item.start,
        end: item.end,
        paragraph: paragraph.clone(),
    })
}

fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// Insert `chunk` before line `at`, adding a blank line on either side where the
/// neighbour is not blank already (a paragraph must not run into its neighbours).
pub(super) fn insert_chunk(lines: &mut Vec<String>, at: usize, chunk: Vec<String>) {
    let at = at.min(lines.len());
    let mut block = Vec::with_capacity(chunk.len() + 2);
    if at > 0 && lines.get(at - 1).is_some_and(|line| !is_blank(line)) {
        block.push(String::new());
    }
    block.extend(chunk);
    if lines.get(at).is_some_and(|line| !is_blank(line)) {
        block.push(String::new());
    }
    lines.splice(at..at, block);
}

/// Remove lines `[start, end)`, then one blank line if the removal left two in a row,
/// a blank first line, or a blank last line. Returns where the removed lines stood.
pub(super) fn remove_lines(lines: &mut Vec<String>, start: usize, end: usize) -> usize {
    let end = end.min(lines.len());
    if start >= end {
        return start.min(lines.len());
    }
    lines.drain(start..end);
    let here_blank = lines.get(start).is_some_and(|line| is_blank(line));
    let before_blank = start > 0 && lines.get(start - 1).is_some_and(|line| is_blank(line));
    if here_blank && (start == 0 || before_blank) {
        lines.remove(start);
        start
    } else if start == lines.len() && before_blank {
        lines.remove(start - 1);
        start - 1
    } else {
        start
    }
}

/// Insert one definition line before line `at`: definitions stay a tight block, and
/// anything else gets a blank line of distance.
pub(super) fn insert_definition(lines: &mut Vec<String>, at: usize, definition: String) {
    let at = at.min(lines.len());
    let apart = |line: &String| !is_blank(line) && parse_definition(line).is_none();
    let mut block = Vec::with_capacity(3);
    if at > 0 && lines.get(at - 1).is_some_and(apart) {
        block.push(String::new());
    }
    block.push(definition);
    if lines.get(at).is_some_and(apart) {
        block.push(String::new());
    }
    lines.splice(at..at, block);
}

/// Remove the definition lines of `ids` that no paragraph of the file cites any more.
/// Returns the index where the first removed line stood, for a replacement to go.
pub(super) fn remove_uncited_definitions(path: &str, lines: &mut Vec<String>, ids: &[String]) -> Option<usize> {
    let mut first = None;
    loop {
        let document = TopicDocument::from_lines(path, lines.clone());
        let cited = |id: &str| document.paragraphs().any(|(_, p)| p.cited().any(|c| c == id));
        let doomed =
            document.definitions().find(|(_, d)| ids.contains(&d.id) && !cited(&d.id)).map(|(item, _)| item.start);
        let Some(line) = doomed else { break };
        let at = remove_lines(lines, line, line + 1);
        first = Some(first.map_or(at, |f: usize| f.min(at)));
    }
    first
}

/// The lines of a paragraph with `content` as its prose, citing `label`, and ending in
/// the block-id run `ids` (none for a new paragraph: the normalizer assigns one).
pub(super) fn paragraph_lines(content: &str, label: &str, ids: &[String]) -> Vec<String> {
    let mut text = format!("{content}[^{label}]");
    for id in ids {
        text.push_str(" ^");
        text.push_str(id);
    }
    text.split('\n').map(str::to_owned).collect()
}

/// The lines of a paragraph whose block-id run becomes `ids`, prose and citations kept.
pub(super) fn with_ids(paragraph: &Paragraph, ids: &[String]) -> Vec<String> {
    let mut text = paragraph.body.trim_end().to_owned();
    for id in ids {
        text.push_str(" ^");
        text.push_str(id);
    }
    text.split('\n').map(str::to_owned).collect()
}

/// The first definition line of footnote `id` in the file, as written.
pub(super) fn definition_line(document: &TopicDocument, id: &str) -> Option<String> {
    document.definitions().find(|(_, d)| d.id == id).and_then(|(item, _)| document.lines().get(item.start).cloned())
}

/// Every footnote id defined in the file.
pub(super) fn defined_ids(document: &TopicDocument) -> impl Iterator<Item = &str> {
    document.items().iter().filter_map(|item| match &item.kind {
        ItemKind::Definition(definition) => Some(definition.id.as_str()),
        _ => None,
    })
}
