//! The events of one indexable file, before v2 preference and trust resolution
//! (spec 02 §6.1): topic claims and legacy topic forms, or source records.

use std::borrow::Cow;
use std::collections::BTreeMap;

use scriptorium_archive_format::source_events;
use scriptorium_topic_markdown::{SourceLookup, SourceResolver, TopicDocument, topic_events};

use crate::event::{FileKind, MemoryEvent, source_memory_event, topic_memory_event};
use crate::legacy_topic::legacy_topic_events;

/// The events of the file at the workspace-relative `path`, or nothing for a path outside
/// `topics/` and `sources/`. Topic citations resolve through `sources`.
///
/// Bytes that are not UTF-8 never fail the index: a v2 archive is read up to its last
/// whole line before the first bad byte (the scanner would stop there anyway); a legacy
/// archive or topic file is decoded with replacement characters.
pub fn file_events<L: SourceLookup>(path: &str, bytes: &[u8], sources: &SourceResolver<L>) -> Vec<MemoryEvent> {
    match FileKind::of(path) {
        Some(FileKind::Topic) => {
            let document = TopicDocument::from_text(path, &String::from_utf8_lossy(bytes));
            let mut events: Vec<MemoryEvent> =
                topic_events(&document, sources).into_iter().map(topic_memory_event).collect();
            events.extend(legacy_topic_events(&document));
            events
        }
        Some(FileKind::V2Source) => {
            source_events(path, &valid_line_prefix(bytes)).into_iter().map(source_memory_event).collect()
        }
        Some(FileKind::LegacySource) => {
            source_events(path, &String::from_utf8_lossy(bytes)).into_iter().map(source_memory_event).collect()
        }
        None => Vec::new(),
    }
}

/// Source files borrowed from a list of workspace files, by workspace-relative path.
pub(crate) struct SourcesAmong<'a>(BTreeMap<&'a str, &'a [u8]>);

impl<'a> FromIterator<(&'a str, &'a [u8])> for SourcesAmong<'a> {
    fn from_iter<I: IntoIterator<Item = (&'a str, &'a [u8])>>(iter: I) -> Self {
        SourcesAmong(iter.into_iter().collect())
    }
}

impl SourceLookup for SourcesAmong<'_> {
    fn read_source(&self, path: &str) -> std::io::Result<Option<Vec<u8>>> {
        Ok(self.0.get(path).map(|bytes| bytes.to_vec()))
    }
}

/// The longest UTF-8 prefix of `bytes` that ends at a line end (all of it when valid).
fn valid_line_prefix(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(error) => {
            let valid = bytes.get(..error.valid_up_to()).unwrap_or_default();
            let end = valid.iter().rposition(|&b| b == b'\n').map_or(0, |at| at + 1);
            Cow::Owned(String::from_utf8_lossy(valid.get(..end).unwrap_or_default()).into_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use scriptorium_topic_markdown::MemorySources;

    use super::*;

    #[test]
    fn invalid_utf8_v2_archive_keeps_whole_lines_before_the_bad_byte() {
        assert_eq!(valid_line_prefix(b"a\nb\xffc\n"), "a\n");
        assert_eq!(valid_line_prefix(b"ok\n"), "ok\n");
        assert_eq!(valid_line_prefix(b"\xff"), "");
    }

    #[test]
    fn topic_claims_and_benchmark_sources_become_events() {
        let source = "# D1\n\n<a id=\"d1-1\"></a>\n[2024-01-02] user: I adopted a cat. [D1:1]\n";
        let topic =
            "# Pets\n\nCraig adopted a cat.[^e-1] ^c0c0c0c0\n\n[^e-1]: Time: `2024-01-02`; Sources: [D1:1](D1:1)\n";
        let resolver = SourceResolver::new(MemorySources::from_iter([("sources/D1.md", source)]));
        let topic_events = file_events("topics/pets.md", topic.as_bytes(), &resolver);
        assert_eq!(topic_events.len(), 1);
        let claim = topic_events.first().expect("one claim");
        assert_eq!(claim.event_id, "c0c0c0c0:1");
        assert_eq!(claim.content, "[2024-01-02] Craig adopted a cat.");
        assert_eq!(claim.refs, ["D1:1"]);
        let source_events = file_events("sources/D1.md", source.as_bytes(), &resolver);
        assert_eq!(source_events.len(), 1);
        assert!(file_events("timeline/2024.md", b"x", &resolver).is_empty());
    }
}
