//! One legacy record by the anchor a citation names (spec 01 §3.1, §6.5): what a reader
//! opens to see the evidence behind a `sources/<p>/<t>.md#source-…` or
//! `sources/D<c>.md#d<c>-<t>` link.

use super::{RuntimeRecord, lenient_anchor};
use crate::ids::source_anchor;

/// A legacy record as a person reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LegacyRecord {
    /// The record's source id (`provider/thread/message`), or `None` for a benchmark turn.
    pub source_id: Option<String>,
    /// The 1-based line of the record's header line (`[time] role: …`).
    pub line: usize,
    /// The record verbatim, from its header line: the lines a `record-lines` count
    /// covers, or for an unframed record its header line and the lines that continue
    /// it up to the next record's anchor (trailing blank lines dropped).
    pub record_text: String,
    /// Whether a `record-lines` line framed it.
    pub framed: bool,
}

/// The record of the legacy file `path` (its text `text`) whose anchor is `anchor`.
///
/// A runtime record is found as the legacy reader finds it (an anchor line, the
/// `source-id` comment whose legacy location is this file and anchor, a header line);
/// a benchmark turn (`d<c>-<t>`, any case) is the line after its `<a id>` tag.
/// `None` when the file holds no such record.
///
/// ```
/// use scriptorium_archive_format::legacy_record;
///
/// let text = "# t\n\n<a id=\"source-4bae0bc71d73f242\"></a>\n<!-- source-id:openprogram/old-notes/n1 -->\n\
///             [2025-11-20] user: meet monthly\nrotate hosts\n\n";
/// let record = legacy_record("sources/openprogram/old-notes.md", text, "source-4bae0bc71d73f242")
///     .expect("the anchor names a record");
/// assert_eq!(record.record_text, "[2025-11-20] user: meet monthly\nrotate hosts");
/// assert_eq!(record.line, 5);
/// ```
pub fn legacy_record(path: &str, text: &str, anchor: &str) -> Option<LegacyRecord> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut index = 0;
    while index < lines.len() {
        if let Some(record) = RuntimeRecord::at(path, &lines, index) {
            if source_anchor(record.source_id) == anchor {
                let end = if record.framed { record.end() } else { continuation_end(path, &lines, record.header) };
                return Some(LegacyRecord {
                    source_id: Some(record.source_id.to_owned()),
                    line: record.header + 1,
                    record_text: lines.get(record.header..end).unwrap_or_default().join("\n"),
                    framed: record.framed,
                });
            }
            index = record.end();
            continue;
        }
        index += 1;
    }
    benchmark_turn(&lines, anchor)
}

/// The end (exclusive) of an unframed record whose header is at `header`: the next
/// line that opens a runtime record or carries an anchor tag, with the blank lines
/// before it left out.
fn continuation_end(path: &str, lines: &[&str], header: usize) -> usize {
    let opens_next = |index: usize| {
        lines.get(index).is_none_or(|line| lenient_anchor(line).is_some())
            || RuntimeRecord::at(path, lines, index).is_some()
    };
    let mut end = header + 1;
    while !opens_next(end) {
        end += 1;
    }
    while end > header + 1 && lines.get(end - 1).is_some_and(|line| line.trim().is_empty()) {
        end -= 1;
    }
    end
}

/// A benchmark archive's turn: the line after `<a id="d<c>-<t>"></a>`.
fn benchmark_turn(lines: &[&str], anchor: &str) -> Option<LegacyRecord> {
    if !is_benchmark_anchor(anchor) {
        return None;
    }
    let tag =
        lines.iter().position(|line| lenient_anchor(line).is_some_and(|found| found.eq_ignore_ascii_case(anchor)))?;
    let turn = lines.get(tag + 1).filter(|line| !line.trim().is_empty())?;
    Some(LegacyRecord { source_id: None, line: tag + 2, record_text: (*turn).to_owned(), framed: false })
}

/// `d<digits>-<digits>`, any case.
fn is_benchmark_anchor(anchor: &str) -> bool {
    let Some(rest) = anchor.strip_prefix(['d', 'D']) else { return false };
    let Some((conv, turn)) = rest.split_once('-') else { return false };
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    digits(conv) && digits(turn)
}

#[cfg(test)]
mod tests {
    use super::legacy_record;

    const PATH: &str = "sources/openprogram/old-notes.md";

