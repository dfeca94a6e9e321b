//! The v2 archive scanner (spec 01 §2.5): total, sequential, never resynchronises.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::FORMAT_MARKER;
use crate::fields;
use crate::ids::{anchor_matches, is_v2_location_of, is_valid_v2_source_id};
use crate::meta::SourceMeta;
use crate::speaker::decode_speaker_id;

/// One valid frame of a v2 archive. Text fields borrow from the scanned input.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Frame<'a> {
    /// The source id (`provider/thread/message`).
    pub source_id: &'a str,
    /// The raw value of the `speaker-id` line, if the frame has one (may be empty).
    pub encoded_speaker_id: Option<&'a str>,
    /// The decoded speaker id, present exactly when `encoded_speaker_id` is (borrowed
    /// from the input when the value holds no percent escape).
    pub speaker_id: Option<Cow<'a, str>>,
    /// The decoded `source-meta`, if the frame has that line. Shared between the
    /// frames that carry the same token, which most frames of a file do.
    pub meta: Option<Arc<SourceMeta>>,
    /// The 0-based line index of the anchor line (lines split on LF only).
    pub frame_start: usize,
    /// The 0-based line index of the `source-meta` line, if any.
    pub meta_line: Option<usize>,
    /// The 0-based line index of the record's header line.
    pub record_start: usize,
    /// The 0-based line index of the empty terminator line after the record.
    pub record_end: usize,
    /// The record's lines joined with LF (header line first; CR kept).
    pub record_text: &'a str,
    /// Byte offset of the anchor line.
    pub start_byte: usize,
    /// Byte offset of the record text.
    pub record_byte: usize,
    /// Byte offset just past the terminator line (past its LF when it has one).
    pub end_byte: usize,
}

impl Frame<'_> {
    /// The metadata a reader applies: the frame's own, or the trusted default for a
    /// frame without a `source-meta` line (decision Q7).
    pub fn effective_meta(&self) -> SourceMeta {
        self.meta.as_deref().cloned().unwrap_or_default()
    }

    /// The number of record lines (`record-lines:N`).
    pub fn record_lines(&self) -> usize {
        self.record_end - self.record_start
    }
}

/// Why a scan stopped before the end of its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StopReason {
    /// The input does not start with the marker line and an empty line.
    MissingMarker,
    /// The input ends inside a frame.
    Truncated,
    /// Where a frame should start, the line is not an anchor line.
    BadAnchorLine,
    /// The line after an anchor is not a `source-id` line.
    BadSourceLine,
    /// The source id is not a valid v2 source id.
    InvalidSourceId,
    /// The source id belongs to another archive file.
    WrongArchive,
    /// The anchor does not match the source id.
    AnchorMismatch,
    /// The source id already appeared earlier in this file.
    DuplicateSourceId,
    /// A `speaker-id` value is not canonically percent-encoded UTF-8.
    NonCanonicalSpeakerId,
    /// A `source-meta` token is not a canonical token of an accepted shape.
    InvalidSourceMeta,
    /// The `record-lines` line is missing or holds no valid count.
    BadRecordCount,
    /// The record's first line is not `[timestamp] label: text`.
    BadRecordHeader,
    /// The line after the record is not empty.
    MissingTerminator,
    /// The bytes are not UTF-8 from this line on.
    NotUtf8,
}

