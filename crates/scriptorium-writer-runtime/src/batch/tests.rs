//! The unmarked suffix, the first batch and the unforced gate (spec 02 §2.4, §3.2).

use std::collections::HashSet;

use scriptorium_archive_format::SourceRecord;

use super::*;

fn record(id: &str, tokens: usize, epoch: Option<f64>) -> Record {
    Record::with_tokens(SourceRecord::new("openprogram", "s", id, 0, "user", "x"), epoch, tokens)
}

#[test]
fn the_trigger_threshold_accepts_three_values_only() {
    assert_eq!(
        [Some(8000), Some(16_000), Some(32_000), Some(12_345), Some(0), None].map(trigger_tokens),
        [8000, 16_000, 32_000, 16_000, 16_000, 16_000]
    );
}

#[test]
fn pending_is_the_suffix_after_the_newest_mark() {
    let records: Vec<Record> = ["a", "b", "c", "d"].iter().map(|id| record(id, 1, None)).collect();
    let ids = |slice: &[Record]| slice.iter().map(|r| r.node_id().to_owned()).collect::<Vec<_>>();
    assert_eq!(ids(unwritten(&records, &HashSet::new())), ["a", "b", "c", "d"]);
    assert_eq!(ids(unwritten(&records, &HashSet::from(["b"]))), ["c", "d"]);
    // The walk trusts that marks form a prefix: an older gap is not revisited.
    assert_eq!(ids(unwritten(&records, &HashSet::from(["a", "c"]))), ["d"]);
    assert!(unwritten(&records, &HashSet::from(["d"])).is_empty());
}

#[test]
fn the_first_batch_ends_at_the_record_reaching_the_threshold() {
    let records: Vec<Record> = [3, 4, 5, 6].iter().enumerate().map(|(i, t)| record(&i.to_string(), *t, None)).collect();
    assert_eq!(first_batch(&records, 7).len(), 2);
    assert_eq!(first_batch(&records, 8).len(), 3);
    assert_eq!(first_batch(&records, 100).len(), 4);
    assert_eq!(first_batch(&records, 0).len(), 1);
    assert!(reaches(&records, 18) && !reaches(&records, 19) && reaches(&[], 0));
}

#[test]
fn the_gate_opens_at_the_threshold_or_after_an_idle_hour() {
    let now = 10_000.0;
    assert!(unforced_gate(&[record("a", 10, Some(now))], 10, now));
    assert!(!unforced_gate(&[record("a", 9, Some(now - 3599.0))], 10, now));
    assert!(unforced_gate(&[record("a", 9, Some(now - 3600.0)), record("b", 0, Some(now - 7200.0))], 10, now));
    assert!(
        !unforced_gate(&[record("a", 9, Some(now - 7200.0)), record("b", 0, Some(now))], 10, now),
        "the newest counts"
    );
    assert!(!unforced_gate(&[record("a", 9, None)], 10, now), "no timestamp reads as now");
    assert!(!unforced_gate(&[record("a", 0, Some(0.0))], 10, now), "no tokens, no write");
}
