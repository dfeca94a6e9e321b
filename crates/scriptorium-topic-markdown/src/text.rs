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
    let bytes = text.as_bytes();
    let mut lines = Vec::with_capacity(bytes.len() / 40 + 1);
    let mut start = 0;
    let mut at = 0;
    while let Some(offset) = bytes.get(at..).and_then(find_break_candidate) {
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

/// Whether a byte may start a line break: the ASCII breaks, 0xC2 (U+0085) and 0xE2
/// (U+2028, U+2029).
fn is_break_candidate(b: &u8) -> bool {
    matches!(b, 0x0a..=0x0d | 0x1c..=0x1e | 0xc2 | 0xe2)
}

/// The index of the first [`is_break_candidate`] byte. Eight bytes at a time: a word
/// with no byte below 0x1F and none equal to 0xC2 or 0xE2 is skipped whole (the
/// bit tests never miss such a byte; a word they flag is checked byte by byte).
fn find_break_candidate(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS != 0;
    let mut chunks = bytes.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let below = x.wrapping_sub(ONES * 0x1f) & !x & HIGHS != 0;
        if (below || has_zero(x ^ (ONES * 0xc2)) || has_zero(x ^ (ONES * 0xe2)))
            && let Some(offset) = chunk.iter().position(is_break_candidate)
        {
            return Some(base + offset);
        }
        base += 8;
    }
    chunks.remainder().iter().position(is_break_candidate).map(|offset| base + offset)
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