impl StopReason {
    /// Every reason, for the registry test.
    pub const ALL: &'static [StopReason] = &[
        Self::MissingMarker,
        Self::Truncated,
        Self::BadAnchorLine,
        Self::BadSourceLine,
        Self::InvalidSourceId,
        Self::WrongArchive,
        Self::AnchorMismatch,
        Self::DuplicateSourceId,
        Self::NonCanonicalSpeakerId,
        Self::InvalidSourceMeta,
        Self::BadRecordCount,
        Self::BadRecordHeader,
        Self::MissingTerminator,
        Self::NotUtf8,
    ];

    /// The stable string code, for example `"ARCHIVE_STOP_TRUNCATED"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::MissingMarker => "ARCHIVE_STOP_MISSING_MARKER",
            Self::Truncated => "ARCHIVE_STOP_TRUNCATED",
            Self::BadAnchorLine => "ARCHIVE_STOP_BAD_ANCHOR_LINE",
            Self::BadSourceLine => "ARCHIVE_STOP_BAD_SOURCE_LINE",
            Self::InvalidSourceId => "ARCHIVE_STOP_INVALID_SOURCE_ID",
            Self::WrongArchive => "ARCHIVE_STOP_WRONG_ARCHIVE",
            Self::AnchorMismatch => "ARCHIVE_STOP_ANCHOR_MISMATCH",
            Self::DuplicateSourceId => "ARCHIVE_STOP_DUPLICATE_SOURCE_ID",
            Self::NonCanonicalSpeakerId => "ARCHIVE_STOP_NON_CANONICAL_SPEAKER_ID",
            Self::InvalidSourceMeta => "ARCHIVE_STOP_INVALID_SOURCE_META",
            Self::BadRecordCount => "ARCHIVE_STOP_BAD_RECORD_COUNT",
            Self::BadRecordHeader => "ARCHIVE_STOP_BAD_RECORD_HEADER",
            Self::MissingTerminator => "ARCHIVE_STOP_MISSING_TERMINATOR",
            Self::NotUtf8 => "ARCHIVE_STOP_NOT_UTF8",
        }
    }

    /// A short human explanation.
    pub const fn describe(self) -> &'static str {
        match self {
            Self::MissingMarker => "the file does not start with the v2 marker line and an empty line",
            Self::Truncated => "the file ends inside a frame",
            Self::BadAnchorLine => "expected an anchor line `<a id=\"source-…\"></a>`",
            Self::BadSourceLine => "expected a `<!-- source-id:… -->` line",
            Self::InvalidSourceId => "the source id is not a valid v2 source id",
            Self::WrongArchive => "the source id belongs to another archive file",
            Self::AnchorMismatch => "the anchor does not match the source id",
            Self::DuplicateSourceId => "the source id repeats an earlier frame",
            Self::NonCanonicalSpeakerId => "the speaker id is not canonically percent-encoded",
            Self::InvalidSourceMeta => "the source-meta token is not canonical",
            Self::BadRecordCount => "expected a `<!-- record-lines:N -->` line with 1 <= N",
            Self::BadRecordHeader => "the record does not start with `[timestamp] label: `",
            Self::MissingTerminator => "the line after the record is not empty",
            Self::NotUtf8 => "the bytes are not valid UTF-8",
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where and why a scan stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stop {
    /// The 0-based line index after the last good frame (2 when no frame was read
    /// after a valid marker, 0 when the marker itself is bad): the reference's
    /// `stopped_at_line`.
    pub line: usize,
    /// The byte offset of that line.
    pub byte: usize,
    /// Why the scan stopped.
    pub reason: StopReason,
}

/// The result of scanning an archive: the valid prefix of frames and, when the
/// input was not consumed entirely, where and why the scan stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Parsed<'a> {
    /// The valid frames, in file order.
    pub frames: Vec<Frame<'a>>,
    /// `None` exactly when the whole input is a complete archive.
    pub stop: Option<Stop>,
}

impl Parsed<'_> {
    /// Whether the whole input was a complete archive.
    pub fn is_complete(&self) -> bool {
        self.stop.is_none()
    }

    /// The byte length of the valid prefix: everything up to and including the last
    /// good frame's terminator line (or the marker lines).
    pub fn valid_prefix_len(&self, input_len: usize) -> usize {
        match self.stop {
            None => input_len,
            Some(stop) => stop.byte,
        }
    }
}

/// A cursor over LF-separated lines that never materialises a line table, so memory
/// stays O(frames) whatever the input.
struct Lines<'a> {
    text: &'a str,
}

