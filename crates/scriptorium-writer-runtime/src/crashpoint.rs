//! The write pass's named crash points, armed like the transaction's
//! (`SCRIPTORIUM_CRASH_AT=name:n`, the same mechanism), for the child-process crash tests.

/// Every crash point of the write pass, in protocol order (docs/durability.md).
pub const POINTS: &[&str] = &["writer.archived", "writer.installed", "writer.marked", "writer.counters_saved"];

/// Count a pass through `name` and abort if it is the armed occurrence.
pub(crate) fn hit(name: &'static str) {
    scriptorium_transaction::crashpoint::hit_listed(POINTS, name);
}
