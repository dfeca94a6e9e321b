//! Invariant checks shared by the fuzz targets, the corpus replay test and proptest
//! (rust-analyzer's `syntax::fuzz`): every entry point panics, through `assert!`, when an
//! invariant of the v2 archive format does not hold, and returns quietly otherwise.
//!
//! - [`check_bytes`]: any bytes. The scanner agrees with a literal transcription of the
//!   spec's algorithm (01 §2.5), its stop and frame positions are consistent, truncated
//!   inputs keep the frames the prefix property promises, and re-rendering the frames
//!   reproduces the consumed bytes.
//! - [`check_records`] / [`check_source_records`]: records appended by the writer to an
//!   empty tree parse back to the same ids, record text, speakers and metadata, and an
//!   append in two batches only adds bytes.
//! - [`check_legacy`]: any bytes read as a legacy archive. The reader and the record
//!   lookup by anchor never panic, and every runtime record the reader finds opens by its
//!   anchor at the same header line.
//!
//! Not part of the stable API: the functions exist for tests and fuzzing only.

use std::collections::{HashMap, HashSet};

use crate::error::ErrorCode;
use crate::fields;
use crate::ids::{is_valid_v2_source_id, legacy_location, source_anchor, split_source_id, v2_location};
use crate::meta::SourceMeta;
use crate::parse::{Frame, Parsed, StopReason, parse, parse_bytes};
use crate::python::{casefold, is_printable, nfc};
use crate::record::SourceRecord;
use crate::speaker::{SpeakerView, decode_speaker_id, encode_speaker_id, normalize_identity_part};
use crate::tree::MemoryTree;
use crate::write::{plan_append, render_frame};
use crate::{FORMAT_MARKER, split_record_header};

/// The archive path used when the input names no usable source id.
pub const DEFAULT_PATH: &str = "sources/openprogram/_v2/thread-1.md";

/// Check every invariant of the v2 scanner on arbitrary bytes.
///
/// The archive path is taken from the first `source-id` line of the input that has a
/// v2 location, so that any seed exercises whole frames rather than stopping at
/// `WrongArchive`.
pub fn check_bytes(data: &[u8]) {
    let path = path_for(data);
    check_bytes_at(data, &path);
}

/// [`check_bytes`] for an archive read at `path`. Returns whether re-rendering the
/// frames reproduced the consumed prefix byte for byte; it does not when a frame spells
/// its count with leading zeros or carries a pre-tier `origin_scope` meta token, the
/// two places where the grammar accepts a second spelling.
pub fn check_bytes_at(data: &[u8], path: &str) -> bool {
    let parsed = parse_bytes(data, path);
    check_shape(data, path, &parsed);
    check_against_oracle(data, path, &parsed);
    check_prefixes(data, path, &parsed);
    check_render(data, path, &parsed)
}

/// Check the legacy reader and [`legacy_record`](crate::legacy_record) on arbitrary
/// bytes, read at the legacy location of the input's first `source-id` line.
pub fn check_legacy(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let path = text
        .split('\n')
        .filter_map(|line| fields::source_line(line.trim()))
        .find_map(legacy_location)
        .unwrap_or_else(|| "sources/openprogram/thread-1.md".to_owned());
    let lines = text.split('\n').count();
    let mut opened = HashSet::new();
    for event in crate::legacy::legacy_events(&path, &text) {
        assert!(event.line >= 1 && event.line <= lines, "an event's line is in the file");
        let anchor = source_anchor(&event.event_id);
        if event.event_id.starts_with(crate::legacy::ANONYMOUS_PREFIX) || !opened.insert(anchor.clone()) {
            continue;
        }
        let record = crate::legacy_record(&path, &text, &anchor).expect("a record the reader found opens");
        assert_eq!(record.line, event.line, "the lookup and the reader agree on {anchor}");
        assert!(record.record_text.split('\n').count() <= lines);
    }
    let anchors = text.split('\n').filter_map(|line| line.trim().strip_prefix("<a id=\"")?.strip_suffix("\"></a>"));
    for anchor in anchors {
        if let Some(record) = crate::legacy_record(&path, &text, anchor) {
            assert!(record.line >= 1 && record.line <= lines);
        }
    }
}

/// The workspace-relative path of the archive that the input's first `source-id`
/// line belongs to, or [`DEFAULT_PATH`].
pub fn path_for(data: &[u8]) -> String {
    data.split(|b| *b == b'\n')
        .filter_map(|line| std::str::from_utf8(line).ok())
        .filter_map(fields::source_line)
        .find_map(v2_location)
        .unwrap_or_else(|| DEFAULT_PATH.to_owned())
}