impl<'a> Lines<'a> {
    /// The line starting at `pos` and the start of the next line, if there is one.
    fn at(&self, pos: usize) -> (&'a str, Option<usize>) {
        let rest = self.text.get(pos..).unwrap_or_default();
        match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(n) => (rest.get(..n).unwrap_or_default(), Some(pos + n + 1)),
            None => (rest, None),
        }
    }

    /// Skip `count` whole lines from `pos`; the start of the line after them, or `None`
    /// when the input holds fewer line ends. The declared count is checked against
    /// the remaining bytes first, so a huge count costs nothing.
    fn skip(&self, pos: usize, count: usize) -> Option<usize> {
        let rest = self.text.as_bytes().get(pos..)?;
        if count > rest.len() {
            return None;
        }
        let (n, offset) = memchr::memchr_iter(b'\n', rest).enumerate().nth(count.checked_sub(1)?)?;
        debug_assert_eq!(n + 1, count);
        Some(pos + offset + 1)
    }
}

/// Scan a v2 archive held in `text`, located at the workspace-relative
/// `relative_path` (frames must belong to that file).
pub fn parse<'a>(text: &'a str, relative_path: &str) -> Parsed<'a> {
    let mut frames = Frames::new(text, relative_path);
    let collected = frames.by_ref().collect();
    Parsed { frames: collected, stop: frames.stop() }
}

/// Scan a v2 archive frame by frame, holding no more than the current frame: for
/// archives too large to collect. The iterator ends at the first bad frame or the end
/// of the input; [`Frames::stop`] then says which.
///
/// ```
/// use scriptorium_archive_format::{Frames, FORMAT_MARKER};
///
/// let text = format!("{FORMAT_MARKER}\n\n");
/// let mut frames = Frames::new(&text, "sources/p/_v2/t.md");
/// assert_eq!(frames.by_ref().count(), 0);
/// assert!(frames.stop().is_none());
/// ```
pub struct Frames<'a, 'p> {
    scanner: Scanner<'a, 'p>,
    state: State,
}

/// Where a [`Frames`] iterator stands.
#[derive(Clone, Copy)]
enum State {
    /// Not started: the marker lines are checked first.
    Start,
    /// The next frame starts at this byte and line.
    At { pos: usize, index: usize },
    /// Finished, with the stop if the input was not complete.
    Done(Option<Stop>),
}

impl<'a, 'p> Frames<'a, 'p> {
    /// A scan of `text`, located at the workspace-relative `relative_path`.
    pub fn new(text: &'a str, relative_path: &'p str) -> Self {
        let scanner =
            Scanner { lines: Lines { text }, relative_path, seen: HashSet::new(), metas: MetaCache::default() };
        Frames { scanner, state: State::Start }
    }

    /// Once the iterator has returned `None`: `None` when the whole input was a
    /// complete archive, else where and why the scan stopped. Before that, `None`.
    pub fn stop(&self) -> Option<Stop> {
        match self.state {
            State::Done(stop) => stop,
            State::Start | State::At { .. } => None,
        }
    }

    fn finish(&mut self, stop: Option<Stop>) -> Option<Frame<'a>> {
        self.state = State::Done(stop);
        None
    }
}

impl<'a> Iterator for Frames<'a, '_> {
    type Item = Frame<'a>;

    fn next(&mut self) -> Option<Frame<'a>> {
        let (pos, index) = match self.state {
            State::Done(_) => return None,
            State::At { pos, index } => (pos, index),
            State::Start => {
                let missing = Some(Stop { line: 0, byte: 0, reason: StopReason::MissingMarker });
                let (marker, next) = self.scanner.lines.at(0);
                let Some(blank_pos) = next.filter(|_| marker == FORMAT_MARKER) else {
                    return self.finish(missing);
                };
                let (blank, first) = self.scanner.lines.at(blank_pos);
                let Some(pos) = first.filter(|_| blank.is_empty()) else {
                    return self.finish(missing);
                };
                (pos, 2)
            }
        };
        match self.scanner.frame(pos, index) {
            Step::Complete => self.finish(None),
            Step::Stop(reason) => self.finish(Some(Stop { line: index, byte: pos, reason })),
            Step::Frame { frame, next_pos, next_index } => {
                self.state = match next_pos {
                    Some(pos) => State::At { pos, index: next_index },
                    // The terminator was the last line: the input is exhausted.
                    None => State::Done(None),
                };
                Some(*frame)
            }
        }
    }
}

