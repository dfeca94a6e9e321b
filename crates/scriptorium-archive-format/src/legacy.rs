//! The legacy reader (spec 01 §3.2, §3.3): retrieval events from pre-v2 provider
//! archives and benchmark `sources/D<conv>.md` files.
//!
//! Legacy files are untrusted by construction: anything shaped like a runtime record
//! is read as one, even inside another record's body, and no speaker is ever trusted.
//! The only speaker information is a retrieval hint taken from the body prefix of
//! unframed `user` records.

mod record;

use sha2::{Digest, Sha256};

use crate::event::SourceEvent;
use crate::fields::split_record_header;
use crate::ids::{legacy_location, source_anchor};
use crate::python::{casefold, is_space, push_ascii_json_string};
use crate::retrieval_text::{benchmark_refs, clean_retrieval_text};
use crate::speaker::{SpeakerView, normalize_identity_part};

pub use self::record::{LegacyRecord, legacy_record};

/// The prefix of the id of an event that has no source id of its own.
pub(crate) const ANONYMOUS_PREFIX: &str = "lex_";

/// The events of a non-v2 source file, in line order.
pub(crate) fn legacy_events(path: &str, text: &str) -> Vec<SourceEvent> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut headings: Vec<String> = Vec::new();
    let mut events = Vec::new();
    let mut index = 0;
    while let Some(line) = lines.get(index) {
        if let Some(record) = RuntimeRecord::at(path, &lines, index) {
            let mut event = record.event(path, &lines);
            event.headings.clone_from(&headings);
            events.push(event);
            index = record.end();
            continue;
        }
        let stripped = line.trim_matches(is_space);
        if let Some((level, title)) = heading(stripped) {
            headings.truncate(level - 1);
            headings.push(title.to_owned());
        } else if !(stripped.is_empty() || stripped.starts_with("<a ") || stripped.starts_with("<!--")) {
            let refs = benchmark_refs(line);
            if !refs.is_empty() {
                let content = clean_retrieval_text(line);
                let id = anonymous_event_id(path, index + 1, &content, &refs);
                let mut event = SourceEvent::new(path, index + 1, id, content, refs);
                event.headings.clone_from(&headings);
                events.push(event);
            }
        }
        index += 1;
    }
    events
}

/// A runtime record found at an anchor line: its source id, where its header line
/// is, how many lines it covers, and whether a `record-lines` line framed it.
struct RuntimeRecord<'a> {
    source_id: &'a str,
    header: usize,
    count: usize,
    framed: bool,
}

impl<'a> RuntimeRecord<'a> {
    /// Recognise `<a id="X"></a>` / `<!-- source-id:Y -->` where `Y`'s legacy location is
    /// this file and its anchor is `X`, then the optional `speaker-id` and
    /// `record-lines` lines, then a record header with all covered lines present.
    fn at(path: &str, lines: &[&'a str], index: usize) -> Option<Self> {
        let anchor = lenient_anchor(lines.get(index)?)?;
        let source_id = lenient_comment(lines.get(index + 1)?, "source-id")?;
        if legacy_location(source_id)? != path || source_anchor(source_id) != anchor {
            return None;
        }
        let mut header = index + 2;
        // A legacy `speaker-id` line is skipped and never believed.
        if lenient_comment(lines.get(header)?, "speaker-id").is_some() {
            header += 1;
        }
        let declared = lenient_comment(lines.get(header)?, "record-lines")
            .filter(|value| !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()))
            .map(|value| value.parse::<usize>().ok());
        let (count, framed) = match declared {
            Some(count) => {
                header += 1;
                (count?, true)
            }
            None => (1, false),
        };
        split_record_header(lines.get(header)?)?;
        (count >= 1 && header.checked_add(count)? <= lines.len()).then_some(RuntimeRecord {
            source_id,
            header,
            count,
            framed,
        })
    }

    /// The index of the first line after the record.
    fn end(&self) -> usize {
        self.header + self.count
    }

    fn event(&self, path: &str, lines: &[&str]) -> SourceEvent {
        let covered = lines.get(self.header..self.end()).unwrap_or_default();
        let content = clean_retrieval_text(&covered.join("\n"));
        let mut event = SourceEvent::new(
            path,
            self.header + 1,
            self.source_id.to_owned(),
            content,
            vec![self.source_id.to_owned()],
        );
        if !self.framed {
            let header = covered.first().and_then(|line| split_record_header(line));
            if let Some(speaker) = header.and_then(|header| legacy_speaker(header.label, header.content)) {
                event.set_speaker(speaker);
            }
        }
        event
    }
}

