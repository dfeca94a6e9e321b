//! The block creation order kept in `runtime.json` (spec 01 §8.2): existing ranks are
//! never changed or dropped (a deleted block keeps its rank, as in the reference), and
//! each new id gets the next rank in parse order.

use std::borrow::Borrow;

use scriptorium_topic_markdown::Unit;
use scriptorium_transaction::RuntimeState;

use crate::json::string;

/// Give every unit id without a rank the next one, in parse order; returns how many
/// ranks it gave ([`RuntimeState::assign_ranks`], which also seeds a transaction's order).
pub fn assign_creation_order<U: Borrow<Unit>>(state: &mut RuntimeState, units: &[U]) -> usize {
    state.assign_ranks(units.iter().map(|unit| unit.borrow().memory_id.as_str()))
}

/// `runtime.json` as `RuntimeState::to_bytes` writes it after `ranked` ids are added to
/// the state that `written` (its own output) holds, made by inserting their lines rather
/// than writing every rank again. The file lists ranks by (rank, id), so this holds only
/// while each new rank is above every old one, as [`assign_creation_order`] gives them
/// (below `i64::MAX`, where ranks stop counting up); `None` when it cannot be sure.
pub(crate) fn append_ranks(written: &[u8], ranked: &[(String, i64)]) -> Option<Vec<u8>> {
    // The end of the non-empty creation_order object; ids are escaped, so no raw newline
    // inside one can fake it, and the members after it are short.
    const END: &[u8] = b"\n  },\n  \"write_commits_since_global\": ";
    if ranked.iter().any(|(_, rank)| *rank == i64::MAX) {
        return None;
    }
    let at = written.windows(END.len()).rposition(|window| window == END)?;
    let mut out = Vec::with_capacity(written.len() + ranked.len() * 32);
    out.extend_from_slice(written.get(..at)?);
    for (id, rank) in ranked {
        out.extend_from_slice(format!(",\n    {}: {rank}", string(id)).as_bytes());
    }
    out.extend_from_slice(written.get(at..)?);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_ranks_read_as_the_state_writes_them() {
        let mut state = RuntimeState::default();
        assert_eq!(append_ranks(&state.to_bytes(), &[("a\"b".to_owned(), 0)]), None, "no object to extend");
        state.set_rank("zz", 0);
        state.set_rank("aa", 1);
        let written = state.to_bytes();
        state.set_rank("b\"q", 2);
        state.set_rank("a\nz", 3);
        let ranked = [("b\"q".to_owned(), 2), ("a\nz".to_owned(), 3)];
        assert_eq!(append_ranks(&written, &ranked), Some(state.to_bytes()));
        assert_eq!(append_ranks(&written, &[("x".to_owned(), i64::MAX)]), None);
    }
}
