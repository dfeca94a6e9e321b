//! Python string semantics the reference relies on, reimplemented once.
//!
//! Decision Q2: these use Rust's Unicode tables (std, `unicode-general-category`,
//! `unicode-normalization`, `caseless`). Code points whose class changed between
//! Python's Unicode 14 database and ours may classify differently; no vector depends on one.

use unicode_general_category::{GeneralCategory, get_general_category};

/// Python `str.isprintable()` for one character: not in Cc, Cf, Cs, Co, Cn, Zl, Zp,
/// or Zs other than the ASCII space.
pub fn is_printable(c: char) -> bool {
    // ASCII fast path: the category lookup is a table search.
    if c.is_ascii() {
        return matches!(c, ' '..='~');
    }
    !matches!(
        get_general_category(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::Surrogate
            | GeneralCategory::PrivateUse
            | GeneralCategory::Unassigned
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
            | GeneralCategory::SpaceSeparator
    )
}

/// Python `str.isprintable()` for a whole string (true for the empty string).
pub fn str_is_printable(s: &str) -> bool {
    s.chars().all(is_printable)
}

/// Python's `str.isspace()` per character: Unicode White_Space plus the
/// information separators U+001C..U+001F, which Python also splits on.
pub fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python `str.split()` with no argument: runs of [`is_space`] separate pieces,
/// empty pieces are dropped.
pub fn split_whitespace(s: &str) -> impl Iterator<Item = &str> {
    s.split(is_space).filter(|piece| !piece.is_empty())
}

/// `" ".join(s.split())`: collapse whitespace runs to one space and trim.
pub fn collapse_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for piece in split_whitespace(s) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(piece);
    }
    out
}

/// Python `str.casefold()` (full Unicode case folding).
pub fn casefold(s: &str) -> String {
    caseless::default_case_fold_str(s)
}

/// Unicode NFC, as `unicodedata.normalize("NFC", s)`.
pub fn nfc(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    s.nfc().collect()
}

/// The number of code points, which is what Python's `len()` counts.
pub fn char_len(s: &str) -> usize {
    s.chars().count()
}

/// Python `json.dumps(value, ensure_ascii=False)` string escaping: `"` and `\`
/// escaped, `\n \r \t \b \f` as short escapes, other C0 controls as `\u00xx`
/// (lowercase hex), everything else raw (DEL included).
pub(crate) fn push_json_string(out: &mut String, s: &str) {
    push_json_escaped(out, s, false);
}

/// Python `json.dumps(s)` with its default `ensure_ascii=True`: as [`push_json_string`],
/// but every non-ASCII character as lowercase `\uXXXX` (UTF-16 surrogate pairs above U+FFFF).
pub(crate) fn push_ascii_json_string(out: &mut String, s: &str) {
    push_json_escaped(out, s, true);
}

fn push_json_escaped(out: &mut String, s: &str, ascii_only: bool) {
    use std::fmt::Write as _;
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c.is_ascii() && !c.is_ascii_control()) || c == '\u{7f}' => out.push(c),
            c if ascii_only || (c as u32) < 0x20 => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    // Writing to a String cannot fail.
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_matches_python_for_common_classes() {
        assert!(is_printable('a'));
        assert!(is_printable(' '));
        assert!(is_printable('é'));
        assert!(!is_printable('\u{a0}'));
        assert!(!is_printable('\u{200b}'));
        assert!(!is_printable('\u{2028}'));
        assert!(!is_printable('\n'));
        assert!(!is_printable('\u{e000}'));
    }

    #[test]
    fn whitespace_includes_information_separators() {
        assert_eq!(collapse_whitespace(" a\u{1f}b\u{85}c\u{3000} "), "a b c");
        assert_eq!(collapse_whitespace("a\u{200b}b"), "a\u{200b}b");
    }

    #[test]
    fn casefold_is_full_folding() {
        assert_eq!(casefold("Straße"), "strasse");
    }

    #[test]
    fn json_escapes_like_python() {
        let mut s = String::new();
        push_json_string(&mut s, "a\"\\\n\r\t\u{8}\u{c}\u{1}\u{7f}é");
        assert_eq!(s, "\"a\\\"\\\\\\n\\r\\t\\b\\f\\u0001\u{7f}é\"");
    }
}
