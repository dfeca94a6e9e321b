//! Branches (spec 02 §3.4), as a property over random DAGs and random orders of writes:
//! a record is written at most once whatever the order, a shared prefix once for every
//! branch through it, a forced write takes the head branch to its end, and a live tip's
//! tail below the threshold is left for a later forced pass. `PROPTEST_CASES` sets the
//! number of cases (default 12: each case is a real workspace and SQLite file).

use proptest::prelude::*;
use scriptorium_writer_runtime::{Message, SessionStore, records, tokens, unwritten};

use crate::support::{Fixture, Script, T0, owner_turn};

const THRESHOLD: usize = 2000;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(12)
}

/// One step of a random history.
#[derive(Clone, Debug)]
enum Step {
    /// The per-turn (unforced) write of the head branch.
    Turn,
    /// A forced write of every branch.
    Forced,
    /// Move the head to the tip with this index (modulo the tips).
    Switch(usize),
    /// Archive the tip with this index.
    Archive(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        Just(Step::Turn),
        Just(Step::Forced),
        any::<usize>().prop_map(Step::Switch),
        any::<usize>().prop_map(Step::Archive)
    ]
}

/// A random tree: node `i` hangs from one of the nodes before it; its size in words.
fn dag() -> impl Strategy<Value = Vec<(usize, usize)>> {
    prop::collection::vec((any::<usize>(), 0usize..900), 2..24)
}

fn build(shape: &[(usize, usize)]) -> Vec<Message> {
    shape
        .iter()
        .enumerate()
        .map(|(index, (parent, words))| {
            let predecessor = (index > 0).then(|| format!("n{}", parent % index));
            let role = if index.is_multiple_of(2) { "user" } else { "assistant" };
            let text = format!("fact n{index}{}", " word".repeat(*words));
            owner_turn(&format!("n{index}"), predecessor.as_deref(), role, &text, T0 + index as f64)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn every_record_is_written_at_most_once_and_forced_writes_leave_only_short_tails(
        shape in dag(),
        steps in prop::collection::vec(step(), 1..6),
    ) {
        let fx = Fixture::new("dag", Script::Facts, crate::support::config(THRESHOLD)).expect("fixture");
        let nodes = build(&shape);
        fx.store.append("s", &nodes, T0).expect("append");
        for step in steps.iter().chain([Step::Forced].iter()) {
            let tips: Vec<String> = fx.store.list_branches("s").expect("tips").into_iter().map(|t| t.head_msg_id).collect();
            match step {
                Step::Turn => prop_assert_eq!(fx.runtime.hook("s", None, false), None),
                Step::Forced => prop_assert_eq!(fx.runtime.hook("s", None, true), None),
                Step::Switch(i) => fx.store.set_head("s", &tips[i % tips.len()]).expect("switch"),
                Step::Archive(i) => fx.store.set_branch_archived("s", &tips[i % tips.len()], true).expect("archive"),
            }
            // At most once, after every step: a marked node's fact appears once, an
            // unmarked one's never; each is archived at most once.
            let marked = fx.marked("s").expect("marked");
            let archive = std::fs::read_to_string(fx.memory().join("sources/openprogram/_v2/s.md")).unwrap_or_default();
            for node in &nodes {
                let expected = usize::from(marked.contains(&node.id));
                prop_assert_eq!(fx.fact_count(&node.id), expected, "{} after {:?}", node.id, step);
                let line = format!("source-id:openprogram/s/{}\n", node.id);
                prop_assert!(archive.matches(&line).count() <= 1, "{} archived twice", node.id);
            }
        }
        // After the final forced write: the head branch is written to its last turn, and
        // every other live tip owes less than the threshold.
        let workspace_id = fx.runtime.workspace().workspace_id().to_owned();
        let head = fx.store.get_session("s").expect("session").and_then(|s| s.head_id);
        for tip in fx.store.list_branches("s").expect("tips") {
            let rows = fx.store.get_branch("s", Some(&tip.head_msg_id)).expect("branch");
            let all = records("s", &rows, 0).expect("records");
            let marked = scriptorium_writer_runtime::marked_ids(&rows, &workspace_id);
            let pending = unwritten(&all, &marked);
            if Some(&tip.head_msg_id) == head.as_ref() {
                prop_assert!(pending.is_empty(), "the head branch owes {} records", pending.len());
            } else if !tip.archived {
                prop_assert!(tokens(pending) < THRESHOLD, "a live tip owes {} tokens", tokens(pending));
            }
        }
    }
}
