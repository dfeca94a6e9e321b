//! `str.splitlines()` and strip parity with Python.

use super::*;

#[track_caller]
fn check(text: &str, want: &[&str]) {
    assert_eq!(split_lines(text), want, "splitlines({text:?})");
}

#[test]
fn splitlines_matches_python() {
    check("", &[]);
    check("\n", &[""]);
    check("a\n", &["a"]);
    check("a\n\nb", &["a", "", "b"]);
    check("a\u{2028}b\n\nc\u{c}d\u{85}e\r\nf\rg", &["a", "b", "", "c", "d", "e", "f", "g"]);
    check("a\r\r\nb", &["a", "", "b"]);
    check("x\u{b}y\u{1c}z\u{1d}w\u{1e}v\u{2029}", &["x", "y", "z", "w", "v"]);
    // U+001F is whitespace for Python but not a line break.
    check("x\u{1f}y", &["x\u{1f}y"]);
}

#[test]
fn lazy_rest_mimics_lazy_group() {
    assert_eq!(lazy_rest(""), None);
    assert_eq!(lazy_rest("  "), Some(" "));
    assert_eq!(lazy_rest("  a b  "), Some("a b"));
    assert_eq!(lazy_rest("x"), Some("x"));
}

#[test]
fn strip_uses_python_whitespace() {
    assert_eq!(strip("\u{1f}\u{3000} a \u{a0}"), "a");
    assert!(is_blank(" \t\u{3000}"));
    assert!(!is_blank(" x "));
    assert_eq!(sha256_hex_prefix("evidence|2024-03-15|openprogram/sess-7f2a/m1|0", 10), "b0440aa256");
}

/// The obvious char-by-char splitter the fast one must agree with.
fn naive_split(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if is_line_break(c) {
            lines.push(&text[start..at]);
            let mut next = at + c.len_utf8();
            if c == '\r' && chars.peek().is_some_and(|&(_, n)| n == '\n') {
                chars.next();
                next += 1;
            }
            start = next;
        }
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

proptest::proptest! {
    #[test]
    fn fast_split_agrees_with_naive(text in "[a\r\n\u{b}\u{c}\u{1c}-\u{1f}\u{85}\u{80}\u{2028}\u{2029}\u{2027}é京]{0,40}") {
        proptest::prop_assert_eq!(split_lines(&text), naive_split(&text));
    }
}

#[test]
fn word_skipping_finds_every_break_at_every_offset() {
    for brk in ["\n", "\r", "\r\n", "\u{b}", "\u{c}", "\u{1c}", "\u{1d}", "\u{1e}", "\u{85}", "\u{2028}", "\u{2029}"] {
        for at in 0..20 {
            let text = format!("{}{brk}{}", "a".repeat(at), "b\tc d".repeat(4));
            assert_eq!(
                split_lines(&text),
                vec!["a".repeat(at).as_str(), "b\tc d".repeat(4).as_str()],
                "{brk:?} at {at}"
            );
        }
    }
    // Bytes that only look like candidates to the word test (tab, U+00E9, U+2027).
    let text = "\t\t\t\t\t\t\t\u{e9}\u{e9}\u{e9}\u{e9}\u{2027}\u{2027}\u{2027}x";
    assert_eq!(split_lines(text), vec![text]);
}
