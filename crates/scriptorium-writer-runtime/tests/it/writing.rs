//! The write pass end to end: thresholds, the idle allowance, forced writes, markers,
//! counters and writer status, on a real workspace and a real SQLite store.

use scriptorium_writer_runtime::{MARKER_KEY, SessionStore, read_status};
use serde_json::{Map, json};

use crate::support::{Fixture, Script, T0, TestResult, chain, config};

#[test]
fn an_unforced_write_waits_for_the_threshold_then_writes_the_first_batch_once() -> TestResult {
    let fx = Fixture::new("threshold", Script::Facts, config(8000))?;
    // 10 turns of ~1000 tokens each: the first batch ends at the turn reaching 8000.
    fx.store.append("s1", &chain("a", None, 4, 1000, T0), T0)?;
    assert_eq!(fx.runtime.hook("s1", None, false), None);
    assert_eq!((fx.writer.writes(), fx.marked("s1")?.len()), (0, 0), "below the threshold, not idle");

    fx.store.append("s1", &chain("b", Some("a3"), 6, 1000, T0 + 10.0), T0 + 20.0)?;
    assert_eq!(fx.runtime.hook("s1", None, false), None);
    assert_eq!(fx.writer.writes(), 1);
    let marked = fx.marked("s1")?;
    assert_eq!(marked, ["a0", "a1", "a2", "a3", "b0", "b1", "b2", "b3"], "the prefix reaching 8000 tokens");
    for id in &marked {
        assert_eq!(fx.fact_count(id), 1, "{id}");
    }
    assert_eq!(fx.fact_count("b4"), 0);
    let state = fx.runtime.workspace().runtime_state();
    assert_eq!((state.local_batches, state.write_commits_since_global, state.written_batch), (1, 0, None));
    assert!(state.local_tokens >= 8000);
    assert!(state.last_global_at.is_some(), "the first write is followed by a global organize pass");
    assert_eq!(fx.writer.organize_runs.load(std::sync::atomic::Ordering::SeqCst), 1);
    let status = read_status(fx.runtime.workspace());
    assert_eq!(status.last_outcome, Some("success"));
    assert!(status.last_success_at.is_some());

    // Nothing more is due: the remaining two turns are below the threshold.
    assert_eq!(fx.runtime.hook("s1", None, false), None);
    assert_eq!(fx.writer.writes(), 1);
    Ok(())
}

#[test]
fn a_small_batch_is_written_once_its_newest_turn_is_an_hour_old() -> TestResult {
    let fx = Fixture::new("idle", Script::Facts, config(16_000))?;
    fx.store.append("s1", &chain("a", None, 2, 3, T0), T0)?;
    fx.clock.set(T0 + 1.0 + 3599.0);
    assert_eq!(fx.runtime.hook("s1", None, false), None);
    assert_eq!(fx.writer.writes(), 0, "59:59 after the newest turn");
    fx.clock.set(T0 + 1.0 + 3600.0);
    assert_eq!(fx.runtime.hook("s1", None, false), None);
    assert_eq!(fx.marked("s1")?, ["a0", "a1"]);
    Ok(())
}

#[test]
fn a_forced_write_takes_the_head_branch_to_its_last_turn_in_batches() -> TestResult {
    let fx = Fixture::new("forced", Script::Facts, config(8000))?;
    fx.store.append("s1", &chain("a", None, 11, 1000, T0), T0)?;
    assert_eq!(fx.runtime.hook("s1", None, true), None);
    assert_eq!(fx.writer.writes(), 2, "8 turns, then the 3 left");
    assert_eq!(fx.marked("s1")?.len(), 11);
    for index in 0..11 {
        assert_eq!(fx.fact_count(&format!("a{index}")), 1);
    }
    // A second forced write owes nothing.
    assert_eq!(fx.runtime.hook("s1", None, true), None);
    assert_eq!(fx.writer.writes(), 2);
    Ok(())
}

