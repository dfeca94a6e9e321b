//! The text a retrieval index stores for an event: Markdown reduced to plain words,
//! the first ISO date, and benchmark `D<conv>:<turn>` references (spec 02 §6.1).
//!
//! Shared by every layer that builds retrieval events (source archives here, topic
//! blocks above), so that the same prose always yields the same indexed text.
//! The reference uses regular expressions; each function documents the pattern it
//! reproduces. Digits are Python's `\d`: any Unicode decimal digit (category Nd).

use unicode_general_category::{GeneralCategory, get_general_category};

use crate::python::collapse_whitespace;

const COMMENT_OPEN: &str = "<!--";
const COMMENT_CLOSE: &str = "-->";

/// The indexed form of a piece of Markdown: HTML comments become a space, links are
/// reduced to their label, then whitespace is collapsed as Python's `" ".join(s.split())`.
///
/// ```
/// use scriptorium_archive_format::clean_retrieval_text;
///
/// let text = "see [Mei](../people/mei.md#^b10c0001)<!-- note -->now\n  ok";
/// assert_eq!(clean_retrieval_text(text), "see Mei now ok");
/// ```
pub fn clean_retrieval_text(text: &str) -> String {
    collapse_whitespace(&reduce_markdown_links(&strip_html_comments(text)))
}

/// Replace every HTML comment by one space: Python `re.sub(r"<!--.*?-->", " ", s,
/// flags=re.S)`, so a comment may span lines and ends at the first `-->`. An
/// unterminated `<!--` stays as it is.
pub fn strip_html_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find(COMMENT_OPEN) {
        let body_start = open + COMMENT_OPEN.len();
        let Some(close) = rest.get(body_start..).and_then(|body| body.find(COMMENT_CLOSE)) else {
            // No `-->` after this opener means none after any later opener either.
            break;
        };
        out.push_str(rest.get(..open).unwrap_or_default());
        out.push(' ');
        rest = rest.get(body_start + close + COMMENT_CLOSE.len()..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

/// Replace every Markdown link `[label](target)` by its label: Python
/// `re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", s)`. Label and target are non-empty; the
/// label ends at the first `]` and the target at the first `)`, newlines included.
pub fn reduce_markdown_links(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let after_open = rest.get(open + 1..).unwrap_or_default();
        let Some(label_len) = after_open.find(']') else {
            break;
        };
        let label = after_open.get(..label_len).unwrap_or_default();
        let after_label = after_open.get(label_len + 1..).unwrap_or_default();
        let target_len = after_label.strip_prefix('(').and_then(|target| target.find(')'));
        match target_len {
            Some(target_len) if !label.is_empty() && target_len > 0 => {
                out.push_str(rest.get(..open).unwrap_or_default());
                out.push_str(label);
                rest = after_label.get(target_len + 2..).unwrap_or_default();
            }
            // Every `[` between here and this `]` meets the same `]` and fails the
            // same way, so the scan resumes after it (keeps the pass linear).
            _ => {
                let skipped = open + 1 + label_len + 1;
                out.push_str(rest.get(..skipped).unwrap_or_default());
                rest = rest.get(skipped..).unwrap_or_default();
            }
        }
    }
    out.push_str(rest);
    out
}

/// The first `\d{4}-\d{2}-\d{2}` in `text`, with no word-boundary check (so the date
/// of `2026-08-10T09:30:00` is found, and so is one inside a longer digit run).
pub fn first_iso_date(text: &str) -> Option<&str> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    const SHAPE: [bool; 10] = [true, true, true, true, false, true, true, false, true, true];
    (0..chars.len()).find_map(|start| {
        let window = chars.get(start..start + SHAPE.len())?;
        let fits = window.iter().zip(SHAPE).all(|(&(_, c), digit)| if digit { is_digit(c) } else { c == '-' });
        if !fits {
            return None;
        }
        let (begin, _) = *window.first()?;
        let (last, last_char) = *window.last()?;
        text.get(begin..last + last_char.len_utf8())
    })
}

/// Every benchmark reference `D<conv>:<turn>` or range `D<conv>:<from>-<to>` in `text`,
/// in order of first appearance, without duplicates. A range's end may repeat a
/// conversation prefix (`D1:3-D1:4`); the whole range is then one reference, as in
/// the reference reader's `re.findall(r"D\d+:\d+(?:-(?:D\d+:)?\d+)?", s)`.
pub fn benchmark_refs(text: &str) -> Vec<String> {
    let mut refs: Vec<String> = Vec::new();
    let mut from = 0;
    while let Some(found) = text.get(from..).and_then(|rest| rest.find('D')) {
        let start = from + found;
        match benchmark_ref_len(text.get(start..).unwrap_or_default()) {
            Some(len) => {
                let reference = text.get(start..start + len).unwrap_or_default();
                if !refs.iter().any(|seen| seen == reference) {
                    refs.push(reference.to_owned());
                }
                from = start + len;
            }
            None => from = start + 1,
        }
    }
    refs
}

/// Whether `text` contains at least one benchmark reference (see [`benchmark_refs`]).
pub fn has_benchmark_ref(text: &str) -> bool {
    text.match_indices('D').any(|(start, _)| benchmark_ref_len(text.get(start..).unwrap_or_default()).is_some())
}