// ---------------------------------------------------------------------------------
// Shape: positions, stop semantics and frame contents, checked against the bytes.

/// Where the empty terminator line of `frame` starts.
fn terminator_start(frame: &Frame<'_>) -> usize {
    frame.record_byte + frame.record_text.len() + 1
}

/// Whether the terminator line of `frame` ends with an LF (else it is the empty last
/// line of the input).
fn terminator_has_lf(frame: &Frame<'_>) -> bool {
    frame.end_byte > terminator_start(frame)
}

fn count_lf(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

fn slice(data: &[u8], from: usize, to: usize) -> &[u8] {
    let got = data.get(from..to);
    assert!(got.is_some(), "range {from}..{to} lies outside the input of {} bytes", data.len());
    got.unwrap_or_default()
}

fn check_shape(data: &[u8], path: &str, parsed: &Parsed<'_>) {
    let header_end = FORMAT_MARKER.len() + 2;
    let mut seen = HashSet::new();
    // Line numbers are checked by counting LFs incrementally, so the check stays linear.
    let mut counted_to = 0;
    let mut lines_before = 0;
    let mut line_of = |byte: usize| {
        assert!(byte >= counted_to, "positions go backwards: {byte} after {counted_to}");
        lines_before += count_lf(slice(data, counted_to, byte));
        counted_to = byte;
        lines_before
    };
    let mut expected_start = (2, header_end);
    for frame in &parsed.frames {
        assert_eq!(
            (frame.frame_start, frame.start_byte),
            expected_start,
            "a frame starts right after the marker lines or the previous frame's terminator"
        );
        assert_eq!(line_of(frame.start_byte), frame.frame_start, "frame_start is the line of start_byte");
        assert_eq!(line_of(frame.record_byte), frame.record_start, "record_start is the line of record_byte");
        assert!(frame.end_byte <= data.len(), "the frame ends inside the input");
        assert!(seen.insert(frame.source_id), "source id {} repeats", frame.source_id);
        assert!(is_valid_v2_source_id(frame.source_id));
        assert_eq!(v2_location(frame.source_id).as_deref(), Some(path), "the frame belongs to this archive");

        let optional = usize::from(frame.encoded_speaker_id.is_some()) + usize::from(frame.meta.is_some());
        assert_eq!(frame.record_start, frame.frame_start + 3 + optional, "anchor, source, optional lines, count");
        assert_eq!(frame.meta.is_some(), frame.meta_line.is_some());
        if let Some(meta_line) = frame.meta_line {
            assert_eq!(meta_line + 2, frame.record_start, "the meta line comes right before the count line");
        }
        assert_eq!(frame.speaker_id.is_some(), frame.encoded_speaker_id.is_some());
        if let Some(encoded) = frame.encoded_speaker_id {
            assert_eq!(
                decode_speaker_id(encoded).as_deref(),
                frame.speaker_id.as_deref(),
                "the speaker id is the decoded value"
            );
        }

        assert!(frame.record_end > frame.record_start, "a record has at least one line");
        let text = slice(data, frame.record_byte, frame.record_byte + frame.record_text.len());
        assert_eq!(text, frame.record_text.as_bytes(), "record_text is the input at record_byte");
        assert_eq!(count_lf(text) + 1, frame.record_lines(), "record-lines counts LF-separated lines");
        let header = frame.record_text.split('\n').next().unwrap_or_default();
        assert!(split_record_header(header).is_some(), "the first record line is a header");
        let start = terminator_start(frame);
        assert_eq!(data.get(start - 1), Some(&b'\n'), "the record's last line ends with LF");
        if terminator_has_lf(frame) {
            assert_eq!(frame.end_byte, start + 1);
            assert_eq!(data.get(start), Some(&b'\n'), "the terminator line is empty");
        } else {
            assert_eq!(frame.end_byte, data.len(), "a terminator without LF is the input's last line");
        }
        let head =
            format!("<a id=\"{}\"></a>\n<!-- source-id:{} -->\n", source_anchor(frame.source_id), frame.source_id);
        assert!(slice(data, frame.start_byte, frame.record_byte).starts_with(head.as_bytes()));
        expected_start = (frame.record_end + 1, frame.end_byte);
    }

    match parsed.stop {
        None => {
            assert!(std::str::from_utf8(data).is_ok(), "a complete archive is UTF-8");
            assert!(data.starts_with(FORMAT_MARKER.as_bytes()));
            let end = parsed.frames.last().map_or(header_end, |last| last.end_byte);
            assert_eq!(end, data.len(), "a complete archive is consumed to its end");
        }
        Some(stop) => {
            assert!(stop.byte <= data.len());
            assert!(stop.byte == 0 || data.get(stop.byte - 1) == Some(&b'\n'), "a stop is at a line start");
            assert_eq!(count_lf(slice(data, 0, stop.byte)), stop.line, "stop.line is the line of stop.byte");
            match parsed.frames.last() {
                // No resynchronisation: the stop comes right after the last good frame.
                Some(last) => assert_eq!((stop.line, stop.byte), (last.record_end + 1, last.end_byte)),
                None if stop.line == 0 => assert_eq!(stop.byte, 0),
                None => {
                    assert_eq!((stop.line, stop.byte), (2, header_end));
                    assert!(data.starts_with(format!("{FORMAT_MARKER}\n\n").as_bytes()));
                }
            }
            if stop.line == 0 {
                assert!(parsed.frames.is_empty());
                assert!(matches!(stop.reason, StopReason::MissingMarker | StopReason::NotUtf8));
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Oracle: spec 01 §2.5 transcribed literally over `split('\n')`, with its own
// structural-line recognisers (the field semantics — ids, anchors, speaker and meta
// decoding, the header pattern — are the crate's public functions).

#[derive(Debug, PartialEq, Eq)]
struct OracleFrame<'a> {
    source_id: &'a str,
    frame_start: usize,
    encoded_speaker_id: Option<&'a str>,
    meta_line: Option<usize>,
    record_start: usize,
    record_end: usize,
}

#[derive(Debug)]
struct OracleScan<'a> {
    frames: Vec<OracleFrame<'a>>,
    /// `None` when complete, else the stop line and reason.
    stop: Option<(usize, StopReason)>,
}

fn comment<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    line.strip_prefix("<!-- ")?.strip_prefix(name)?.strip_prefix(':')?.strip_suffix(" -->")
}

fn oracle_scan<'a>(text: &'a str, path: &str) -> OracleScan<'a> {
    let lines: Vec<&str> = text.split('\n').collect();
    let len = lines.len();
    let line = |i: usize| lines.get(i).copied().unwrap_or_default();
    let mut frames = Vec::new();
    let stopped = |frames, i, reason| OracleScan { frames, stop: Some((i, reason)) };
    if len < 3 || line(0) != FORMAT_MARKER || !line(1).is_empty() {
        return stopped(frames, 0, StopReason::MissingMarker);
    }
    let mut seen = HashSet::new();
    let mut i = 2;
    while i < len {
        if i == len - 1 && line(i).is_empty() {
            break;
        }
        if i + 2 >= len {
            return stopped(frames, i, StopReason::Truncated);
        }
        let anchor = line(i).strip_prefix("<a id=\"").and_then(|l| l.strip_suffix("\"></a>"));
        let Some(anchor) = anchor.filter(|a| !a.contains('"')) else {
            return stopped(frames, i, StopReason::BadAnchorLine);
        };
        let Some(id) = comment(line(i + 1), "source-id").filter(|id| !id.is_empty()) else {
            return stopped(frames, i, StopReason::BadSourceLine);
        };
        let check = if !is_valid_v2_source_id(id) {
            Some(StopReason::InvalidSourceId)
        } else if v2_location(id).as_deref() != Some(path) {
            Some(StopReason::WrongArchive)
        } else if anchor != source_anchor(id) {
            Some(StopReason::AnchorMismatch)
        } else if seen.contains(id) {
            Some(StopReason::DuplicateSourceId)
        } else {
            None
        };
        if let Some(reason) = check {
            return stopped(frames, i, reason);
        }
        let mut c = i + 2;
        let speaker = comment(line(c), "speaker-id");
        if let Some(value) = speaker {
            if decode_speaker_id(value).is_none() {
                return stopped(frames, i, StopReason::NonCanonicalSpeakerId);
            }
            c += 1;
            if c >= len {
                return stopped(frames, i, StopReason::Truncated);
            }
        }
        let meta = comment(line(c), "source-meta");
        let mut meta_line = None;
        if let Some(token) = meta {
            let is_token =
                !token.is_empty() && token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if !is_token || SourceMeta::decode_token(token).is_none() {
                return stopped(frames, i, StopReason::InvalidSourceMeta);
            }
            meta_line = Some(c);
            c += 1;
            if c >= len {
                return stopped(frames, i, StopReason::Truncated);
            }
        }
        let count = comment(line(c), "record-lines")
            .filter(|n| (1..=9).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| *n >= 1);
        let Some(count) = count else {
            return stopped(frames, i, StopReason::BadRecordCount);
        };
        let r = c + 1;
        let end = r + count;
        if end >= len {
            return stopped(frames, i, StopReason::Truncated);
        }
        if split_record_header(line(r)).is_none() {
            return stopped(frames, i, StopReason::BadRecordHeader);
        }
        if !line(end).is_empty() {
            return stopped(frames, i, StopReason::MissingTerminator);
        }
        seen.insert(id);
        frames.push(OracleFrame {
            source_id: id,
            frame_start: i,
            encoded_speaker_id: speaker,
            meta_line,
            record_start: r,
            record_end: end,
        });
        i = end + 1;
    }
    OracleScan { frames, stop: None }
}