/// `<a id="X"></a>` with whitespace allowed around it → `X` (non-empty).
fn lenient_anchor(line: &str) -> Option<&str> {
    let anchor = line.trim_matches(is_space).strip_prefix("<a id=\"")?.strip_suffix("\"></a>")?;
    (!anchor.is_empty() && !anchor.contains('"')).then_some(anchor)
}

/// `<!-- NAME:VALUE -->` with whitespace allowed around the line, inside the comment
/// markers and around the value → `VALUE`.
fn lenient_comment<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let inner = line.trim_matches(is_space).strip_prefix("<!--")?.strip_suffix("-->")?;
    let value = inner.trim_matches(is_space).strip_prefix(name)?.strip_prefix(':')?;
    Some(value.trim_matches(is_space))
}

/// A Markdown ATX heading `#{1,6} title` (of a stripped line) → (level, title).
fn heading(stripped: &str) -> Option<(usize, &str)> {
    let level = stripped.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = stripped.get(level..)?;
    if !rest.starts_with(is_space) {
        return None;
    }
    let title = rest.trim_matches(is_space);
    (!title.is_empty()).then_some((level, title))
}

/// The retrieval-only speaker hint of an unframed legacy record (spec 01 §3.3).
///
/// `label` is the record's header label and `body` its content (only the first line
/// counts). Only a label that normalizes and case-folds to `user` qualifies; the body
/// must then start with `[L]`, and the normalized bracket text `L` is either
/// `display (id)` or a bare display name. Returns `None` when there is no hint.
///
/// ```
/// use scriptorium_archive_format::legacy_speaker;
///
/// let hint = legacy_speaker("User", "[Priya (U02ABC)] x").expect("user records carry a hint");
/// assert_eq!((hint.speaker_id.as_str(), hint.speaker_display.as_str()), ("U02ABC", "Priya"));
/// assert!(legacy_speaker("assistant", "[Dave (u42)] hi").is_none());
/// ```
pub fn legacy_speaker(label: &str, body: &str) -> Option<SpeakerView> {
    if casefold(&normalize_identity_part(label)) != "user" {
        return None;
    }
    let first_line = body.split('\n').next().unwrap_or_default();
    let inner = first_line.strip_prefix('[')?;
    let bracket = inner.get(..inner.find(']')?)?;
    if bracket.is_empty() || bracket.contains('\r') {
        return None;
    }
    let label = normalize_identity_part(bracket);
    if label.is_empty() {
        return None;
    }
    let (display, id) = split_display_and_id(&label).unwrap_or((&label, ""));
    Some(SpeakerView { speaker_id: id.to_owned(), speaker_display: display.to_owned(), speaker_label: label.clone() })
}

/// Python `re.fullmatch(r"(.+) \(([^()]*)\)", label)` → (display, id).
fn split_display_and_id(label: &str) -> Option<(&str, &str)> {
    let without_close = label.strip_suffix(')')?;
    // The id holds no parenthesis, so its `(` is the last one in the label.
    let open = without_close.rfind('(')?;
    let id = without_close.get(open + 1..)?;
    let display = without_close.get(..open)?.strip_suffix(' ')?;
    (!display.is_empty() && !id.contains(')')).then_some((display, id))
}

/// The id of an event that has no source id (a loose legacy line citing benchmark
/// refs): `lex_` + the first 16 hex digits of SHA-256 over Python's
/// `json.dumps([path, line, content, refs])` (default separators, ASCII-only escapes).
///
/// ```
/// use scriptorium_archive_format::anonymous_event_id;
///
/// let content = "[2024-01-02] user: I adopted a cat named Miso. [D1:1]";
/// let id = anonymous_event_id("sources/D1.md", 4, content, &["D1:1".to_owned()]);
/// assert_eq!(id, "lex_7d48a17d14fc4bba");
/// ```
pub fn anonymous_event_id(path: &str, line: usize, content: &str, refs: &[String]) -> String {
    let mut json = String::with_capacity(path.len() + content.len() + 32);
    json.push('[');
    push_ascii_json_string(&mut json, path);
    json.push_str(&format!(", {line}, "));
    push_ascii_json_string(&mut json, content);
    json.push_str(", [");
    for (n, reference) in refs.iter().enumerate() {
        if n > 0 {
            json.push_str(", ");
        }
        push_ascii_json_string(&mut json, reference);
    }
    json.push_str("]]");
    let digest = Sha256::digest(json.as_bytes());
    let mut id = String::with_capacity(ANONYMOUS_PREFIX.len() + 16);
    id.push_str(ANONYMOUS_PREFIX);
    for byte in digest.iter().take(8) {
        id.push_str(&format!("{byte:02x}"));
    }
    id
}

#[cfg(test)]
mod tests;
