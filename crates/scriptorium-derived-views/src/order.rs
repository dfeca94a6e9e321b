//! The block creation order kept in `runtime.json` (spec 01 §8.2): existing ranks are
//! never changed or dropped (a deleted block keeps its rank, as in the reference), and
//! each new id gets the next rank in parse order.

use scriptorium_topic_markdown::Unit;
use scriptorium_transaction::RuntimeState;

/// Give every unit id without a rank the next one, in parse order.
pub fn assign_creation_order(state: &mut RuntimeState, units: &[Unit]) {
    for unit in units {
        if state.rank(&unit.memory_id).is_none() {
            let next = state.next_rank();
            state.set_rank(&unit.memory_id, next);
        }
    }
}