fn check_against_oracle(data: &[u8], path: &str, parsed: &Parsed<'_>) {
    let got: Vec<OracleFrame<'_>> = parsed
        .frames
        .iter()
        .map(|f| OracleFrame {
            source_id: f.source_id,
            frame_start: f.frame_start,
            encoded_speaker_id: f.encoded_speaker_id,
            meta_line: f.meta_line,
            record_start: f.record_start,
            record_end: f.record_end,
        })
        .collect();
    let got_stop = parsed.stop.map(|s| (s.line, s.reason));
    match std::str::from_utf8(data) {
        Ok(text) => {
            let want = oracle_scan(text, path);
            assert_eq!(got, want.frames, "the scanner and the spec's algorithm find the same frames");
            assert_eq!(got_stop, want.stop, "the scanner and the spec's algorithm stop alike");
        }
        Err(error) => {
            // Bytes from the first bad line on do not exist for the scan: it runs on the
            // text before that line, keeps the frames that end before it, and reports
            // `NotUtf8` when it would have gone on to that line.
            let bad_start = slice(data, 0, error.valid_up_to()).iter().rposition(|b| *b == b'\n').map_or(0, |n| n + 1);
            let bad_line = count_lf(slice(data, 0, bad_start));
            let text = std::str::from_utf8(slice(data, 0, bad_start)).unwrap_or_default();
            let mut want = oracle_scan(text, path);
            want.frames.retain(|f| f.record_end < bad_line);
            let stop = match want.stop {
                // Running out of input before the bad line means running into it.
                Some((line, reason)) if line < bad_line && reason != StopReason::Truncated => (line, reason),
                _ => {
                    let marker_ok = bad_line >= 2 && text.starts_with(&format!("{FORMAT_MARKER}\n\n"));
                    let line = want.frames.last().map_or(if marker_ok { 2 } else { 0 }, |f| f.record_end + 1);
                    (line, StopReason::NotUtf8)
                }
            };
            assert_eq!(got, want.frames, "invalid UTF-8: the frames before the bad line survive");
            assert_eq!(got_stop, Some(stop), "invalid UTF-8 stops the scan at the latest on its line");
        }
    }
}

