//! The block creation order kept in `runtime.json` (spec 01 §8.2): existing ranks are
//! never changed or dropped (a deleted block keeps its rank, as in the reference), and
//! each new id gets the next rank in parse order.

use std::borrow::Borrow;

use scriptorium_topic_markdown::Unit;
use scriptorium_transaction::RuntimeState;

/// Give every unit id without a rank the next one, in parse order; returns how many
/// ranks it gave. The next rank is computed once and counted up: asking the state for
/// it per id scans every rank, which is quadratic on a first build of a large workspace.
pub fn assign_creation_order<U: Borrow<Unit>>(state: &mut RuntimeState, units: &[U]) -> usize {
    let mut next = None;
    let mut given = 0;
    for unit in units.iter().map(Borrow::borrow) {
        if state.rank(&unit.memory_id).is_none() {
            let rank = *next.get_or_insert_with(|| state.next_rank());
            state.set_rank(&unit.memory_id, rank);
            next = Some(rank.saturating_add(1));
            given += 1;
        }
    }
    given
}
