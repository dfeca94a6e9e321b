//! Claim events of one topic file: the retrieval layer's view of topic blocks
//! (spec 02 §6.1), before trust resolution.
//!
//! Each citation group of a block paragraph is one claim event. The reader is
//! lenient: it never fails, a repeated definition id takes the last definition, and
//! undefined citations or unresolvable links simply contribute nothing. The text is
//! cleaned by the archive layer's `clean_retrieval_text`, so source and topic events
//! index prose the same way.

use scriptorium_archive_format::clean_retrieval_text;

use crate::document::TopicDocument;
use crate::source::{SourceLookup, SourceResolver};
use crate::tree::resolve_definitions;

/// One claim of a topic block, as the retrieval index stores it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TopicEvent {
    /// `<block id>:<n>`, `n` counting the block's citation groups from 1.
    pub event_id: String,
    /// The workspace-relative topic file.
    pub path: String,
    /// The 1-based first line of the paragraph.
    pub line: usize,
    /// The heading path of the paragraph.
    pub headings: Vec<String>,
    /// The first of `dates`, or empty.
    pub date: String,
    /// The distinct dated footnote times of the group, as written.
    pub dates: Vec<String>,
    /// The cleaned claim text, prefixed `"[d1; d2] "` when there are dates.
    pub content: String,
    /// The union of the cited definitions' source ids.
    pub refs: Vec<String>,
}

/// The claim events of one document. Claims with no text or no resolvable source are
/// skipped (their number is still used up).
pub fn topic_events<L: SourceLookup>(document: &TopicDocument, sources: &SourceResolver<L>) -> Vec<TopicEvent> {
    let definitions = resolve_definitions(document, sources, None, true);
    let mut events = Vec::new();
    for (item, paragraph) in document.paragraphs() {
        let Some(block_id) = paragraph.block_id() else { continue };
        for (n, claim) in paragraph.claims.iter().enumerate() {
            let mut refs: Vec<String> = Vec::new();
            let mut dates: Vec<String> = Vec::new();
            for citation in &claim.citations {
                let Some(resolved) = definitions.get(citation.as_str()) else { continue };
                if let Some(when) = resolved.definition.time.when()
                    && !dates.iter().any(|d| d == when)
                {
                    dates.push(when.to_owned());
                }
                for id in resolved.refs.iter().flatten() {
                    if !refs.contains(id) {
                        refs.push(id.clone());
                    }
                }
            }
            let text = clean_retrieval_text(&claim.text);
            if text.is_empty() || refs.is_empty() {
                continue;
            }
            let content = if dates.is_empty() { text } else { format!("[{}] {text}", dates.join("; ")) };
            events.push(TopicEvent {
                event_id: format!("{block_id}:{}", n + 1),
                path: document.path().to_owned(),
                line: item.line_number(),
                headings: paragraph.headings.clone(),
                date: dates.first().cloned().unwrap_or_default(),
                dates,
                content,
                refs,
            });
        }
    }
    events
}

#[cfg(test)]
mod tests;
