//! Codex rollouts: typed prompts only (not the injected context), one reply per
//! assistant message (not its event mirror), a rollback as a branch, across runs too.

use std::io::Write;

use scriptorium_writer_runtime::SessionStore;
use scriptorium_writer_runtime::import::{Format, ProblemCode};

use super::{copy_tree, fixtures, run, snapshot, store, t, turns};
use crate::support::{TempDir, TestResult};

const SID: &str = "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee";

fn session() -> String {
    format!("codex:{SID}")
}

fn id(line: u32) -> String {
    format!("{SID}:{line}")
}

#[test]
fn a_rollout_imports_with_its_rollback_as_a_branch() -> TestResult {
    let dir = TempDir::new("import-codex");
    let root = dir.path().join("sessions");
    copy_tree(&fixtures("codex").join("sessions"), &root);
    let store = store(&dir);
    let report = run(&store, Format::Codex, &[dir.path().to_path_buf()])?;
    assert_eq!((report.files_seen, report.lines_read, report.nodes_added, report.turns_added), (1, 18, 6, 6));
    let problems: Vec<(ProblemCode, Option<u64>)> = report.problems.iter().map(|p| (p.code, p.line)).collect();
    assert_eq!(problems, [(ProblemCode::MalformedLine, Some(16)), (ProblemCode::MalformedLine, Some(17))]);
    let session = session();
    assert_eq!(
        turns(&store, &session, None),
        [
            t(&id(4), "user", "what is 2+2? — ça va"),
            t(&id(9), "assistant", "4"),
            t(&id(14), "user", "instead: 5+5?"),
            t(&id(15), "assistant", "10"),
        ]
    );
    assert_eq!(
        turns(&store, &session, Some(&id(12))),
        [
            t(&id(4), "user", "what is 2+2? — ça va"),
            t(&id(9), "assistant", "4"),
            t(&id(11), "user", "and 3+3?\nthanks"),
            t(&id(12), "assistant", "6")
        ]
    );
    let tips: Vec<String> = store.list_branches(&session)?.into_iter().map(|tip| tip.head_msg_id).collect();
    assert_eq!(tips, [id(12), id(15)]);
    let again = run(&store, Format::Codex, &[dir.path().to_path_buf()])?;
    assert_eq!((again.files_unchanged, again.nodes_added), (1, 0));
    Ok(())
}

#[test]
fn a_rollback_read_in_an_earlier_run_still_shapes_the_branch() -> TestResult {
    let dir = TempDir::new("import-codex-grow");
    let source = fixtures("codex").join("sessions/2026/11/30").join(format!("rollout-2026-11-30T10-00-00-{SID}.jsonl"));
    let whole = std::fs::read(&source)?;
    let file = dir.path().join("rollout-x.jsonl");
    // The first run ends right after the rollback line (13 lines).
    let cut = whole.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(12).map(|(i, _)| i + 1).ok_or("lines")?;
    std::fs::write(&file, whole.get(..cut).ok_or("cut")?)?;
    let grown = store(&dir);
    assert_eq!(run(&grown, Format::Codex, std::slice::from_ref(&file))?.turns_added, 4);
    std::fs::OpenOptions::new().append(true).open(&file)?.write_all(whole.get(cut..).ok_or("rest")?)?;
    let second = run(&grown, Format::Codex, std::slice::from_ref(&file))?;
    assert_eq!((second.lines_read, second.turns_added), (5, 2));

    let other = TempDir::new("import-codex-once");
    let once = store(&other);
    run(&once, Format::Codex, &[source])?;
    assert_eq!(snapshot(&grown, &session()), snapshot(&once, &session()));
    Ok(())
}