/// The byte length of the benchmark reference at the start of `text` (which starts with `D`).
fn benchmark_ref_len(text: &str) -> Option<usize> {
    let conv = digit_run(text.get(1..)?);
    if conv == 0 {
        return None;
    }
    let after_conv = text.get(1 + conv..)?.strip_prefix(':')?;
    let turn = digit_run(after_conv);
    if turn == 0 {
        return None;
    }
    let mut len = 1 + conv + 1 + turn;
    if let Some(range) = after_conv.get(turn..).and_then(|rest| rest.strip_prefix('-')) {
        // The optional `D<conv>:` of the end is taken only when digits follow it,
        // as a regex backtracks out of `(?:D\d+:)?` otherwise.
        let prefix = repeated_prefix_len(range);
        let to = digit_run(range.get(prefix..).unwrap_or_default());
        if to > 0 {
            len += 1 + prefix + to;
        } else {
            let to = digit_run(range);
            if to > 0 {
                len += 1 + to;
            }
        }
    }
    Some(len)
}

/// The byte length of a `D<conv>:` prefix at the start of a range end, or 0.
fn repeated_prefix_len(text: &str) -> usize {
    let Some(rest) = text.strip_prefix('D') else { return 0 };
    let conv = digit_run(rest);
    match rest.get(conv..) {
        Some(after) if conv > 0 && after.starts_with(':') => 1 + conv + 1,
        _ => 0,
    }
}

/// The byte length of the run of digits at the start of `text`.
pub(crate) fn digit_run(text: &str) -> usize {
    text.char_indices().find(|&(_, c)| !is_digit(c)).map_or(text.len(), |(offset, _)| offset)
}

/// Python `re`'s `\d` on `str`: a Unicode decimal digit.
pub(crate) fn is_digit(c: char) -> bool {
    c.is_ascii_digit() || (!c.is_ascii() && get_general_category(c) == GeneralCategory::DecimalNumber)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// A range is one reference whether or not its end repeats a conversation prefix,
        /// and whatever surrounds it on non-reference characters.
        #[test]
        fn a_range_is_one_reference(
            conv in 0u32..1000,
            end_conv in 0u32..1000,
            from in 0u32..1000,
            to in 0u32..1000,
            repeat in any::<bool>(),
            before in "[ a-z\\[(,]{0,4}",
            after in "[ a-z\\]),.]{0,4}",
        ) {
            let end = if repeat { format!("D{end_conv}:{to}") } else { to.to_string() };
            let reference = format!("D{conv}:{from}-{end}");
            let text = format!("{before}{reference}{after}");
            prop_assert_eq!(benchmark_refs(&text), vec![reference]);
            prop_assert!(has_benchmark_ref(&text));
        }
    }

    #[test]
    fn comments_become_one_space_and_may_span_lines() {
        assert_eq!(strip_html_comments("a<!-- x -->b"), "a b");
        assert_eq!(strip_html_comments("a<!--\nx\n-->b<!---->c"), "a b c");
        assert_eq!(strip_html_comments("a <!-- open"), "a <!-- open");
        assert_eq!(strip_html_comments("<!-->x-->"), " ");
    }

    #[test]
    fn links_reduce_to_their_label() {
        assert_eq!(reduce_markdown_links("see [Mei](people/mei.md)."), "see Mei.");
        assert_eq!(reduce_markdown_links("[a [b](c)"), "a [b");
        assert_eq!(reduce_markdown_links("[](x) [y]() [z] (w)"), "[](x) [y]() [z] (w)");
        assert_eq!(reduce_markdown_links("[x]y [z](w"), "[x]y [z](w");
        assert_eq!(reduce_markdown_links("[1] then [two](t)"), "[1] then two");
    }

    #[test]
    fn cleaning_matches_the_reference_examples() {
        assert_eq!(
            clean_retrieval_text("[2026-08-10T09:30:00+08:00] <!-- x -->: speaker '<!-- x -->'"),
            "[2026-08-10T09:30:00+08:00] : speaker ' '"
        );
        assert_eq!(
            clean_retrieval_text("[2026] assistant: line one\r\nline two\u{1f}"),
            "[2026] assistant: line one line two"
        );
    }

    #[test]
    fn first_date_needs_the_full_shape() {
        assert_eq!(first_iso_date("[2026-08-10T09:30:00+08:00] x"), Some("2026-08-10"));
        assert_eq!(first_iso_date("[2024-03-16] body 2024-03-15"), Some("2024-03-16"));
        assert_eq!(first_iso_date("[2024] 2024-3-15, 12024-03-150"), Some("2024-03-15"));
        assert_eq!(first_iso_date("[二〇二四年] 2024/03/15"), None);
        assert_eq!(first_iso_date("٢٠٢٤-٠٣-١٥"), Some("٢٠٢٤-٠٣-١٥"));
    }

    #[test]
    fn benchmark_refs_keep_ranges_and_drop_duplicates() {
        assert_eq!(benchmark_refs("citing D3:4 and D3:5-7, again D3:4"), ["D3:4", "D3:5-7"]);
        assert_eq!(benchmark_refs("[D1:1]D2:3- D:4 D5: XD6:7"), ["D1:1", "D2:3", "D6:7"]);
        assert_eq!(benchmark_refs("see D1:3-D1:4 and D1:3-4"), ["D1:3-D1:4", "D1:3-4"]);
        assert_eq!(benchmark_refs("D1:3-D1: D2:5-D7"), ["D1:3", "D2:5"]);
        assert!(has_benchmark_ref("x D10:20"));
        assert!(!has_benchmark_ref("Day 3:4, D-1:2"));
    }
}
