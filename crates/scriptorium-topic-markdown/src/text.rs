//! Python string rules topic parsing relies on: `str.splitlines()`, `strip()`, and
//! `\s` as Python's Unicode whitespace (decision Q2: Rust's Unicode tables).

pub(crate) use scriptorium_archive_format::text::{collapse_whitespace, is_space};

/// Python `str.splitlines()` (without `keepends`): line breaks are LF, CR, CRLF, VT,
/// FF, U+001C, U+001D, U+001E, U+0085, U+2028 and U+2029; a final break does not
/// start an empty last line.
///
/// Reading a topic file with universal newlines and then splitting gives the same
/// lines as splitting the raw text here, because CR and CRLF are breaks too.
pub fn split_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if !is_line_break(c) {
            continue;
        }
        lines.push(text.get(start..at).unwrap_or_default());
        let mut next = at + c.len_utf8();
        if c == '\r' && chars.peek().is_some_and(|&(_, n)| n == '\n') {
            chars.next();
            next += 1;
        }
        start = next;
    }
    if start < text.len() {
        lines.push(text.get(start..).unwrap_or_default());
    }
    lines
}

/// Whether `c` ends a line for `str.splitlines()`.
pub(crate) fn is_line_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{b}' | '\u{c}' | '\u{1c}' | '\u{1d}' | '\u{1e}' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// Python `str.strip()`.
pub(crate) fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// Python `str.lstrip()`.
pub(crate) fn lstrip(s: &str) -> &str {
    s.trim_start_matches(is_space)
}

/// Python `str.rstrip()`.
pub(crate) fn rstrip(s: &str) -> &str {
    s.trim_end_matches(is_space)
}

/// Whether every character is whitespace (`not s.strip()`).
pub(crate) fn is_blank(s: &str) -> bool {
    s.chars().all(is_space)
}

/// The value a regex tail `\s*(.+?)\s*$` captures from `s`: leading and trailing
/// whitespace dropped, except that a whitespace-only `s` of at least one character
/// still yields its last character (the lazy group needs one), and an empty `s` fails.
pub(crate) fn lazy_rest(s: &str) -> Option<&str> {
    let trimmed = lstrip(s);
    if trimmed.is_empty() {
        let last = s.char_indices().next_back()?.0;
        return s.get(last..);
    }
    Some(rstrip(trimmed))
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// The first `len` lowercase hex digits of SHA-256(`text`).
pub(crate) fn sha256_hex_prefix(text: &str, len: usize) -> String {
    use sha2::{Digest, Sha256};
    let mut digest = hex(&Sha256::digest(text.as_bytes()));
    digest.truncate(len);
    digest
}

#[cfg(test)]
mod tests;
