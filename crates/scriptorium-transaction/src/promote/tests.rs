//! Promotion on a real workspace: one line of the archive changes, one audit line is
//! added, history records it; a second promotion and every refusal change nothing.

use scriptorium_archive_format::{MemoryTree, SourceRecord, parse_bytes, plan_append};

use super::*;
use crate::History;
use crate::NoDerivedViews;
use crate::test_support::{TempDir, write_tree};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const ARCHIVE: &str = "sources/telegram/_v2/g1.md";

fn workspace(dir: &TempDir) -> Result<Workspace, Box<dyn std::error::Error>> {
    let mut pending = SourceRecord::new("telegram", "g1", "m1", 1, "user", "Bo likes tea");
    pending.trust_state = "pending".to_owned();
    pending.speaker_id = Some("4402".to_owned());
    pending.principal_id = "telegram/4402".to_owned();
    let trusted = SourceRecord::new("telegram", "g1", "m2", 2, "assistant", "ok");
    let mut tree = MemoryTree::new();
    let plan = plan_append(&[pending, trusted], &tree)?;
    tree.apply(&plan);
    let bytes = tree.get(ARCHIVE).ok_or("archive")?.to_vec();
    write_tree(dir.path(), &[(ARCHIVE, &bytes), ("topics/.keep", b"")]);
    Ok(Workspace::open(dir.path())?)
}

fn audit(dir: &TempDir) -> String {
    std::fs::read_to_string(dir.path().join(".scriptorium").join(TRUST_AUDIT_FILE)).unwrap_or_default()
}

#[test]
fn a_pending_source_becomes_trusted_with_one_audit_line_and_a_history_commit() -> TestResult {
    let dir = TempDir::new("promote");
    let ws = workspace(&dir)?;
    let before = std::fs::read(dir.path().join(ARCHIVE))?;
    let revision = ws.revision()?;
    let request = PromoteRequest::new("telegram/g1/m1", "owner/local", "2026-12-02T00:00:00Z");
    let done = ws.promote_source(&request, &NoDerivedViews)?;
    assert!(done.promoted);
    assert_ne!(done.revision, revision);
    assert_eq!(done.revision, ws.revision()?);

    let after = std::fs::read(dir.path().join(ARCHIVE))?;
    let scan = parse_bytes(&after, ARCHIVE);
    assert!(scan.is_complete());
    assert!(scan.frames.iter().all(|frame| frame.effective_meta().trust_state.as_str() == "trusted"));
    let changed = before.split(|&b| b == b'\n').zip(after.split(|&b| b == b'\n')).filter(|(a, b)| a != b).count();
    assert_eq!(changed, 1);
    assert_eq!(
        audit(&dir),
        "{\"timestamp\":\"2026-12-02T00:00:00Z\",\"action\":\"promote\",\"source_id\":\"telegram/g1/m1\",\
         \"principal_id\":\"owner/local\",\"speaker_id\":\"4402\",\"authority_tier\":\"owner\"}\n"
    );
    let history = History::open_existing(dir.path())?.ok_or("history")?;
    assert_eq!(
        history.list(1)?.first().map(|entry| entry.message.clone()).as_deref(),
        Some("memory: trust source telegram/g1/m1")
    );
    assert!(done.git_committed);
    assert!(history.list(1)?.first().is_some_and(|entry| entry.changed.contains(&ARCHIVE.to_owned())));

    // Again: trusted already, nothing written.
    let again = ws.promote_source(&request, &NoDerivedViews)?;
    assert!(!again.promoted);
    assert_eq!(again.revision, done.revision);
    assert_eq!(audit(&dir).lines().count(), 1);
    assert_eq!(std::fs::read(dir.path().join(ARCHIVE))?, after);
    Ok(())
}

#[test]
fn refusals_change_nothing() -> TestResult {
    let dir = TempDir::new("promote-refused");
    let ws = workspace(&dir)?;
    let revision = ws.revision()?;
    for (id, code) in [
        ("telegram/g1/m9", ErrorCode::MemoryNotFound),
        ("telegram/nothread/m1", ErrorCode::MemoryNotFound),
        ("not-an-id", ErrorCode::InvalidArgument),
    ] {
        let error = ws.promote_source(&PromoteRequest::new(id, "owner/local", "t"), &NoDerivedViews).err();
        assert_eq!(error.map(|e| e.code()), Some(code), "{id}");
    }
    // A torn archive is refused too: it must scan completely to be rewritten.
    let mut torn = std::fs::read(dir.path().join(ARCHIVE))?;
    torn.truncate(torn.len() - 2);
    std::fs::write(dir.path().join(ARCHIVE), &torn)?;
    let revision_torn = ws.revision()?;
    assert_ne!(revision_torn, revision);
    let error = ws.promote_source(&PromoteRequest::new("telegram/g1/m1", "owner/local", "t"), &NoDerivedViews).err();
    assert_eq!(error.as_ref().map(|e| e.code()), Some(ErrorCode::InvalidArgument));
    assert_eq!(ws.revision()?, revision_torn);
    assert_eq!(std::fs::read(dir.path().join(ARCHIVE))?, torn);
    assert_eq!(audit(&dir), "");
    Ok(())
}