/// Scan archive bytes: like [`parse`], but invalid UTF-8 stops the scan at the line
/// that holds the first bad byte instead of rejecting the whole file.
pub fn parse_bytes<'a>(bytes: &'a [u8], relative_path: &str) -> Parsed<'a> {
    if let Ok(text) = simdutf8::basic::from_utf8(bytes) {
        return parse(text, relative_path);
    }
    let valid_up_to = match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(e) => e.valid_up_to(),
    };
    let bad_line_start = bytes.get(..valid_up_to).and_then(|b| memchr::memrchr(b'\n', b)).map_or(0, |n| n + 1);
    let bad_line = bytes.get(..bad_line_start).map_or(0, |b| memchr::memchr_iter(b'\n', b).count());
    // The valid prefix ends with the LF before the bad line, so it is UTF-8.
    let prefix = bytes.get(..bad_line_start).and_then(|b| std::str::from_utf8(b).ok()).unwrap_or_default();
    let mut parsed = parse(prefix, relative_path);
    // A frame whose terminator would be the bad line is not a frame of the real file.
    parsed.frames.retain(|frame| frame.record_end < bad_line);
    // A scan that ran out of input ran out because the bad line was cut off.
    if parsed.stop.is_none_or(|stop| stop.line >= bad_line || stop.reason == StopReason::Truncated) {
        let (line, byte) = match parsed.frames.last() {
            Some(last) => (last.record_end + 1, last.end_byte),
            None if bad_line >= 2 && prefix.starts_with(FORMAT_MARKER) => (2, FORMAT_MARKER.len() + 2),
            None => (0, 0),
        };
        parsed.stop = Some(Stop { line, byte: byte.min(bad_line_start), reason: StopReason::NotUtf8 });
    }
    parsed
}

struct Scanner<'a, 'p> {
    lines: Lines<'a>,
    relative_path: &'p str,
    seen: HashSet<&'a str>,
    /// Decoded `source-meta` tokens: a file holds few distinct ones, and decoding
    /// (base64, JSON, canonical re-encoding) is the costliest per-frame step.
    metas: MetaCache<'a>,
}

