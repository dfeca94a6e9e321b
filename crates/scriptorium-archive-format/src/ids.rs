//! Source ids (`provider/thread/message`), their archive paths and anchors.

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use crate::python::is_printable;

/// The parts of a source id: `provider/thread/message`, split on the first two `/`.
///
/// Invariant: all three parts are non-empty and the provider is not `.` or `..`;
/// the message part may contain further `/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceIdParts<'a> {
    /// The provider, for example `openprogram`.
    pub provider: &'a str,
    /// The thread (conversation) id.
    pub thread: &'a str,
    /// The message id; may itself contain `/`.
    pub message: &'a str,
}

/// Split a source id into its parts, or `None` when it has no valid shape.
pub fn split_source_id(id: &str) -> Option<SourceIdParts<'_>> {
    let (provider, rest) = id.split_once('/')?;
    let (thread, message) = rest.split_once('/')?;
    if provider.is_empty() || thread.is_empty() || message.is_empty() {
        return None;
    }
    if provider == "." || provider == ".." {
        return None;
    }
    Some(SourceIdParts { provider, thread, message })
}

/// Python `urllib.parse.quote(s, safe="-_.")`: every UTF-8 byte outside
/// `[A-Za-z0-9_.~-]` becomes `%XX` with uppercase hex.
pub fn quote_path_component(s: &str) -> String {
    percent_encode(s, |b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'~' | b'-'))
}

/// Percent-encode every byte that `keep` rejects, with uppercase hex digits.
pub(crate) fn percent_encode(s: &str, keep: impl Fn(u8) -> bool) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if keep(b) {
            out.push(char::from(b));
        } else {
            // Writing to a String cannot fail.
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The workspace-relative path of the v2 archive that holds `id`:
/// `sources/<quote(provider)>/_v2/<quote(thread)>.md`.
pub fn v2_location(id: &str) -> Option<String> {
    let parts = split_source_id(id)?;
    Some(format!("sources/{}/_v2/{}.md", quote_path_component(parts.provider), quote_path_component(parts.thread)))
}

/// The workspace-relative path of the legacy (v1) archive that held `id`:
/// `sources/<quote(provider)>/<quote(thread)>.md`.
pub fn legacy_location(id: &str) -> Option<String> {
    let parts = split_source_id(id)?;
    Some(format!("sources/{}/{}.md", quote_path_component(parts.provider), quote_path_component(parts.thread)))
}

/// Whether `quote_path_component(raw) == encoded`, without allocating.
fn quoted_equals(raw: &str, encoded: &str) -> bool {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut rest = encoded.as_bytes();
    for &b in raw.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'~' | b'-') {
            let Some((&first, tail)) = rest.split_first() else { return false };
            if first != b {
                return false;
            }
            rest = tail;
        } else {
            let Some((&[percent, hi, lo], tail)) = rest.split_first_chunk::<3>() else { return false };
            if percent != b'%'
                || Some(&hi) != HEX.get(usize::from(b >> 4))
                || Some(&lo) != HEX.get(usize::from(b & 0xf))
            {
                return false;
            }
            rest = tail;
        }
    }
    rest.is_empty()
}

/// Whether `relative_path` is the v2 location of `id` (see [`v2_location`]), checked
/// without building the path: the scanner asks this once per frame.
pub(crate) fn is_v2_location_of(id: &str, relative_path: &str) -> bool {
    let Some(parts) = split_source_id(id) else { return false };
    let Some(rest) = relative_path.strip_prefix("sources/") else { return false };
    let Some((provider, rest)) = rest.split_once('/') else { return false };
    let Some(file) = rest.strip_prefix("_v2/") else { return false };
    let Some(thread) = file.strip_suffix(".md") else { return false };
    quoted_equals(parts.provider, provider) && quoted_equals(parts.thread, thread)
}

/// Whether `anchor` is exactly [`source_anchor`]`(id)`, checked without allocating.
pub(crate) fn anchor_matches(anchor: &str, id: &str) -> bool {
    let Some(hex) = anchor.strip_prefix("source-") else { return false };
    if hex.len() != 16 {
        return false;
    }
    let digest = Sha256::digest(id.as_bytes());
    hex.as_bytes().chunks_exact(2).zip(digest.iter()).all(|(pair, byte)| {
        let nibble = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        };
        match pair {
            [hi, lo] => nibble(*hi).zip(nibble(*lo)).is_some_and(|(hi, lo)| hi << 4 | lo == *byte),
            _ => false,
        }
    })
}

/// The HTML anchor of a source id: `source-` + the first 16 hex digits of SHA-256(id).
pub fn source_anchor(id: &str) -> String {
    let digest = Sha256::digest(id.as_bytes());
    let mut out = String::with_capacity(23);
    out.push_str("source-");
    for byte in digest.iter().take(8) {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// Whether `id` may be written to and read from a v2 archive: it has a v2 location,
/// every character is printable (Python `str.isprintable`), and none of `[ ] < >`,
/// CR or LF occurs.
pub fn is_valid_v2_source_id(id: &str) -> bool {
    split_source_id(id).is_some()
        && id.chars().all(|c| is_printable(c) && !matches!(c, '[' | ']' | '<' | '>' | '\r' | '\n'))
}

/// Whether a workspace-relative path names a v2 archive: after dropping a leading
/// `sources` component it has at least three components and the second-to-last is `_v2`.
pub fn is_v2_source_path(relative: &str) -> bool {
    let mut parts: Vec<&str> = relative.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    if parts.first() == Some(&"sources") {
        parts.remove(0);
    }
    parts.len() >= 3 && parts.get(parts.len() - 2) == Some(&"_v2")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_example_location_and_anchor() {
        let id = "openprogram/sess-7f2a/msg_2f9b";
        assert_eq!(source_anchor(id), "source-9047c1917b2f0777");
        assert_eq!(v2_location(id).as_deref(), Some("sources/openprogram/_v2/sess-7f2a.md"));
    }

    #[test]
    fn quote_keeps_python_safe_set() {
        assert_eq!(quote_path_component("Slack Bot"), "Slack%20Bot");
        assert_eq!(quote_path_component("a.b_c-d~"), "a.b_c-d~");
        assert_eq!(quote_path_component("acct%3A-100"), "acct%253A-100");
        assert_eq!(quote_path_component("é/"), "%C3%A9%2F");
    }

    #[test]
    fn allocation_free_checks_agree_with_the_builders() {
        for id in ["openprogram/sess-7f2a/msg_2f9b", "Slack Bot/C 01/x", "é/ü:1/m", "a/b/c/d"] {
            let path = v2_location(id).expect("valid id");
            assert!(is_v2_location_of(id, &path), "{id}");
            assert!(!is_v2_location_of(id, &path.replace(".md", "x.md")), "{id}");
            assert!(anchor_matches(&source_anchor(id), id));
            assert!(!anchor_matches(&source_anchor(id).to_uppercase(), id));
        }
        assert!(!is_v2_location_of("a/b/c", "sources/a/b.md"));
        assert!(!anchor_matches("source-00", "a/b/c"));
    }

    #[test]
    fn id_shapes() {
        assert!(split_source_id("a/b/c/d").is_some());
        assert!(split_source_id("../b/c").is_none());
        assert!(split_source_id("a//c").is_none());
        assert!(!is_valid_v2_source_id("a/b/c\u{a0}"));
        assert!(is_valid_v2_source_id("a/b/c d"));
        assert!(is_v2_source_path("sources/_v2/_v2/t.md"));
        assert!(!is_v2_source_path("sources/_v2/t.md"));
    }
}
