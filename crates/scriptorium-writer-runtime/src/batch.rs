//! Which records are due (spec 02 §2.4, §3.2): the unmarked suffix of a branch, the first
//! batch of it, and the unforced gate with its idle allowance.

use std::collections::HashSet;

use crate::records::Record;
use crate::store::Message;

/// The metadata key of the written marker (spec 02 §3.1; historic name, kept).
pub const MARKER_KEY: &str = "memory_written_scriptorium";

/// The default and fallback trigger threshold.
pub const DEFAULT_TRIGGER_TOKENS: usize = 16_000;

/// The idle allowance of the unforced gate: one hour.
pub const IDLE_ALLOWANCE_SECONDS: f64 = 3600.0;

/// `memory.writer.trigger_tokens` as read from configuration: 8000, 16000 or 32000;
/// anything else falls back to 16000.
pub fn trigger_tokens(configured: Option<i64>) -> usize {
    match configured {
        Some(8000) => 8000,
        Some(32_000) => 32_000,
        _ => DEFAULT_TRIGGER_TOKENS,
    }
}

/// The ids of `rows` whose marker equals `workspace_id` (marks of other workspaces do
/// not count).
pub fn marked_ids<'a>(rows: &'a [Message], workspace_id: &str) -> HashSet<&'a str> {
    rows.iter().filter(|row| row.field(MARKER_KEY) == Some(workspace_id)).map(|row| row.id.as_str()).collect()
}

/// The unmarked suffix of `records` (spec 02 §3.2): walk back from the newest and stop at
/// the first marked one. A walk that meets no mark offers the whole branch.
pub fn unwritten<'a>(records: &'a [Record], marked: &HashSet<&str>) -> &'a [Record] {
    let start = records.iter().rposition(|record| marked.contains(record.node_id())).map_or(0, |index| index + 1);
    records.get(start..).unwrap_or_default()
}

/// The first batch of `pending` (spec 02 §2.4): the prefix up to and including the
/// record at which the running token sum reaches `threshold`, else all of it.
pub fn first_batch(pending: &[Record], threshold: usize) -> &[Record] {
    let mut sum = 0usize;
    for (index, record) in pending.iter().enumerate() {
        sum = sum.saturating_add(record.tokens());
        if sum >= threshold {
            return pending.get(..=index).unwrap_or(pending);
        }
    }
    pending
}

/// The sum of the records' tokens.
pub fn tokens(records: &[Record]) -> usize {
    records.iter().fold(0usize, |sum, record| sum.saturating_add(record.tokens()))
}

/// Whether the records' tokens reach `threshold`, counting only as far as needed.
pub fn reaches(records: &[Record], threshold: usize) -> bool {
    let mut sum = 0usize;
    records.iter().any(|record| {
        sum = sum.saturating_add(record.tokens());
        sum >= threshold
    }) || threshold == 0
}

/// The unforced gate (spec 02 §2.4): write iff the batch reaches `threshold`, or it has
/// tokens and its newest timestamp is at least an hour before `now` (no readable
/// timestamp reads as `now`, i.e. not idle).
pub fn unforced_gate(batch: &[Record], threshold: usize, now: f64) -> bool {
    let total = tokens(batch);
    if total >= threshold {
        return true;
    }
    let newest = batch
        .iter()
        .filter_map(|record| record.epoch)
        .fold(None, |best: Option<f64>, epoch| Some(best.map_or(epoch, |best| best.max(epoch))));
    total > 0 && now - newest.unwrap_or(now) >= IDLE_ALLOWANCE_SECONDS
}

#[cfg(test)]
mod tests;
