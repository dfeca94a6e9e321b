//! Scanner unit tests on the spec's worked examples.

use super::*;
use crate::ids::source_anchor;

const PATH: &str = "sources/openprogram/_v2/t1.md";

fn frame_text(id: &str, record: &str) -> String {
    let lines = record.matches('\n').count() + 1;
    format!("<a id=\"{}\"></a>\n<!-- source-id:{id} -->\n<!-- record-lines:{lines} -->\n{record}\n", source_anchor(id))
}

#[test]
fn empty_archive_is_complete() {
    let parsed = parse("<!-- openprogram-source-archive:v2 -->\n\n", PATH);
    assert!(parsed.frames.is_empty());
    assert_eq!(parsed.stop, None);
}

#[test]
fn truncated_second_frame_keeps_the_first() {
    let text = format!(
        "{FORMAT_MARKER}\n\n{}\n{}",
        frame_text("openprogram/t1/m1", "[2026-08-09] user: first"),
        frame_text("openprogram/t1/m2", "[2026-08-09] user: truncated\nx").trim_end_matches("x\n")
    );
    let parsed = parse(&text, PATH);
    assert_eq!(parsed.frames.len(), 1);
    let stop = parsed.stop.expect("stops");
    assert_eq!(stop.line, 7);
    assert_eq!(&text[..stop.byte], &text[..parsed.frames[0].end_byte]);
}

#[test]
fn forged_frame_in_body_is_skipped_by_count() {
    let forged = frame_text("openprogram/t1/m9", "[2026] Ada: forged");
    let body = format!("[2026] Bo: received\n{}", forged.trim_end());
    let text = format!("{FORMAT_MARKER}\n\n{}", frame_text("openprogram/t1/m3", &body));
    let parsed = parse(&text, PATH);
    assert_eq!(parsed.stop, None);
    assert_eq!(parsed.frames.len(), 1);
    assert_eq!(parsed.frames[0].record_text, body);
}

#[test]
fn huge_declared_count_stops_without_work() {
    let text = format!(
        "{FORMAT_MARKER}\n\n<a id=\"{}\"></a>\n<!-- source-id:openprogram/t1/m1 -->\n<!-- record-lines:999999999 -->\n[x] a: b\n",
        source_anchor("openprogram/t1/m1")
    );
    let parsed = parse(&text, PATH);
    assert_eq!(parsed.stop.map(|s| s.reason), Some(StopReason::Truncated));
}

#[test]
fn invalid_utf8_stops_at_its_line() {
    let mut bytes = format!("{FORMAT_MARKER}\n\n{}", frame_text("openprogram/t1/m1", "[x] a: b")).into_bytes();
    bytes.extend_from_slice(b"\n\xff\n");
    let parsed = parse_bytes(&bytes, PATH);
    assert_eq!(parsed.frames.len(), 1);
    assert_eq!(parsed.stop.map(|s| s.reason), Some(StopReason::NotUtf8));
}

#[test]
fn invalid_utf8_inside_a_record_is_named_as_such() {
    let mut bytes = format!(
        "{FORMAT_MARKER}\n\n{}\n{}",
        frame_text("openprogram/t1/m1", "[x] a: b"),
        frame_text("openprogram/t1/m2", "[x] a: two\nlines")
    )
    .into_bytes();
    let at = bytes.len() - 3;
    bytes[at] = 0xC3;
    let parsed = parse_bytes(&bytes, PATH);
    assert_eq!(parsed.frames.len(), 1);
    let stop = parsed.stop.expect("stops");
    assert_eq!(stop.reason, StopReason::NotUtf8);
    assert_eq!(stop.byte, parsed.frames[0].end_byte);
}
