//! The legacy topic formats that only retrieval still reads (spec 02 §6.1): event
//! markers and `D<conv>:<turn>` line records. Block claims come from
//! `scriptorium-topic-markdown`; these forms predate block ids.
//!
//! - An event marker is a comment line `<!-- memory-event:ID -->` directly followed by a
//!   paragraph without block id; `<!-- refs: A, B -->` lines directly after the paragraph
//!   name its sources. The event is the paragraph: citations `[^…]` removed, cleaned like
//!   any retrieval text, prefixed `"[date] "` with its first ISO date; refs are the
//!   comment's ids followed by the benchmark refs of the text (the golden vectors cover
//!   both: `bm25_index/world-events`, `topics/legacy/events.md`).
//! - A line record is a line of any other paragraph without block id that carries a
//!   bracketed benchmark ref such as `[D1:3]`; a bare `D1:3` in prose is not one (the same
//!   vector file holds such a loose line and the reference indexes nothing for it). The
//!   vectors hold no line record, so this form follows the benchmark archive's line shape
//!   and its event id is the anonymous `lex_` id of the legacy source reader.

use scriptorium_archive_format::{anonymous_event_id, benchmark_refs, clean_retrieval_text, first_iso_date};
use scriptorium_topic_markdown::{ItemKind, Paragraph, TopicDocument};

use crate::event::MemoryEvent;

/// The legacy events of one topic document, in file order.
pub(crate) fn legacy_topic_events(document: &TopicDocument) -> Vec<MemoryEvent> {
    let items = document.items();
    let lines = document.lines();
    let mut events = Vec::new();
    let mut consumed = None;
    for (at, item) in items.iter().enumerate() {
        match &item.kind {
            ItemKind::Markup => {
                let Some(event_id) = lines.get(item.start).and_then(|line| marker_id(line)) else { continue };
                let Some(next) = items.get(at + 1) else { continue };
                let ItemKind::Paragraph(paragraph) = &next.kind else { continue };
                if paragraph.block_id().is_some() {
                    continue;
                }
                let refs = items
                    .get(at + 2..)
                    .unwrap_or_default()
                    .iter()
                    .map_while(|after| match after.kind {
                        ItemKind::Markup => lines.get(after.start).and_then(|line| refs_comment(line)),
                        _ => None,
                    })
                    .flatten()
                    .collect();
                events.push(marker_event(document.path(), event_id, next.line_number(), paragraph, refs));
                consumed = Some(at + 1);
            }
            ItemKind::Paragraph(paragraph) if consumed != Some(at) && paragraph.block_id().is_none() => {
                for (offset, line) in lines.get(item.start..item.end).unwrap_or_default().iter().enumerate() {
                    if let Some(event) = line_record(document.path(), item.start + offset + 1, line, paragraph) {
                        events.push(event);
                    }
                }
            }
            _ => {}
        }
    }
    events
}

fn marker_event(path: &str, event_id: &str, line: usize, paragraph: &Paragraph, mut refs: Vec<String>) -> MemoryEvent {
    let text = clean_retrieval_text(&remove_citations(&paragraph.text));
    for reference in benchmark_refs(&text) {
        if !refs.contains(&reference) {
            refs.push(reference);
        }
    }
    let mut event = crate::event::topic_event(event_id.to_owned(), path, line, paragraph.headings.clone());
    let date = first_iso_date(&text).map(str::to_owned);
    event.content = match &date {
        Some(date) => format!("[{date}] {text}"),
        None => text,
    };
    event.dates = date.iter().cloned().collect();
    event.date = date;
    event.refs = refs;
    event
}

fn line_record(path: &str, line: usize, text: &str, paragraph: &Paragraph) -> Option<MemoryEvent> {
    let refs: Vec<String> = benchmark_refs(text);
    if !refs.iter().any(|reference| text.contains(&format!("[{reference}]"))) {
        return None;
    }
    let content = clean_retrieval_text(&remove_citations(text));
    if content.is_empty() {
        return None;
    }
    let event_id = anonymous_event_id(path, line, &content, &refs);
    let mut event = crate::event::topic_event(event_id, path, line, paragraph.headings.clone());
    event.date = first_iso_date(&content).map(str::to_owned);
    event.dates = event.date.iter().cloned().collect();
    event.content = content;
    event.refs = refs;
    Some(event)
}

