//! Recognisers for the structural lines of a v2 frame (nom, kept private).
//!
//! Every recogniser matches a whole line (no surrounding whitespace, no CR) and
//! returns the field it carries. Structural lines are ASCII (decision Q5).

use nom::bytes::complete::{tag, take_till, take_while_m_n, take_while1};
use nom::combinator::{all_consuming, map_res};
use nom::sequence::{delimited, preceded, terminated};
use nom::{IResult, Parser};

use crate::python::is_space;

const COMMENT_END: &str = " -->";

/// `<a id="ANCHOR"></a>` → `ANCHOR`.
pub(crate) fn anchor_line(line: &str) -> Option<&str> {
    let parsed: IResult<&str, &str> =
        all_consuming(delimited(tag("<a id=\""), take_till(|c| c == '"'), tag("\"></a>"))).parse(line);
    parsed.ok().map(|(_, anchor)| anchor)
}

/// The value of a `<!-- NAME:VALUE -->` comment line; the value runs to the final ` -->`.
fn comment_value<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let parsed: IResult<&str, &str> = preceded(tag("<!-- "), terminated(tag(name), tag(":"))).parse(line);
    let (value, _) = parsed.ok()?;
    value.strip_suffix(COMMENT_END)
}

/// `<!-- source-id:ID -->` → `ID` (non-empty).
pub(crate) fn source_line(line: &str) -> Option<&str> {
    comment_value(line, "source-id").filter(|id| !id.is_empty())
}

/// `<!-- speaker-id:VALUE -->` → `VALUE` (may be empty; the canonical form is checked
/// by the scanner, so that a bad value is reported as such).
pub(crate) fn speaker_line(line: &str) -> Option<&str> {
    comment_value(line, "speaker-id")
}

/// `<!-- source-meta:VALUE -->` → `VALUE`, not yet checked to be a token.
pub(crate) fn meta_value(line: &str) -> Option<&str> {
    comment_value(line, "source-meta")
}

/// A `source-meta` value that is a token: non-empty, base64url alphabet only.
pub(crate) fn meta_token(value: &str) -> Option<&str> {
    let parsed: IResult<&str, &str> =
        all_consuming(take_while1(|c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_')).parse(value);
    parsed.ok().map(|(_, token)| token)
}

/// `<!-- source-meta:TOKEN -->` → `TOKEN` (non-empty base64url alphabet).
pub(crate) fn meta_line(line: &str) -> Option<&str> {
    meta_token(meta_value(line)?)
}

/// `<!-- record-lines:N -->` → `N` (one to nine ASCII digits, leading zeros allowed).
pub(crate) fn count_line(line: &str) -> Option<usize> {
    let value = comment_value(line, "record-lines")?;
    let parsed: IResult<&str, usize> =
        all_consuming(map_res(take_while_m_n(1, 9, |c: char| c.is_ascii_digit()), str::parse::<usize>)).parse(value);
    parsed.ok().map(|(_, n)| n)
}

/// A record header split into its parts, as the reference's
/// `^\[([^]]*)\]\s+(.+?): (.*)$` splits it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordHeader<'a> {
    /// The text between the brackets (may be empty).
    pub timestamp: &'a str,
    /// The shortest non-empty label before the first `": "`.
    pub label: &'a str,
    /// The rest of the header line after `": "`.
    pub content: &'a str,
}

/// Split a record header line `[timestamp] label: content`.
///
/// The whitespace run after `]` is taken greedily and given back one character at a
/// time, exactly as Python's backtracking regex does.
pub fn split_record_header(line: &str) -> Option<RecordHeader<'_>> {
    let parsed: IResult<&str, &str> = delimited(tag("["), take_till(|c| c == ']'), tag("]")).parse(line);
    let (after, timestamp) = parsed.ok()?;
    let spaced: IResult<&str, &str> = take_while1(is_space).parse(after);
    let (_, spaces) = spaced.ok()?;
    // Give the greedy whitespace run back one character at a time, longest first.
    for (offset, c) in spaces.char_indices().rev() {
        let end = offset + c.len_utf8();
        let candidate = after.get(end..)?;
        let first_len = candidate.chars().next()?.len_utf8();
        if let Some(found) = candidate.get(first_len..).and_then(|tail| tail.find(": ")) {
            let label_end = first_len + found;
            return Some(RecordHeader {
                timestamp,
                label: candidate.get(..label_end)?,
                content: candidate.get(label_end + 2..)?,
            });
        }
    }
    None
}

/// Whether `line` matches the record header pattern.
pub(crate) fn is_record_header(line: &str) -> bool {
    split_record_header(line).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structural_lines() {
        assert_eq!(anchor_line("<a id=\"source-0123\"></a>"), Some("source-0123"));
        assert_eq!(anchor_line(" <a id=\"x\"></a>"), None);
        assert_eq!(source_line("<!-- source-id:a/b/c -->"), Some("a/b/c"));
        assert_eq!(source_line("<!-- source-id:a/b/c -->\r"), None);
        assert_eq!(speaker_line("<!-- speaker-id: -->"), Some(""));
        assert_eq!(speaker_line("<!-- speaker-id:a b -->"), Some("a b"));
        assert_eq!(count_line("<!-- record-lines:01 -->"), Some(1));
        assert_eq!(count_line("<!-- record-lines:1234567890 -->"), None);
        assert_eq!(count_line("<!-- record-lines: 1 -->"), None);
        assert_eq!(meta_line("<!-- source-meta:ab-_ -->"), Some("ab-_"));
        assert_eq!(meta_line("<!-- source-meta:ab= -->"), None);
    }

    #[test]
    fn header_split_follows_python_backtracking() {
        let h = split_record_header("[2026] Ada (1): hi: there").expect("header");
        assert_eq!((h.timestamp, h.label, h.content), ("2026", "Ada (1)", "hi: there"));
        let h = split_record_header("[]  : x").expect("backtracks into the spaces");
        assert_eq!((h.label, h.content), (" ", "x"));
        assert!(split_record_header("[x] a:b").is_none());
        assert!(split_record_header("[x]a: b").is_none());
        assert!(split_record_header("plain text").is_none());
        let h = split_record_header("[t]\u{1f}label: x").expect("unit separator is whitespace");
        assert_eq!(h.label, "label");
    }
}
