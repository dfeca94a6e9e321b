//! ISO-8601 formatting and parsing agree with each other and with known dates.

use super::*;
use proptest::prelude::*;

#[test]
fn known_instants_format_like_python() {
    assert_eq!(iso8601(0.0, 0).as_deref(), Some("1970-01-01T00:00:00+00:00"));
    assert_eq!(iso8601(1_714_557_600.5, 7200).as_deref(), Some("2024-05-01T12:00:00.500000+02:00"));
    assert_eq!(iso8601(1_714_557_600.0, -18_000).as_deref(), Some("2024-05-01T05:00:00-05:00"));
    assert_eq!(iso8601(f64::NAN, 0), None);
    assert_eq!(iso8601(1e15, 0), None);
}

#[test]
fn parsing_reads_offsets_and_defaults_to_utc() {
    assert_eq!(parse_iso8601("2024-05-01T12:00:00+02:00"), Some(1_714_557_600.0));
    assert_eq!(parse_iso8601("2024-05-01T10:00:00"), Some(1_714_557_600.0));
    assert_eq!(parse_iso8601("2024-05-01T10:00:00Z"), Some(1_714_557_600.0));
    assert_eq!(parse_iso8601("2024-05-01"), Some(1_714_521_600.0));
    for bad in ["", "yesterday", "2024-13-01", "2024-05-01T25:00", "2024-05-01T10:00:00+2"] {
        assert_eq!(parse_iso8601(bad), None, "{bad}");
    }
}

proptest! {
    #[test]
    fn formatting_then_parsing_gives_the_instant_back(micros in -60_000_000_000_000_000i64..250_000_000_000_000_000, offset in -50_400i32..50_400) {
        let offset = offset / 60 * 60;
        let epoch = micros as f64 / 1e6;
        let text = iso8601(epoch, offset).expect("in range");
        let back = parse_iso8601(&text).expect("parses");
        prop_assert!((back - epoch).abs() < 1e-3, "{text}: {back} vs {epoch}");
    }
}