/// `ID` of a `<!-- memory-event:ID -->` line (spaces allowed inside the comment).
fn marker_id(line: &str) -> Option<&str> {
    let body = comment_body(line)?.strip_prefix("memory-event:")?.trim();
    let valid = !body.is_empty() && body.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    valid.then_some(body)
}

/// The ids of a `<!-- refs: A, B -->` line, split at commas and whitespace.
fn refs_comment(line: &str) -> Option<Vec<String>> {
    let body = comment_body(line)?.strip_prefix("refs:")?;
    Some(body.split(|c: char| c == ',' || c.is_whitespace()).filter(|r| !r.is_empty()).map(str::to_owned).collect())
}

/// The trimmed text between `<!--` and `-->` of a line that is exactly one comment.
fn comment_body(line: &str) -> Option<&str> {
    Some(line.trim().strip_prefix("<!--")?.strip_suffix("-->")?.trim())
}

/// `text` without footnote citations `[^id]` (`id` = `[A-Za-z0-9_-]+`).
fn remove_citations(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("[^") {
        let after = rest.get(open + 2..).unwrap_or_default();
        let id_len = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).unwrap_or(after.len());
        if id_len > 0 && after.get(id_len..).is_some_and(|tail| tail.starts_with(']')) {
            out.push_str(rest.get(..open).unwrap_or_default());
            rest = after.get(id_len + 1..).unwrap_or_default();
        } else {
            out.push_str(rest.get(..open + 2).unwrap_or_default());
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str) -> Vec<MemoryEvent> {
        legacy_topic_events(&TopicDocument::from_text("topics/legacy/events.md", text))
    }

    #[test]
    fn marker_takes_the_next_paragraph_and_its_refs_comment() {
        let got = events(
            "# Legacy events\n\n<!-- memory-event:ev_a1 -->\n- 2024-01-02: Craig adopted Miso [^mem_a1]\n\
             <!-- refs: D1:1 -->\n\n<!-- memory-event:ev_a2 -->\nMiso likes tuna (D1:3)\n\n\
             Loose line on 2024-01-02 citing D1:3\n",
        );
        assert_eq!(got.len(), 2);
        let [first, second] = got.as_slice() else { unreachable!() };
        assert_eq!(first.event_id, "ev_a1");
        assert_eq!(first.line, 4);
        assert_eq!(first.content, "[2024-01-02] - 2024-01-02: Craig adopted Miso");
        assert_eq!(first.refs, ["D1:1"]);
        assert_eq!(first.headings, ["Legacy events"]);
        assert_eq!(second.event_id, "ev_a2");
        assert_eq!(second.content, "Miso likes tuna (D1:3)");
        assert_eq!(second.refs, ["D1:3"]);
        assert_eq!(second.date, None);
    }

    #[test]
    fn bracketed_benchmark_ref_line_is_a_record() {
        let got = events("# T\n\nintro\n[2024-01-02] user: I adopted a cat. [D1:1]\n");
        assert_eq!(got.len(), 1);
        let event = got.first().expect("one event");
        assert_eq!(event.line, 4);
        assert!(event.event_id.starts_with("lex_"));
        assert_eq!(event.refs, ["D1:1"]);
        assert_eq!(event.date.as_deref(), Some("2024-01-02"));
    }

    #[test]
    fn blocks_and_markers_before_blocks_are_not_legacy() {
        let got = events(
            "<!-- memory-event:ev_1 -->\nA claim [D1:1].[^e-1] ^abcd1234\n\n[^e-1]: Time: `2024`; Sources: [D1:1](D1:1)\n",
        );
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn citations_are_removed_but_other_brackets_stay() {
        assert_eq!(remove_citations("a [^x-1] b [^] c [^y"), "a  b [^] c [^y");
        assert_eq!(marker_id("  <!-- memory-event: ev_1 -->"), Some("ev_1"));
        assert_eq!(marker_id("<!-- memory-event:bad id -->"), None);
        assert_eq!(refs_comment("<!-- refs: a/b/c, D1:2 -->"), Some(vec!["a/b/c".to_owned(), "D1:2".to_owned()]));
    }
}