    fn notes() -> String {
        [
            "# old-notes",
            "",
            "<a id=\"source-4bae0bc71d73f242\"></a>",
            "<!-- source-id:openprogram/old-notes/n1 -->",
            "[2025-11-20T18:30:00+01:00] user: Book club idea.",
            "",
            "<a id=\"source-620b0ae3789da094\"></a>",
            "<!-- source-id:openprogram/old-notes/n2 -->",
            "[2025-11-20T18:30:20+01:00] assistant: Noted.",
            "She asked for a reading list.",
            "",
            "",
            "<a id=\"source-5d87a3877097f7ea\"></a>",
            "<!-- source-id:openprogram/old-notes/n3 -->",
            "<!-- record-lines:2 -->",
            "[2025-12-01T08:15:00+01:00] user: two lines",
            "second",
            "not covered",
            "",
        ]
        .join("\n")
    }

    #[test]
    fn an_unframed_record_runs_to_the_next_anchor() {
        let record = legacy_record(PATH, &notes(), "source-620b0ae3789da094").expect("n2");
        assert_eq!(record.source_id.as_deref(), Some("openprogram/old-notes/n2"));
        assert_eq!(record.record_text, "[2025-11-20T18:30:20+01:00] assistant: Noted.\nShe asked for a reading list.");
        assert_eq!((record.line, record.framed), (9, false));
    }

    #[test]
    fn a_framed_record_is_its_declared_lines() {
        let record = legacy_record(PATH, &notes(), "source-5d87a3877097f7ea").expect("n3");
        assert_eq!(record.record_text, "[2025-12-01T08:15:00+01:00] user: two lines\nsecond");
        assert!(record.framed);
    }

    #[test]
    fn a_record_of_another_file_or_an_unknown_anchor_is_none() {
        assert_eq!(legacy_record("sources/openprogram/other.md", &notes(), "source-4bae0bc71d73f242"), None);
        assert_eq!(legacy_record(PATH, &notes(), "source-0000000000000000"), None);
        assert_eq!(legacy_record(PATH, "", "source-4bae0bc71d73f242"), None);
    }

    #[test]
    fn a_benchmark_turn_is_the_line_after_its_tag() {
        let text = "# D1\n\n<a id=\"d1-1\"></a>\n[2024-01-02] Mei: I adopted a cat. [D1:1]\n\n<a id=\"d1-2\"></a>\n";
        let record = legacy_record("sources/D1.md", text, "D1-1").expect("turn");
        assert_eq!((record.record_text.as_str(), record.line), ("[2024-01-02] Mei: I adopted a cat. [D1:1]", 4));
        assert_eq!(record.source_id, None);
        assert_eq!(legacy_record("sources/D1.md", text, "d1-2"), None, "a tag with no turn after it");
        assert_eq!(legacy_record("sources/D1.md", text, "x1-1"), None);
    }

    proptest::proptest! {
        /// Whatever the bytes, the lookup never panics, and every runtime record the
        /// legacy reader finds opens at the same header line by its anchor.
        #[test]
        fn every_record_the_reader_finds_opens_by_its_anchor(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "<a id=\"source-4bae0bc71d73f242\"></a>",
                "<!-- source-id:openprogram/old-notes/n1 -->",
                "<a id=\"source-620b0ae3789da094\"></a>",
                "<!-- source-id:openprogram/old-notes/n2 -->",
                "<!-- record-lines:2 -->",
                "<!-- record-lines:99 -->",
                "[2025-11-20] user: hi",
                "[t] assistant: [Bo (b1)] x",
                "plain text",
                "loose [D1:1]",
                "# heading",
                "",
                "<a id=\"d1-1\"></a>",
            ]), 0..24),
        ) {
            let text = pieces.join("\n");
            for anchor in ["source-4bae0bc71d73f242", "source-620b0ae3789da094", "d1-1", "", "source-"] {
                let _ = legacy_record(PATH, &text, anchor);
            }
            let mut seen = std::collections::HashSet::new();
            for event in crate::legacy::legacy_events(PATH, &text) {
                let anchor = crate::ids::source_anchor(&event.event_id);
                if event.event_id.starts_with(super::super::ANONYMOUS_PREFIX) || !seen.insert(anchor.clone()) {
                    continue; // the lookup answers the first record with an anchor
                }
                let record = legacy_record(PATH, &text, &anchor).expect("a record the reader found");
                proptest::prop_assert_eq!(record.line, event.line);
                proptest::prop_assert!(record.record_text.starts_with('['));
            }
        }
    }
}
