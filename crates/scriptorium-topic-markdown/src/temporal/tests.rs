//! Calendar validity and window overlap.

use super::*;

#[test]
fn partial_dates_need_real_days() {
    assert!(PartialDate::parse("2024").is_some());
    assert!(PartialDate::parse("2024-02-29").is_some());
    assert!(PartialDate::parse("2023-02-29").is_none());
    assert!(PartialDate::parse("2024-02-30").is_none());
    assert!(PartialDate::parse("2024-13").is_none());
    assert!(PartialDate::parse("0000").is_none());
    assert!(PartialDate::parse("2024-3").is_none());
    assert!(PartialDate::parse("２０２４").is_none());
    assert!(!EvidenceTime::new("2024-02-30").is_valid());
    assert!(EvidenceTime::new("undated").is_valid());
    assert_eq!(EvidenceTime::new("undated").when(), None);
}

#[test]
fn windows_overlap_whole_intervals() {
    let window = TimeWindow::new(Some("2024-03-16"), None).expect("valid window");
    assert!(window.matches(["2024-03"]));
    assert!(!window.matches(["2024-03-15"]));
    let march = TimeWindow::new(Some("2024-03"), Some("2024-03")).expect("valid window");
    assert!(!march.matches(["2024-04-01"]));
    assert!(march.matches(["not-a-date", "2024-03-31"]));
    assert!(!march.matches([]));
    let dec = TimeWindow::new(None, Some("2024")).expect("valid window");
    assert!(dec.matches(["2024-12-31"]));
}

#[test]
fn bad_windows_have_codes() {
    let err = TimeWindow::new(Some("2025"), Some("2024")).expect_err("inverted");
    assert_eq!(err.code(), ErrorCode::EmptyDateWindow);
    let err = TimeWindow::new(Some("2024-02-30"), None).expect_err("invalid");
    assert_eq!(err.code(), ErrorCode::InvalidWindowDate);
    assert_eq!(err.detail(), "invalid date_from: 2024-02-30");
    assert!(TimeWindow::new(Some("9999-12-31"), None).is_ok());
}
