//! Promotion (spec 02 §5) through the runtime: a pending source becomes trusted with its
//! audit line, is distilled by one writer run that may cite only it, and a second
//! promotion neither rewrites nor calls the model again.

use scriptorium_archive_format::{SourceRecord, parse_bytes, plan_append};
use scriptorium_transaction::{Changes, ErrorCode, TRUST_AUDIT_FILE};
use scriptorium_writer_runtime::PassError;

use crate::support::{Fixture, Script, TestResult, config};

const ARCHIVE: &str = "sources/telegram/_v2/g.md";

fn archive_pending(fx: &Fixture) -> TestResult {
    let mut pending = SourceRecord::new("telegram", "g", "p1", 0, "user", "Bo plans a trip to Oslo");
    pending.trust_state = "pending".to_owned();
    pending.speaker_id = Some("4402".to_owned());
    let workspace = fx.runtime.workspace();
    let plan = plan_append(&[pending], &workspace.archive_tree())?;
    let changes: Changes = plan.files.into_iter().map(|file| (file.path, Some(file.bytes))).collect();
    let lock = workspace.lock(std::time::Duration::from_secs(1))?;
    workspace.install(&lock, &changes)?;
    Ok(())
}

#[test]
fn a_promoted_source_is_trusted_audited_and_distilled_once() -> TestResult {
    let fx = Fixture::new("promote", Script::Facts, config(8000))?;
    archive_pending(&fx)?;
    let report = fx.runtime.promote("telegram/g/p1", "owner/local")?;
    assert!(report.promoted && report.distilled, "{report:?}");
    assert_eq!(report.changed_files, ["topics/facts.md"]);
    assert_eq!(fx.writer.writes(), 1);
    assert!(fx.facts().contains("source telegram/g/p1 was said."));

    let bytes = std::fs::read(fx.memory().join(ARCHIVE))?;
    let scan = parse_bytes(&bytes, ARCHIVE);
    assert_eq!(scan.frames[0].effective_meta().trust_state.as_str(), "trusted");
    let audit = std::fs::read_to_string(fx.memory().join(".scriptorium").join(TRUST_AUDIT_FILE))?;
    assert_eq!(audit.lines().count(), 1);
    assert!(audit.contains("\"source_id\":\"telegram/g/p1\"") && audit.contains("\"speaker_id\":\"4402\""));

    let again = fx.runtime.promote("telegram/g/p1", "owner/local")?;
    assert!(!again.promoted && again.distilled && again.changed_files.is_empty(), "{again:?}");
    assert_eq!(fx.writer.writes(), 1, "a cited source is not distilled again");
    Ok(())
}

#[test]
fn promoting_a_source_that_does_not_exist_changes_nothing() -> TestResult {
    let fx = Fixture::new("promote-missing", Script::Facts, config(8000))?;
    archive_pending(&fx)?;
    let revision = fx.runtime.workspace().revision()?;
    let error = fx.runtime.promote("telegram/g/nope", "owner/local").err();
    assert!(matches!(&error, Some(PassError::Transaction(e)) if e.code() == ErrorCode::MemoryNotFound), "{error:?}");
    assert_eq!(fx.runtime.workspace().revision()?, revision);
    assert_eq!(fx.writer.writes(), 0);
    assert!(!fx.memory().join(".scriptorium").join(TRUST_AUDIT_FILE).exists());
    Ok(())
}
