//! Speaker identities: the canonical percent encoding of `speaker-id` lines and the
//! label sanitization of spec §4.

use crate::ids::percent_encode;
use crate::python::{char_len, is_printable, is_space, split_whitespace};

/// The most code points a normalized identity part keeps before `…` is appended.
pub const IDENTITY_PART_MAX_CHARS: usize = 64;

/// Encode a raw speaker id for a `speaker-id` line: Python `quote(id, safe="")`
/// (bytes outside `[A-Za-z0-9_.~]` become `%XX`, `/` included), then `-` → `%2D`.
pub fn encode_speaker_id(raw: &str) -> String {
    percent_encode(raw, |b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'~'))
}

/// Decode a `speaker-id` value, accepting only the canonical form: the value must
/// percent-decode to valid UTF-8 that re-encodes to exactly the same value.
pub fn decode_speaker_id(encoded: &str) -> Option<String> {
    let bytes = encoded.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hi = hex_value(*bytes.get(i + 1)?)?;
            let lo = hex_value(*bytes.get(i + 2)?)?;
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    let decoded = String::from_utf8(out).ok()?;
    (encode_speaker_id(&decoded) == encoded).then_some(decoded)
}

/// Whether a `speaker-id` value is in canonical form (see [`decode_speaker_id`]).
pub fn is_canonical_speaker_id(encoded: &str) -> bool {
    decode_speaker_id(encoded).is_some()
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'A'..=b'F' => Some(b - b'A' + 10),
        // Lowercase hex decodes, but never re-encodes to the same text: rejected later.
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    }
}

/// Normalize one identity part (display name, id or label) for a header, spec §4:
/// collapse Python whitespace, drop non-printable characters, `[`→`(`, `]`→`)`,
/// every `:`→`：` (U+FF1A), then cap at 64 code points plus `…`.
pub fn normalize_identity_part(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut first = true;
    for piece in split_whitespace(value) {
        if !first {
            out.push(' ');
        }
        first = false;
        for c in piece.chars().filter(|c| is_printable(*c)) {
            out.push(match c {
                '[' => '(',
                ']' => ')',
                ':' => '\u{ff1a}',
                other => other,
            });
        }
    }
    if char_len(&out) > IDENTITY_PART_MAX_CHARS {
        let mut capped: String = out.chars().take(IDENTITY_PART_MAX_CHARS).collect();
        capped.push('\u{2026}');
        return capped;
    }
    out
}

/// The speaker label of a record: `"display (id)"` when both normalized parts are
/// non-empty and differ, else whichever is non-empty, else the raw role.
pub fn speaker_label(role: &str, speaker_id: Option<&str>, speaker_display: Option<&str>) -> String {
    let display = normalize_identity_part(speaker_display.unwrap_or(""));
    let id = normalize_identity_part(speaker_id.unwrap_or(""));
    match (display.is_empty(), id.is_empty()) {
        (false, false) if display != id => format!("{display} ({id})"),
        (false, _) => display,
        (true, false) => id,
        (true, true) => role.to_owned(),
    }
}

/// The speaker identity a reader derives from a trusted v2 frame (spec §2.6).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpeakerView {
    /// The decoded raw speaker id (empty for display-only speakers).
    pub speaker_id: String,
    /// The display name, normalized.
    pub speaker_display: String,
    /// `display (id)`, or whichever half is present.
    pub speaker_label: String,
}

