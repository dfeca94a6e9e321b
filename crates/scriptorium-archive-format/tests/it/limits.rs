//! Huge and hostile inputs (spec 04, T9): declared counts are checked before any work,
//! long lines and many frames stay linear, and NUL bytes, a BOM or invalid UTF-8 stop
//! the scan where the spec says.

use std::time::{Duration, Instant};

use scriptorium_archive_format::{
    FORMAT_MARKER, MemoryTree, SourceRecord, StopReason, fuzz, parse, parse_bytes, plan_append, source_anchor,
};

const PATH: &str = "sources/openprogram/_v2/thread-1.md";

fn frame_head(message: &str, count: &str) -> String {
    let id = format!("openprogram/thread-1/{message}");
    format!("<a id=\"{}\"></a>\n<!-- source-id:{id} -->\n<!-- record-lines:{count} -->\n", source_anchor(&id))
}

/// The process's peak virtual size in KiB (`VmPeak`), where `/proc` exists.
fn vm_peak_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmPeak:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn archive_of(records: &[SourceRecord]) -> Vec<u8> {
    let plan = plan_append(records, &MemoryTree::new()).expect("valid records");
    plan.files.into_iter().next().expect("one archive").bytes
}

#[test]
fn huge_declared_count_is_rejected_without_work() {
    // One million short lines follow, far fewer than the declared count.
    let mut text = format!("{FORMAT_MARKER}\n\n{}[x] a: b\n", frame_head("m1", "999999999"));
    text.push_str(&"y\n".repeat(1_000_000));
    let before = vm_peak_kib();
    let started = Instant::now();
    for _ in 0..100 {
        let parsed = parse(&text, PATH);
        assert!(parsed.frames.is_empty());
        let stop = parsed.stop.expect("the count does not fit");
        assert_eq!((stop.line, stop.reason), (2, StopReason::Truncated));
    }
    // The count exceeds the remaining bytes, so not even one LF is counted: a hundred
    // scans of 2 MB take far less than a second (one memchr pass would be ~0.3 ms each).
    assert!(started.elapsed() < Duration::from_secs(1), "took {:?}", started.elapsed());
    // Nothing is reserved by the count: a line table of 999,999,999 entries would be
    // gigabytes of address space.
    if let (Some(before), Some(after)) = (before, vm_peak_kib()) {
        assert!(after < before + 512 * 1024, "VmPeak grew from {before} KiB to {after} KiB");
    }
    fuzz::check_bytes_at(text.as_bytes(), PATH);
}

#[test]
fn nine_digit_count_that_fits_is_honoured() {
    // Leading zeros keep the count at nine digits; ten digits are no count at all.
    let text = format!("{FORMAT_MARKER}\n\n{}[x] a: b\n", frame_head("m1", "000000001"));
    let parsed = parse(&text, PATH);
    assert_eq!(parsed.frames.len(), 1);
    assert!(parsed.stop.is_none());
    let text = format!("{FORMAT_MARKER}\n\n{}[x] a: b\n", frame_head("m1", "0000000001"));
    assert_eq!(parse(&text, PATH).stop.map(|s| s.reason), Some(StopReason::BadRecordCount));
}

#[test]
fn ten_megabyte_single_line() {
    let body = "长".repeat((10 << 20) / 3) + &"x".repeat(1000);
    let record = SourceRecord::new("openprogram", "thread-1", "m1", 1, "user", body.clone());
    let bytes = archive_of(&[record]);
    assert!(bytes.len() > 10 << 20);
    let started = Instant::now();
    let parsed = parse_bytes(&bytes, PATH);
    // Spec 04 P12: a 10 MB single-line record in at most 10 s, even unoptimised.
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    assert!(parsed.stop.is_none());
    assert_eq!(parsed.frames.len(), 1);
    assert_eq!(parsed.frames[0].record_text, format!("[] user: {body}"));
    assert!(fuzz::check_bytes_at(&bytes, PATH));

    // The same line with no LF at all is not an archive, and says so at once.
    let line = body.into_bytes();
    let parsed = parse_bytes(&line, PATH);
    assert_eq!(parsed.stop.map(|s| (s.line, s.reason)), Some((0, StopReason::MissingMarker)));
}