// ---------------------------------------------------------------------------------
// Prefix property.

/// A few cut points derived from the input and its frames, each in `0..len`.
fn cut_points(data: &[u8], parsed: &Parsed<'_>) -> Vec<usize> {
    let len = data.len();
    let hash = data.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3));
    let mut cuts = vec![0, len / 2, len.saturating_sub(1), usize::try_from(hash % (len as u64 + 1)).unwrap_or(0)];
    // Right after a record's last LF: the terminator becomes the cut's final empty line.
    cuts.extend(parsed.frames.first().map(terminator_start));
    cuts.extend(parsed.frames.last().map(terminator_start));
    cuts.extend(parsed.frames.last().map(|f| f.start_byte + 1));
    cuts.extend(parsed.stop.map(|s| s.byte + (len - s.byte) / 2));
    cuts.retain(|k| *k < len);
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

/// Truncating an archive never creates a frame the whole file does not have, with one
/// exception that the format makes unavoidable.
///
/// Every frame of `parse(&data[..k])` whose terminator line ends with an LF inside the
/// cut is a frame of the full parse at the same index, byte for byte: all of its lines
/// are complete in both inputs, and whether they form a frame depends only on them and
/// on the frames before it. A frame whose terminator is the cut's *final* line is
/// different: that line is empty only because the cut ends right after the record's
/// last LF. In the full input the same line may go on (`…\nmore`), and then the frame
/// is a `MissingTerminator` stop, not a frame. So the cut may hold exactly one extra
/// frame, at its very end, and it is a real frame exactly when the next input byte is
/// an LF.
fn check_prefixes(data: &[u8], path: &str, full: &Parsed<'_>) {
    for k in cut_points(data, full) {
        let cut = slice(data, 0, k);
        let part = parse_bytes(cut, path);
        check_shape(cut, path, &part);
        let stable = full.frames.iter().take_while(|f| f.end_byte <= k).count();
        assert!(part.frames.len() >= stable, "cut at {k}: a frame that ends inside the cut vanished");
        assert_eq!(part.frames.get(..stable), full.frames.get(..stable), "cut at {k}: stable frames differ");
        assert!(part.frames.len() <= stable + 1, "cut at {k}: the cut has frames the full input lacks");
        if let Some(extra) = part.frames.get(stable) {
            assert!(!terminator_has_lf(extra), "cut at {k}: only a frame ending at the cut may be extra");
            assert_eq!(extra.end_byte, k);
            if data.get(k) == Some(&b'\n') {
                let real = full.frames.get(stable);
                assert!(real.is_some(), "cut at {k}: the next byte is LF, so the frame is real");
                if let Some(real) = real {
                    let mut expected = extra.clone();
                    expected.end_byte = k + 1;
                    assert_eq!(real, &expected);
                }
            } else {
                assert_eq!(full.frames.len(), stable, "cut at {k}: the next line is not empty, so no frame");
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Byte round trip.

/// The canonical text of a parsed frame: the lines the writer would produce for it,
/// plus its terminator line (with LF when the original had one).
fn render_parsed(frame: &Frame<'_>) -> String {
    let mut out = render_head(frame);
    out.push_str(frame.record_text);
    out.push('\n');
    if terminator_has_lf(frame) {
        out.push('\n');
    }
    out
}

/// Anchor, source, optional speaker and meta, and count lines, each with its LF.
fn render_head(frame: &Frame<'_>) -> String {
    let mut out =
        format!("<a id=\"{}\"></a>\n<!-- source-id:{} -->\n", source_anchor(frame.source_id), frame.source_id);
    if let Some(encoded) = frame.encoded_speaker_id {
        out.push_str(&format!("<!-- speaker-id:{encoded} -->\n"));
    }
    if let Some(meta) = &frame.meta {
        out.push_str(&meta.to_line());
        out.push('\n');
    }
    out.push_str(&format!("<!-- record-lines:{} -->\n", frame.record_lines()));
    out
}

/// Whether a frame's head lines are byte-canonical; if not, they differ from the
/// canonical rendering only where the format allows two spellings: a count with
/// leading zeros, or a meta token of the pre-tier `origin_scope` shape.
fn head_is_canonical(data: &[u8], frame: &Frame<'_>) -> bool {
    let original = std::str::from_utf8(slice(data, frame.start_byte, frame.record_byte)).unwrap_or_default();
    let rendered = render_head(frame);
    if original == rendered {
        return true;
    }
    let (original, rendered): (Vec<&str>, Vec<&str>) = (original.split('\n').collect(), rendered.split('\n').collect());
    assert_eq!(original.len(), rendered.len(), "a re-rendered head has the same lines");
    for (was, now) in original.iter().zip(&rendered) {
        let same_count = fields::count_line(was).is_some() && fields::count_line(was) == fields::count_line(now);
        let same_meta = fields::meta_line(was)
            .and_then(SourceMeta::decode_token)
            .is_some_and(|m| Some(&m) == frame.meta.as_deref())
            && fields::meta_line(now).is_some();
        assert!(was == now || same_count || same_meta, "head line {was:?} re-renders as {now:?}");
    }
    false
}

fn check_render(data: &[u8], path: &str, parsed: &Parsed<'_>) -> bool {
    let consumed = slice(data, 0, parsed.valid_prefix_len(data.len()));
    let mut rendered = String::with_capacity(consumed.len());
    if !consumed.is_empty() {
        rendered.push_str(FORMAT_MARKER);
        rendered.push_str("\n\n");
    }
    let mut canonical = true;
    for frame in &parsed.frames {
        let head_ok = head_is_canonical(data, frame);
        canonical &= head_ok;
        rendered.push_str(&render_parsed(frame));
        check_writer_render(frame, head_ok);
    }
    if canonical {
        assert_eq!(rendered.as_bytes(), consumed, "re-rendering canonical frames reproduces the consumed prefix");
    }
    if consumed.is_empty() {
        return canonical;
    }
    let again = parse(&rendered, path);
    assert!(again.stop.is_none(), "the rendering of valid frames is a complete archive: {:?}", again.stop);
    assert_eq!(again.frames.len(), parsed.frames.len());
    for (now, was) in again.frames.iter().zip(&parsed.frames) {
        if canonical {
            assert_eq!(now, was, "the rendering parses to the same frames");
        } else {
            assert_eq!(frame_key(now), frame_key(was), "the rendering parses to the same frames, bytes aside");
        }
    }
    canonical
}

/// A frame's fields apart from its byte offsets.
type FrameKey<'a> = (&'a str, Option<&'a str>, Option<String>, Option<SourceMeta>, [Option<usize>; 4], &'a str);

fn frame_key<'a>(f: &Frame<'a>) -> FrameKey<'a> {
    let lines = [Some(f.frame_start), f.meta_line, Some(f.record_start), Some(f.record_end)];
    (
        f.source_id,
        f.encoded_speaker_id,
        f.speaker_id.as_deref().map(str::to_owned),
        f.meta.as_deref().cloned(),
        lines,
        f.record_text,
    )
}

/// The record the writer would have been given for `frame`, as far as one exists.
fn record_for(frame: &Frame<'_>, timestamp: &str, label: &str, content: &str) -> Option<SourceRecord> {
    let parts = split_source_id(frame.source_id)?;
    let meta = frame.meta.as_deref().cloned().unwrap_or_default();
    let (speaker_id, speaker_display, role) = match &frame.speaker_id {
        Some(decoded) => {
            let view = SpeakerView::from_frame(decoded, label);
            (Some(decoded.to_string()), Some(view.speaker_display), "user".to_owned())
        }
        None => (None, None, label.to_owned()),
    };
    Some(SourceRecord {
        provider: parts.provider.to_owned(),
        thread_id: parts.thread.to_owned(),
        message_id: parts.message.to_owned(),
        ordinal: 0,
        role,
        content: content.to_owned(),
        timestamp: Some(timestamp.to_owned()),
        speaker_id,
        speaker_display,
        speaker_kind: meta.speaker_kind.clone(),
        principal_id: meta.principal_id.clone(),
        authority_tier: meta.authority_tier.map(|t| t.as_str().to_owned()),
        trust_state: meta.trust_state.as_str().to_owned(),
    })
}

fn has_identity(part: Option<&str>) -> bool {
    part.is_some_and(|p| !normalize_identity_part(p).is_empty())
}

/// The writer's renderer agrees with the parser: for a canonical frame that some record
/// explains exactly (normalized label, one space after `]`, a meta line, the speaker
/// line present exactly when the record has an identity), `render_frame` of that record
/// is the frame's bytes.
fn check_writer_render(frame: &Frame<'_>, head_canonical: bool) {
    let first = frame.record_text.split('\n').next().unwrap_or_default();
    let Some(header) = split_record_header(first) else { return };
    let prefix = format!("[{}] {}: ", header.timestamp, header.label);
    let Some(content) = frame.record_text.strip_prefix(&prefix) else { return };
    let Some(record) = record_for(frame, header.timestamp, header.label, content) else { return };
    let explained = head_canonical
        && frame.meta.is_some()
        && normalize_identity_part(&record.speaker_label()) == header.label
        && frame.encoded_speaker_id.is_some()
            == (has_identity(record.speaker_id.as_deref()) || has_identity(record.speaker_display.as_deref()));
    if !explained {
        return;
    }
    let safe_timestamp = header.timestamp.chars().all(|c| is_printable(c) && !matches!(c, '[' | ']' | '\r' | '\n'));
    match render_frame(&record) {
        Ok(text) => {
            let mut expected = render_head(frame);
            expected.push_str(frame.record_text);
            expected.push('\n');
            assert_eq!(text, expected, "render_frame reproduces a canonical frame");
        }
        Err(error) => {
            assert!(!safe_timestamp, "render_frame refused a record a valid frame explains: {error}");
            assert_eq!(error.code(), ErrorCode::UnsafeTimestamp);
        }
    }
}

// ---------------------------------------------------------------------------------
// Writer round trip.

const PROVIDERS: &[&str] = &["openprogram", "telegram", "Slack Bot", "微信", "_v2", "OpenProgram", "..", "a/b"];
const THREADS: &[&str] = &["thread-1", "sess-7f2a", "acct%3A-100", "Thread-1", "群聊 1", "x"];
const ROLES: &[&str] = &["user", "assistant", "system", "tool", "", " "];

/// Decode records from fuzz bytes and run [`check_source_records`].
///
/// The input is a sequence of fields separated by `0xFF` (never part of UTF-8), nine per
/// record: control bytes, message id, content, timestamp, speaker id, display name,
/// role, principal, speaker kind. Text fields are decoded lossily. Control bytes pick
/// provider, thread, ordinal, which optional fields are present, tier and trust state,
/// so that small hand-made seeds reach valid and invalid batches alike.
pub fn check_records(data: &[u8]) {
    check_source_records(&decode_records(data));
}

/// The records [`check_records`] decodes from `data` (at most 64).
pub fn decode_records(data: &[u8]) -> Vec<SourceRecord> {
    let fields: Vec<&[u8]> = data.split(|b| *b == 0xFF).collect();
    let text =
        |chunk: &[&[u8]], n: usize| String::from_utf8_lossy(chunk.get(n).copied().unwrap_or_default()).into_owned();
    let pick =
        |table: &[&'static str], byte: u8| table.get(usize::from(byte) % table.len()).copied().unwrap_or_default();
    fields
        .chunks(9)
        .take(64)
        .enumerate()
        .map(|(index, chunk)| {
            let control = chunk.first().copied().unwrap_or_default();
            let byte = |n: usize| control.get(n).copied().unwrap_or_default();
            let flags = byte(3);
            let message = text(chunk, 1);
            let role = text(chunk, 6);
            SourceRecord {
                provider: pick(PROVIDERS, byte(0)).to_owned(),
                thread_id: pick(THREADS, byte(1)).to_owned(),
                message_id: if message.is_empty() { format!("m{index}") } else { message },
                ordinal: i64::from(byte(2) as i8),
                role: if role.is_empty() { pick(ROLES, byte(4)).to_owned() } else { role },
                content: text(chunk, 2),
                timestamp: (flags & 1 != 0).then(|| text(chunk, 3)),
                speaker_id: (flags & 2 != 0).then(|| text(chunk, 4)),
                speaker_display: (flags & 4 != 0).then(|| text(chunk, 5)),
                principal_id: text(chunk, 7),
                speaker_kind: text(chunk, 8),
                authority_tier: match (flags >> 3) & 3 {
                    0 => None,
                    1 => Some("owner".to_owned()),
                    2 => Some("paired".to_owned()),
                    _ => Some("Owner".to_owned()),
                },
                trust_state: match (flags >> 5) & 3 {
                    0 | 1 => "trusted",
                    2 => "pending",
                    _ => "Trusted",
                }
                .to_owned(),
            }
        })
        .collect()
}

/// Whether two of `paths`, or two of their prefixes, are different spellings of one
/// `casefold(NFC(…))` key (spec 01 §2.8).
fn paths_collide(paths: &[String]) -> bool {
    let mut keys: HashMap<String, &str> = HashMap::new();
    for path in paths {
        let ends = path.match_indices('/').map(|(i, _)| i).chain([path.len()]);
        for prefix in ends.filter_map(|end| path.get(..end)) {
            if *keys.entry(casefold(&nfc(prefix))).or_insert(prefix) != prefix {
                return true;
            }
        }
    }
    false
}

/// What one record must look like once archived.
struct Expected {
    record_text: String,
    encoded_speaker_id: Option<String>,
    meta: SourceMeta,
}

fn expected_frame(record: &SourceRecord) -> Expected {
    let label = normalize_identity_part(&record.speaker_label());
    let timestamp = record.timestamp.as_deref().unwrap_or_default();
    let identity = has_identity(record.speaker_id.as_deref()) || has_identity(record.speaker_display.as_deref());
    let meta = record.meta();
    assert!(meta.is_ok(), "a record that renders has valid metadata");
    Expected {
        record_text: format!("[{timestamp}] {label}: {}", record.content),
        encoded_speaker_id: identity.then(|| encode_speaker_id(record.speaker_id.as_deref().unwrap_or_default())),
        meta: meta.unwrap_or_default(),
    }
}

/// Append `records` to an empty tree and check that every archive parses back to the
/// same ids, record text, speaker ids and metadata; that a batch is refused only for a
/// record that cannot render or a path collision; and that appending the same records
/// in two batches only ever adds bytes.
pub fn check_source_records(records: &[SourceRecord]) {
    let empty = MemoryTree::new();
    let planned = plan_append(records, &empty);

    let mut sorted: Vec<&SourceRecord> = records.iter().collect();
    sorted.sort_by(|a, b| (&a.provider, &a.thread_id, a.ordinal).cmp(&(&b.provider, &b.thread_id, b.ordinal)));
    let first_error = sorted.iter().find_map(|r| render_frame(r).err());
    let plan = match planned {
        Ok(plan) => {
            assert!(first_error.is_none(), "plan_append accepted a record render_frame refuses: {first_error:?}");
            plan
        }
        Err(error) => {
            match first_error {
                Some(expected) => assert_eq!(error.code(), expected.code(), "the first bad record's code"),
                None => {
                    assert_eq!(error.code(), ErrorCode::PathCollision, "valid records fail only by collision");
                    let paths: Vec<String> = sorted.iter().filter_map(|r| v2_location(&r.source_id())).collect();
                    assert!(paths_collide(&paths), "a collision error names really colliding paths: {error}");
                }
            }
            return;
        }
    };

    let ids: Vec<String> = sorted.iter().map(|r| r.source_id()).collect();
    assert_eq!(plan.refs, ids, "refs are every record's id in sorted order");
    let mut expected: HashMap<String, Expected> = HashMap::new();
    let mut per_path: HashMap<String, Vec<String>> = HashMap::new();
    for record in &sorted {
        let id = record.source_id();
        if !expected.contains_key(&id) {
            expected.insert(id.clone(), expected_frame(record));
            per_path.entry(v2_location(&id).unwrap_or_default()).or_default().push(id);
        }
    }
    assert_eq!(plan.files.len(), per_path.len(), "one file per thread");
    for file in &plan.files {
        assert!(!file.existed);
        assert_eq!(Some(&file.appended), per_path.get(&file.path), "first occurrences, in sorted order");
        let canonical = check_bytes_at(&file.bytes, &file.path);
        assert!(canonical, "the writer's output is canonical");
        let parsed = parse_bytes(&file.bytes, &file.path);
        assert!(parsed.stop.is_none(), "a written archive is complete");
        let got: Vec<&str> = parsed.frames.iter().map(|f| f.source_id).collect();
        assert_eq!(got, file.appended, "no forged frame appears and none is lost");
        for frame in &parsed.frames {
            let Some(want) = expected.get(frame.source_id) else { continue };
            assert_eq!(frame.record_text, want.record_text, "the body comes back byte for byte");
            assert_eq!(frame.encoded_speaker_id, want.encoded_speaker_id.as_deref());
            let raw = want.encoded_speaker_id.as_deref().and_then(decode_speaker_id);
            assert_eq!(frame.speaker_id.as_deref(), raw.as_deref(), "the speaker id decodes to the raw id");
            assert_eq!(frame.meta.as_deref(), Some(&want.meta));
        }
    }

    // Append in two batches: every file only grows, and its frames are the old ones
    // followed by the new ones.
    let (head, tail) = records.split_at(records.len() / 2);
    let mut tree = MemoryTree::new();
    let first = plan_append(head, &tree);
    assert!(first.is_ok(), "a part of a valid batch is valid: {first:?}");
    if let Ok(first) = &first {
        tree.apply(first);
    }
    let second = plan_append(tail, &tree);
    assert!(second.is_ok(), "the rest of a valid batch appends to what the first part wrote: {second:?}");
    if let Ok(second) = &second {
        for file in &second.files {
            let old = tree.get(&file.path).unwrap_or_default();
            assert!(file.bytes.starts_with(old), "an append keeps the existing bytes");
            let old_ids: Vec<&str> = parse_bytes(old, &file.path).frames.iter().map(|f| f.source_id).collect();
            let parsed = parse_bytes(&file.bytes, &file.path);
            assert!(parsed.stop.is_none());
            let ids: Vec<&str> = parsed.frames.iter().map(|f| f.source_id).collect();
            let appended: Vec<&str> = file.appended.iter().map(String::as_str).collect();
            assert_eq!(ids, [old_ids, appended].concat(), "old frames, then the appended ones");
        }
        tree.apply(second);
    }
    for (path, ids) in &per_path {
        let bytes = tree.get(path).unwrap_or_default();
        let mut got: Vec<&str> = parse_bytes(bytes, path).frames.iter().map(|f| f.source_id).collect();
        let mut want: Vec<&str> = ids.iter().map(String::as_str).collect();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want, "two batches archive the same ids as one");
    }
}