impl SpeakerView {
    /// Derive the speaker view from a decoded `speaker-id` value and the header label.
    ///
    /// The label is first stripped of Python whitespace: the header grammar's lazy
    /// `(.+?): ` keeps any spaces written before the colon, and the reference strips
    /// them. A display equal to the id labels the speaker as the id alone.
    pub fn from_frame(decoded_id: &str, header_label: &str) -> Self {
        let header_label = header_label.trim_matches(is_space);
        let nid = normalize_identity_part(decoded_id);
        let suffix = format!(" ({nid})");
        let display = if !nid.is_empty() && header_label.ends_with(&suffix) {
            header_label.get(..header_label.len() - suffix.len()).unwrap_or_default().to_owned()
        } else if header_label != nid {
            header_label.to_owned()
        } else {
            String::new()
        };
        let display = normalize_identity_part(&display);
        let speaker_label = match (display.is_empty(), nid.is_empty()) {
            (false, false) if display != nid => format!("{display} ({nid})"),
            (false, false) => nid.clone(),
            (false, true) => display.clone(),
            (true, _) => nid.clone(),
        };
        SpeakerView { speaker_id: decoded_id.to_owned(), speaker_display: display, speaker_label }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Python whitespace of several kinds, as a writer or a hand edit may leave around a label.
    fn python_space() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![Just(' '), Just('\t'), Just('\u{a0}'), Just('\u{3000}'), Just('\u{1f}')],
            0..4,
        )
        .prop_map(|chars| chars.into_iter().collect())
    }

    proptest! {
        /// Whitespace around a structured label changes nothing, and the reader's label is
        /// the writer's label for every display/id pair.
        #[test]
        fn structured_label_ignores_surrounding_whitespace(
            id in "[a-z0-9/]{1,8}",
            display in "[A-Za-z0-9 ]{0,8}",
            before in python_space(),
            after in python_space(),
        ) {
            let written = speaker_label("user", Some(&id), Some(&display));
            let bare = SpeakerView::from_frame(&id, &written);
            let padded = SpeakerView::from_frame(&id, &format!("{before}{written}{after}"));
            prop_assert_eq!(&padded, &bare);
            prop_assert_eq!(padded.speaker_label, written);
        }

        /// A display equal to the id labels the speaker as the id alone.
        #[test]
        fn display_equal_to_id_labels_as_the_id(id in "[a-z0-9]{1,8}", after in python_space()) {
            let view = SpeakerView::from_frame(&id, &format!("{id} ({id}){after}"));
            prop_assert_eq!(&view.speaker_display, &id);
            prop_assert_eq!(&view.speaker_label, &id);
        }
    }

    #[test]
    fn structured_label_examples() {
        let view = SpeakerView::from_frame("u-1", "Alice (u-1) ");
        assert_eq!((view.speaker_display.as_str(), view.speaker_label.as_str()), ("Alice", "Alice (u-1)"));
        let view = SpeakerView::from_frame("u-1", "u-1 (u-1)");
        assert_eq!((view.speaker_display.as_str(), view.speaker_label.as_str()), ("u-1", "u-1"));
        let view = SpeakerView::from_frame("u-1", "u-1\t");
        assert_eq!((view.speaker_display.as_str(), view.speaker_label.as_str()), ("", "u-1"));
    }

    #[test]
    fn encodes_like_python_quote_with_dash_escaped() {
        assert_eq!(encode_speaker_id("7391"), "7391");
        assert_eq!(encode_speaker_id("u-1"), "u%2D1");
        assert_eq!(encode_speaker_id("a/b"), "a%2Fb");
        assert_eq!(encode_speaker_id("é"), "%C3%A9");
        assert_eq!(encode_speaker_id("runtime:legacy-core"), "runtime%3Alegacy%2Dcore");
        assert_eq!(encode_speaker_id("~x_y.z"), "~x_y.z");
    }

    #[test]
    fn only_canonical_values_decode() {
        assert_eq!(decode_speaker_id("u%2D1").as_deref(), Some("u-1"));
        assert_eq!(decode_speaker_id("").as_deref(), Some(""));
        for bad in ["%2d", "%41", "%7E", "%ZZ", "a-b", "--", "%C3", "%"] {
            assert!(decode_speaker_id(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn label_example_from_spec() {
        assert_eq!(speaker_label("user", Some("u: 456]\u{0}"), Some("B:\n[admin]\u{1b}")), "B： (admin) (u： 456))");
        assert_eq!(speaker_label("assistant", None, Some("")), "assistant");
    }

    #[test]
    fn long_parts_are_capped() {
        let long = "x".repeat(70);
        let out = normalize_identity_part(&long);
        assert_eq!(out.chars().count(), 65);
        assert!(out.ends_with('…'));
    }
}
