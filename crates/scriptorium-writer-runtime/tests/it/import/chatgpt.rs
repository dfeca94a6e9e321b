//! ChatGPT export: the mapping tree with `current_node` as head; hidden, system,
//! reasoning and tool messages are machinery.

use scriptorium_writer_runtime::import::{Format, ProblemCode};
use scriptorium_writer_runtime::{SessionStore, Timestamp, records};

use super::{fixtures, run, snapshot, store, t, turns};
use crate::support::{TempDir, TestResult};

const SESSION: &str = "chatgpt:c0ffee00-0000-4000-8000-000000000001";

#[test]
fn an_export_imports_its_tree_with_current_node_as_head() -> TestResult {
    let dir = TempDir::new("import-chatgpt");
    let file = dir.path().join("conversations.json");
    std::fs::copy(fixtures("chatgpt").join("conversations.json"), &file)?;
    let store = store(&dir);
    // The directory is walked for `conversations.json`.
    let report = run(&store, Format::ChatGpt, &[dir.path().to_path_buf()])?;
    assert_eq!((report.files_seen, report.nodes_added, report.turns_added), (1, 9, 3));
    let problems: Vec<ProblemCode> = report.problems.iter().map(|p| p.code).collect();
    assert_eq!(problems, [ProblemCode::MalformedFile]);
    assert_eq!(store.get_session(SESSION)?.and_then(|s| s.head_id).as_deref(), Some("n6"));
    assert_eq!(
        turns(&store, SESSION, None),
        [
            t("n1", "user", "Which tea is best? 🍵"),
            t("n5", "assistant", "Sencha,\nif you like it grassy."),
            t("n6", "user", "And this one?"),
        ]
    );
    // The browsing detour is a branch of machinery only.
    assert_eq!(turns(&store, SESSION, Some("n3")), [t("n1", "user", "Which tea is best? 🍵")]);
    let mut tips: Vec<String> = store.list_branches(SESSION)?.into_iter().map(|tip| tip.head_msg_id).collect();
    tips.sort();
    assert_eq!(tips, ["n3", "n6", "n7"]);
    let branch = store.get_branch(SESSION, None)?;
    let n1 = branch.iter().find(|m| m.id == "n1").map(|m| m.timestamp.clone());
    assert_eq!(n1, Some(Timestamp::Unix(1_764_496_801.5)));
    let speakers: Vec<String> = records(SESSION, &branch, 0)?.into_iter().map(|r| r.speaker).collect();
    assert_eq!(speakers, ["owner (owner/local)", "chatgpt (runtime/agent%2Fchatgpt)", "owner (owner/local)"]);

    let before = snapshot(&store, SESSION);
    let again = run(&store, Format::ChatGpt, std::slice::from_ref(&file))?;
    assert_eq!((again.files_unchanged, again.nodes_added), (1, 0));
    // A new export of the same history (touched, same bytes plus nothing) adds nothing.
    let bytes = std::fs::read(&file)?;
    std::fs::write(&file, [bytes.as_slice(), b"\n"].concat())?;
    let reread = run(&store, Format::ChatGpt, &[file])?;
    assert_eq!((reread.files_reread, reread.nodes_added), (1, 0));
    assert_eq!(snapshot(&store, SESSION), before);
    Ok(())
}

#[test]
fn a_file_that_is_not_an_export_is_reported_whole() -> TestResult {
    let dir = TempDir::new("import-chatgpt-bad");
    let file = dir.path().join("conversations.json");
    std::fs::write(&file, "{\"not\": \"an array\"}")?;
    let store = store(&dir);
    let report = run(&store, Format::ChatGpt, &[file])?;
    assert_eq!(
        report.problems.iter().map(|p| (p.code, p.line)).collect::<Vec<_>>(),
        [(ProblemCode::MalformedFile, None)]
    );
    assert_eq!(report.nodes_added, 0);
    Ok(())
}