impl<'a> Scanner<'a, '_> {
    /// Read the frame starting at line `index` (byte `pos`).
    fn frame(&mut self, pos: usize, index: usize) -> Step<'a> {
        let (anchor_line, next) = self.lines.at(pos);
        let Some(source_pos) = next else {
            return if anchor_line.is_empty() { Step::Complete } else { Step::Stop(StopReason::Truncated) };
        };
        let (source_line, next) = self.lines.at(source_pos);
        let Some(mut cursor) = next else {
            return Step::Stop(StopReason::Truncated);
        };
        let Some(anchor) = fields::anchor_line(anchor_line) else {
            return Step::Stop(StopReason::BadAnchorLine);
        };
        let Some(source_id) = fields::source_line(source_line) else {
            return Step::Stop(StopReason::BadSourceLine);
        };
        if !is_valid_v2_source_id(source_id) {
            return Step::Stop(StopReason::InvalidSourceId);
        }
        if !is_v2_location_of(source_id, self.relative_path) {
            return Step::Stop(StopReason::WrongArchive);
        }
        if !anchor_matches(anchor, source_id) {
            return Step::Stop(StopReason::AnchorMismatch);
        }
        if self.seen.contains(source_id) {
            return Step::Stop(StopReason::DuplicateSourceId);
        }
        let mut line_index = index + 2;

        let (mut line, mut next) = self.lines.at(cursor);
        let mut encoded_speaker_id = None;
        let mut speaker_id = None;
        if let Some(value) = fields::speaker_line(line) {
            let unreserved = value.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'~'));
            let decoded = if unreserved {
                // Nothing to decode: the value is its own canonical encoding.
                Cow::Borrowed(value)
            } else {
                let Some(decoded) = decode_speaker_id(value) else {
                    return Step::Stop(StopReason::NonCanonicalSpeakerId);
                };
                Cow::Owned(decoded)
            };
            encoded_speaker_id = Some(value);
            speaker_id = Some(decoded);
            let Some(p) = next else { return Step::Stop(StopReason::Truncated) };
            cursor = p;
            line_index += 1;
            (line, next) = self.lines.at(cursor);
        }
        let mut meta = None;
        let mut meta_line = None;
        if let Some(token) = fields::meta_value(line) {
            let Some(decoded) = self.metas.decode(token) else {
                return Step::Stop(StopReason::InvalidSourceMeta);
            };
            meta = Some(decoded);
            meta_line = Some(line_index);
            let Some(p) = next else { return Step::Stop(StopReason::Truncated) };
            cursor = p;
            line_index += 1;
            (line, next) = self.lines.at(cursor);
        }
        let Some(count) = fields::count_line(line).filter(|n| *n >= 1) else {
            return Step::Stop(StopReason::BadRecordCount);
        };
        let Some(record_pos) = next else { return Step::Stop(StopReason::Truncated) };
        let record_start = line_index + 1;
        let (header, _) = self.lines.at(record_pos);
        // The header is checked before skipping, but only after the count is known
        // to fit, so the reason names the first real problem.
        let Some(terminator_pos) = self.lines.skip(record_pos, count) else {
            return Step::Stop(StopReason::Truncated);
        };
        if !fields::is_record_header(header) {
            return Step::Stop(StopReason::BadRecordHeader);
        }
        let (terminator, after) = self.lines.at(terminator_pos);
        if !terminator.is_empty() {
            return Step::Stop(StopReason::MissingTerminator);
        }
        let record_text = self.lines.text.get(record_pos..terminator_pos - 1).unwrap_or_default();
        self.seen.insert(source_id);
        let record_end = record_start + count;
        Step::Frame {
            frame: Box::new(Frame {
                source_id,
                encoded_speaker_id,
                speaker_id,
                meta,
                frame_start: index,
                meta_line,
                record_start,
                record_end,
                record_text,
                start_byte: pos,
                record_byte: record_pos,
                end_byte: after.unwrap_or(self.lines.text.len()),
            }),
            next_pos: after,
            next_index: record_end + 1,
        }
    }
}

/// Decoded `source-meta` tokens of one scan. A short list compared byte for byte
/// serves the usual handful of distinct tokens without hashing 180-byte keys; a map
/// takes over when a file holds many.
#[derive(Default)]
struct MetaCache<'a> {
    recent: Vec<(&'a str, Arc<SourceMeta>)>,
    many: HashMap<&'a str, Arc<SourceMeta>>,
}

impl<'a> MetaCache<'a> {
    const RECENT: usize = 16;

    /// The metadata of a `source-meta` value, or `None` when it is not a valid token.
    fn decode(&mut self, value: &'a str) -> Option<Arc<SourceMeta>> {
        if let Some((_, meta)) = self.recent.iter().find(|(token, _)| *token == value) {
            return Some(Arc::clone(meta));
        }
        if let Some(meta) = self.many.get(value) {
            return Some(Arc::clone(meta));
        }
        let meta = Arc::new(SourceMeta::decode_token(fields::meta_token(value)?)?);
        if self.recent.len() < Self::RECENT {
            self.recent.push((value, Arc::clone(&meta)));
        } else {
            self.many.insert(value, Arc::clone(&meta));
        }
        Some(meta)
    }
}

enum Step<'a> {
    Complete,
    Stop(StopReason),
    Frame { frame: Box<Frame<'a>>, next_pos: Option<usize>, next_index: usize },
}

#[cfg(test)]
mod tests;
