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

const FORK: &str = "0199cccc-0000-7000-8000-00000000f0a1";
const LATE_FORK: &str = "0199cccc-0000-7000-8000-00000000f0a2";

/// A sessions tree holding the parent rollout and both forks, in one day directory.
fn with_forks(dir: &TempDir) -> std::path::PathBuf {
    let root = dir.path().join("sessions");
    copy_tree(&fixtures("codex").join("sessions"), &root);
    copy_tree(&fixtures("codex").join("forks"), &root.join("2026/11/30"));
    root
}

/// `(id, predecessor, forked_from_session, forked_from_node)` of every node of `session`.
fn links(store: &scriptorium_writer_runtime::SqliteStore, session: &str) -> Vec<[Option<String>; 4]> {
    store
        .get_messages(session)
        .expect("messages")
        .into_iter()
        .map(|m| {
            let field = |key: &str| m.field(key).map(str::to_owned);
            [Some(m.id.clone()), m.predecessor.clone(), field("forked_from_session"), field("forked_from_node")]
        })
        .collect()
}

fn s(text: &str) -> Option<String> {
    Some(text.to_owned())
}

#[test]
fn a_fork_stores_only_its_own_turns_and_links_its_first_to_the_parent() -> TestResult {
    let dir = TempDir::new("import-codex-fork");
    let root = with_forks(&dir);
    let store = store(&dir);
    let report = run(&store, Format::Codex, &[root])?;
    assert_eq!(report.files_seen, 3);
    // The parent's six turns, then two of each fork: the copied two are not stored again.
    assert_eq!(report.turns_added, 10);
    let fork = format!("codex:{FORK}");
    // The copy ended after the parent's reply on line 9; the fork's prompt is a root
    // linked to it.
    assert_eq!(
        links(&store, &fork),
        [
            [s(&format!("{FORK}:9")), None, s(&session()), s(&id(9))],
            [s(&format!("{FORK}:10")), s(&format!("{FORK}:9")), None, None],
        ]
    );
    assert_eq!(
        turns(&store, &fork, None),
        [t(&format!("{FORK}:9"), "user", "and 4+4?"), t(&format!("{FORK}:10"), "assistant", "8")]
    );
    // Nothing was copied into the later fork: it hangs from the parent's last node at its
    // session_meta time (10:00:07.5: the reply on line 12, rolled back only afterwards).
    let late = format!("codex:{LATE_FORK}");
    assert_eq!(
        links(&store, &late),
        [
            [s(&format!("{LATE_FORK}:2")), None, s(&session()), s(&id(12))],
            [s(&format!("{LATE_FORK}:3")), s(&format!("{LATE_FORK}:2")), None, None],
        ]
    );
    // The parent is unchanged by its forks.
    assert_eq!(store.get_messages(&session())?.len(), 6);
    Ok(())
}

#[test]
fn a_fork_read_in_pieces_equals_one_read_whole() -> TestResult {
    let dir = TempDir::new("import-codex-fork-grow");
    let root = with_forks(&dir);
    let parent = root.join("2026/11/30").join(format!("rollout-2026-11-30T10-00-00-{SID}.jsonl"));
    let name = format!("rollout-2026-11-30T10-00-20-{FORK}.jsonl");
    let whole = std::fs::read(root.join("2026/11/30").join(&name))?;
    let grown = store(&dir);
    run(&grown, Format::Codex, std::slice::from_ref(&parent))?;
    // Cut inside the copied history (after line 5, the copied prompt) and again after the
    // fork's own prompt.
    let file = dir.path().join(&name);
    let ends: Vec<usize> = whole.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i + 1).collect();
    let mut written = 0;
    for cut in [ends[4], ends[8], whole.len()] {
        std::fs::OpenOptions::new().create(true).append(true).open(&file)?.write_all(&whole[written..cut])?;
        written = cut;
        run(&grown, Format::Codex, std::slice::from_ref(&file))?;
    }
    let other = TempDir::new("import-codex-fork-once");
    let once = store(&other);
    run(&once, Format::Codex, &[parent])?;
    let once_file = other.path().join(&name);
    std::fs::write(&once_file, &whole)?;
    run(&once, Format::Codex, &[once_file])?;
    let fork = format!("codex:{FORK}");
    assert_eq!(snapshot(&grown, &fork), snapshot(&once, &fork));
    assert_eq!(store_len(&grown, &fork), 2);
    Ok(())
}

#[test]
fn a_fork_whose_parent_was_never_imported_keeps_its_copies_and_names_the_parent() -> TestResult {
    let dir = TempDir::new("import-codex-orphan-fork");
    let file = dir.path().join("fork.jsonl");
    std::fs::copy(fixtures("codex").join("forks").join(format!("rollout-2026-11-30T10-00-20-{FORK}.jsonl")), &file)?;
    let store = store(&dir);
    run(&store, Format::Codex, &[file])?;
    let fork = format!("codex:{FORK}");
    // Nothing to match the copies against: they are the fork's own turns, and its root
    // names the parent session without a node.
    assert_eq!(links(&store, &fork).first(), Some(&[s(&format!("{FORK}:5")), None, s(&session()), None]));
    assert_eq!(store_len(&store, &fork), 4);
    Ok(())
}

fn store_len(store: &scriptorium_writer_runtime::SqliteStore, session: &str) -> usize {
    store.get_messages(session).expect("messages").len()
}