#[test]
fn hundred_thousand_frames() {
    let records: Vec<SourceRecord> = (0..100_000)
        .map(|n| {
            let mut record =
                SourceRecord::new("openprogram", "thread-1", format!("m{n}"), n, "user", format!("第{n}条\nline two"));
            record.speaker_id = Some(format!("u-{}", n % 7));
            record
        })
        .collect();
    let bytes = archive_of(&records);
    let started = Instant::now();
    let parsed = parse_bytes(&bytes, PATH);
    // A guard against quadratic work, not a benchmark: test builds leave dependencies
    // (sha2, memchr, simdutf8) unoptimised. `cargo bench -p scriptorium-benches` measures.
    assert!(started.elapsed() < Duration::from_secs(60), "took {:?}", started.elapsed());
    assert!(parsed.stop.is_none());
    assert_eq!(parsed.frames.len(), 100_000);
    assert_eq!(parsed.frames[99_999].source_id, "openprogram/thread-1/m99999");
    assert_eq!(parsed.frames[99_999].speaker_id.as_deref(), Some("u-4"));
    assert!(fuzz::check_bytes_at(&bytes, PATH));
}

#[test]
fn nul_bytes() {
    // In a body, NUL is an ordinary character and comes back as it went in.
    let record = SourceRecord::new("openprogram", "thread-1", "m1", 1, "user", "a\0b\n\0\n");
    let bytes = archive_of(&[record]);
    let parsed = parse_bytes(&bytes, PATH);
    assert!(parsed.stop.is_none());
    assert_eq!(parsed.frames[0].record_text, "[] user: a\0b\n\0\n");
    assert!(fuzz::check_bytes_at(&bytes, PATH));

    // In a structural line it breaks the frame, and the scan stops there.
    let broken =
        String::from_utf8(bytes.clone()).expect("UTF-8").replacen("<!-- record-lines:", "<!--\0record-lines:", 1);
    let parsed = parse(&broken, PATH);
    assert!(parsed.frames.is_empty());
    assert_eq!(parsed.stop.map(|s| (s.line, s.reason)), Some((2, StopReason::BadRecordCount)));
    fuzz::check_bytes_at(broken.as_bytes(), PATH);

    // Only NULs: no marker.
    let zeros = vec![0u8; 1 << 16];
    assert_eq!(parse_bytes(&zeros, PATH).stop.map(|s| s.reason), Some(StopReason::MissingMarker));
    fuzz::check_bytes(&zeros);
}

#[test]
fn byte_order_mark() {
    // The file is UTF-8 without BOM: a leading BOM means no marker (spec 01 §2.2).
    let record = SourceRecord::new("openprogram", "thread-1", "m1", 1, "user", "\u{feff}inside a body is fine");
    let bytes = archive_of(&[record]);
    assert!(parse_bytes(&bytes, PATH).stop.is_none());
    let mut with_bom = "\u{feff}".as_bytes().to_vec();
    with_bom.extend_from_slice(&bytes);
    let parsed = parse_bytes(&with_bom, PATH);
    assert!(parsed.frames.is_empty());
    assert_eq!(parsed.stop.map(|s| (s.line, s.byte, s.reason)), Some((0, 0, StopReason::MissingMarker)));
    fuzz::check_bytes(&with_bom);
}

#[test]
fn invalid_utf8_keeps_the_frames_before_its_line() {
    let records: Vec<SourceRecord> =
        (0..3).map(|n| SourceRecord::new("openprogram", "thread-1", format!("m{n}"), n, "user", "ok")).collect();
    let bytes = archive_of(&records);
    let good_bytes = bytes.clone();
    let good = parse_bytes(&good_bytes, PATH);
    let third = good.frames[2].start_byte;

    // A bad byte in the third frame's anchor line: two frames, then `NotUtf8` right there.
    let mut bad = bytes.clone();
    bad[third + 3] = 0xFF;
    let parsed = parse_bytes(&bad, PATH);
    assert_eq!(parsed.frames, good.frames[..2]);
    let stop = parsed.stop.expect("stops");
    assert_eq!((stop.line, stop.byte, stop.reason), (good.frames[1].record_end + 1, third, StopReason::NotUtf8));
    fuzz::check_bytes(&bad);

    // A bad byte inside the third record stops at the same place: frames never reach
    // past the first bad line.
    let mut bad = bytes;
    let last = bad.len() - 2;
    bad[last] = 0xC3;
    let parsed = parse_bytes(&bad, PATH);
    assert_eq!(parsed.frames, good.frames[..2]);
    assert_eq!(parsed.stop.map(|s| s.byte), Some(third));
    fuzz::check_bytes(&bad);
}
