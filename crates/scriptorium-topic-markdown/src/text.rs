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
    // Bytes that may start a line break: the ASCII breaks, 0xC2 (U+0085) and 0xE2
    // (U+2028, U+2029). Everything else is skipped without decoding.
    let candidate = |b: &u8| matches!(b, 0x0a..=0x0d | 0x1c..=0x1e | 0xc2 | 0xe2);
    let bytes = text.as_bytes();
    let mut lines = Vec::with_capacity(bytes.len() / 40 + 1);
    let mut start = 0;
    let mut at = 0;
    while let Some(offset) = bytes.get(at..).and_then(|rest| rest.iter().position(candidate)) {
        at += offset;
        let width = match bytes.get(at..at + 3).unwrap_or_else(|| bytes.get(at..).unwrap_or_default()) {
            [b'\r', b'\n', ..] => 2,
            [0xc2, 0x85, ..] => 2,
            [0xe2, 0x80, 0xa8 | 0xa9] => 3,
            [0xc2 | 0xe2, ..] => {
                at += 1;
                continue;
            }
            _ => 1,
        };
        lines.push(text.get(start..at).unwrap_or_default());
        at += width;
        start = at;
    }
    if start < bytes.len() {
        lines.push(text.get(start..).unwrap_or_default());
    }
    lines
}

/// Whether `c` ends a line for `str.splitlines()` (the reference for the fast splitter).
#[cfg(test)]
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
