//! Backfill (spec 02 §8.2) on a real workspace: every uncited trusted source is written
//! once, in budgeted batches; pending sources never reach the writer; a rerun on a
//! complete workspace makes no model call; no progress ends `incomplete`; a root
//! `core.md` that is not a topic file is archived and then written.

use scriptorium_archive_format::{SourceRecord, plan_append};
use scriptorium_transaction::{Changes, Workspace};
use scriptorium_writer_runtime::{BackfillStatus, LEGACY_CORE_PROVIDER};

use crate::support::{Fixture, Script, TestResult, config};

/// Archive `n` trusted records and one pending one in thread `t`.
fn archive(fx: &Fixture, n: usize) -> TestResult {
    let mut records: Vec<SourceRecord> = (0..n)
        .map(|i| {
            SourceRecord::new(
                "openprogram",
                "t",
                format!("m{i}"),
                i as i64,
                "user",
                format!("history {i} {}", "w ".repeat(40)),
            )
        })
        .collect();
    let mut pending = SourceRecord::new("telegram", "g", "p1", 0, "user", "unpaired speech");
    pending.trust_state = "pending".to_owned();
    records.push(pending);
    let workspace: &Workspace = fx.runtime.workspace();
    let plan = plan_append(&records, &workspace.archive_tree())?;
    let changes: Changes = plan.files.into_iter().map(|file| (file.path, Some(file.bytes))).collect();
    let lock = workspace.lock(std::time::Duration::from_secs(1))?;
    workspace.install(&lock, &changes)?;
    Ok(())
}

fn citations(fx: &Fixture, id: &str) -> usize {
    fx.facts().matches(&format!("source {id} was said.")).count()
}

#[test]
fn every_uncited_trusted_source_is_written_once_in_budgeted_batches() -> TestResult {
    let fx = Fixture::new("backfill", Script::Facts, config(8000))?;
    archive(&fx, 5)?;
    // Each record is ~45 tokens: a 100-token budget takes two per batch.
    let report = fx.runtime.backfill(100)?;
    assert_eq!(report.status, BackfillStatus::Ok);
    assert_eq!((report.candidates, report.processed, report.remaining), (5, 5, 0));
    assert_eq!(fx.writer.writes(), 3);
    for i in 0..5 {
        assert_eq!(citations(&fx, &format!("openprogram/t/m{i}")), 1, "{}", fx.facts());
    }
    assert_eq!(citations(&fx, "telegram/g/p1"), 0, "a pending source never reaches the writer");
    assert_eq!(report.revision, fx.runtime.workspace().revision()?);

    let again = fx.runtime.backfill(100)?;
    assert_eq!((again.candidates, again.processed, again.remaining), (0, 0, 0));
    assert_eq!(fx.writer.writes(), 3, "a complete workspace costs no model call");
    Ok(())
}

#[test]
fn a_batch_that_writes_nothing_ends_incomplete_and_a_rerun_resumes() -> TestResult {
    let fx = Fixture::new("backfill-stuck", Script::Nothing, config(8000))?;
    archive(&fx, 3)?;
    let report = fx.runtime.backfill(100)?;
    assert_eq!(report.status, BackfillStatus::Incomplete);
    assert_eq!((report.candidates, report.processed, report.remaining), (3, 2, 3));
    *fx.writer.script.lock().map_err(|_| "script")? = Script::Facts;
    let report = fx.runtime.backfill(100)?;
    assert_eq!((report.status, report.candidates, report.remaining), (BackfillStatus::Ok, 3, 0));
    Ok(())
}

#[test]
fn a_root_core_that_is_not_a_topic_is_archived_then_written() -> TestResult {
    let fx = Fixture::new("backfill-core", Script::Facts, config(8000))?;
    std::fs::write(fx.memory().join("core.md"), "- likes tea\n- lives in Oslo\n")?;
    let report = fx.runtime.backfill(16_000)?;
    assert_eq!((report.status, report.candidates), (BackfillStatus::Ok, 1));
    let dir = fx.memory().join("sources").join(LEGACY_CORE_PROVIDER).join("_v2");
    let archive = std::fs::read_to_string(dir.join("legacy-core.md"))?;
    assert!(archive.contains("- likes tea"));
    assert!(fx.facts().contains(&format!("source {LEGACY_CORE_PROVIDER}/legacy-core/")), "{}", fx.facts());
    Ok(())
}