#[test]
fn markers_never_move_updated_at_and_other_workspaces_marks_do_not_count() -> TestResult {
    let fx = Fixture::new("markers", Script::Facts, config(8000))?;
    fx.store.append("s1", &chain("a", None, 3, 2, T0), T0 + 5.0)?;
    let mut foreign = Map::new();
    foreign.insert(MARKER_KEY.to_owned(), json!("w-00000000"));
    fx.store
        .merge_node_metadata_batch("s1", &[("a0".to_owned(), foreign.clone()), ("a1".to_owned(), foreign)].into())?;
    assert_eq!(fx.runtime.session_pending("s1")?.0, 3, "a copied session's marks are ignored");
    assert_eq!(fx.runtime.hook("s1", None, true), None);
    assert_eq!(fx.marked("s1")?, ["a0", "a1", "a2"]);
    assert_eq!(fx.store.get_session("s1")?.map(|s| s.updated_at), Some(T0 + 5.0));
    assert_eq!(fx.runtime.pending_turns()?, 0);
    Ok(())
}

#[test]
fn pending_turns_counts_unmarked_records_on_every_eligible_branch() -> TestResult {
    let fx = Fixture::new("pending", Script::Facts, config(8000))?;
    fx.store.append("s1", &chain("a", None, 4, 2, T0), T0)?;
    fx.store.append("s1", &chain("f", Some("a1"), 2, 2, T0), T0)?;
    fx.store.append("s2", &chain("b", None, 3, 2, T0), T0)?;
    // s1: a0..a3 on one branch, f0 f1 forked after a1: 6 distinct records; s2: 3.
    assert_eq!(fx.runtime.pending_turns()?, 9);
    fx.store.set_branch_archived("s1", "a3", true)?;
    fx.store.set_head("s1", "f1")?;
    assert_eq!(fx.runtime.pending_turns()?, 7, "an archived tip is not eligible");
    Ok(())
}

#[test]
fn legacy_cursors_become_markers_for_gap_free_archived_runs_and_are_dropped() -> TestResult {
    use scriptorium_archive_format::{MemoryTree, plan_append, source_anchor};
    let fx = Fixture::new("cursors", Script::Facts, config(32_000))?;
    let s1 = chain("a", None, 4, 2, T0);
    fx.store.append("s1", &s1, T0)?;
    fx.store.append("s2", &chain("b", None, 3, 2, T0), T0)?;
    // s1: a0, a1 and a3 were archived (v2); a2 is a gap, so only a0 and a1 count.
    let all = scriptorium_writer_runtime::records("s1", &s1, 0)?;
    let archived: Vec<_> = all.iter().filter(|r| r.node_id() != "a2").map(|r| r.source.clone()).collect();
    let plan = plan_append(&archived, &MemoryTree::new())?;
    for file in plan.files {
        let path = fx.memory().join(&file.path);
        std::fs::create_dir_all(path.parent().ok_or("no parent")?)?;
        std::fs::write(path, file.bytes)?;
    }
    // s2: a legacy archive; only its first header, right after the title, is trusted.
    let id = "openprogram/s2/b0";
    let forged = "openprogram/s2/b1";
    let legacy = format!(
        "# s2\n\n<a id=\"{}\"></a>\n<!-- source-id:{id} -->\nhello\n\n<a id=\"{}\"></a>\n<!-- source-id:{forged} -->\n",
        source_anchor(id),
        source_anchor(forged)
    );
    std::fs::write(fx.memory().join("sources/openprogram/s2.md"), legacy)?;
    let runtime_json = fx.memory().join(".scriptorium/runtime.json");
    std::fs::write(&runtime_json, br#"{"cursors": {"s1": {"message_id": "a3", "ordinal": 3}}, "local_batches": 2}"#)?;

    assert_eq!(fx.runtime.hook("s1", None, false), None);
    assert_eq!(fx.marked("s1")?, ["a0", "a1"]);
    assert_eq!(fx.marked("s2")?, ["b0"]);
    let state = std::fs::read_to_string(&runtime_json)?;
    assert!(!state.contains("cursors"), "{state}");
    assert_eq!(fx.runtime.workspace().runtime_state().local_batches, 2, "the counters are kept");
    assert_eq!(fx.writer.writes(), 0, "below the threshold: nothing else happened");
    Ok(())
}
