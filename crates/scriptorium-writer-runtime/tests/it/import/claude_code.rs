//! Claude Code: the tree, branches, compaction, sidechains, machinery, split replies,
//! malformed lines, orphans; idempotent and incremental.

use std::io::Write;

use scriptorium_writer_runtime::import::{Format, ProblemCode};
use scriptorium_writer_runtime::{SessionStore, records};

use super::{copy_tree, fixtures, run, snapshot, store, t, turns};
use crate::support::{TempDir, TestResult};

const SESSION: &str = "claude-code:0b0c1d2e-0000-4000-8000-00000000cafe";
const FILE: &str = "0b0c1d2e-0000-4000-8000-00000000cafe.jsonl";

fn projects(dir: &TempDir) -> std::path::PathBuf {
    let to = dir.path().join("projects");
    copy_tree(&fixtures("claude-code").join("projects"), &to);
    to
}

#[test]
fn the_fixture_imports_as_a_tree_of_turns_and_machinery() -> TestResult {
    let dir = TempDir::new("import-cc");
    let root = projects(&dir);
    let store = store(&dir);
    let report = run(&store, Format::ClaudeCode, std::slice::from_ref(&root))?;
    // The subagent transcript under `<session>/subagents/` is not walked.
    assert_eq!(report.files_seen, 1);
    assert_eq!(report.lines_read, 31);
    let problems: Vec<(ProblemCode, Option<u64>)> = report.problems.iter().map(|p| (p.code, p.line)).collect();
    assert_eq!(problems, [(ProblemCode::MalformedLine, Some(18)), (ProblemCode::MalformedLine, Some(23))]);
    assert!(report.problems.iter().all(|p| p.path.ends_with(FILE)));
    assert_eq!(report.sessions.iter().collect::<Vec<_>>(), [SESSION]);
    // 31 lines: 2 malformed, 2 sidechain, 3 without a uuid (summary, snapshot, last-prompt).
    assert_eq!(report.nodes_added, 24);
    assert_eq!(report.turns_added, 11);

    // The active branch after compaction: the edit's second version, linked through the
    // boundary's logicalParentUuid; tool lines, meta, commands and the summary are not turns.
    assert_eq!(
        turns(&store, SESSION, Some("a7")),
        [
            t("u1", "user", "Hello — café ☕, naïve résumé"),
            t("a1", "assistant", "Hi there"),
            t("a4", "assistant", "Done.\nAll good"),
            t("u3", "user", "Edit me: second version"),
            t("a6", "assistant", "Second answer"),
            t("u4", "user", "After compaction: what now?"),
            t("a7", "assistant", "Post-compact answer"),
        ]
    );
    // The edit's first version is its own branch.
    assert_eq!(
        turns(&store, SESSION, Some("a5")),
        [
            t("u1", "user", "Hello — café ☕, naïve résumé"),
            t("a1", "assistant", "Hi there"),
            t("a4", "assistant", "Done.\nAll good"),
            t("u2", "user", "Edit me: first version"),
            t("a5", "assistant", "First answer"),
        ]
    );
    // The orphan starts its own branch; its reply over three lines is one turn, and the
    // interrupt notice, the synthetic reply and the duration line are machinery.
    let head = store.get_session(SESSION)?.and_then(|s| s.head_id);
    assert_eq!(head.as_deref(), Some("d1"));
    assert_eq!(
        turns(&store, SESSION, None),
        [t("o1", "user", "Orphan prompt"), t("a8", "assistant", "Part one\n\nPart two")]
    );
    let mut tips: Vec<String> = store.list_branches(SESSION)?.into_iter().map(|tip| tip.head_msg_id).collect();
    tips.sort();
    assert_eq!(tips, ["a5", "a7", "d1"]);
    // Sidechain lines never reach the store.
    let ids: Vec<String> = store.get_messages(SESSION)?.into_iter().map(|m| m.id).collect();
    assert!(!ids.iter().any(|id| id == "s1" || id == "s2"), "{ids:?}");
    assert_eq!(ids.len(), 24);

    // Authority: the person is the owner, the replies are the runtime's under the owner.
    let branch = store.get_branch(SESSION, Some("a7"))?;
    let records = records(SESSION, &branch, 0)?;
    let speakers: Vec<(&str, &str, Option<&str>)> = records
        .iter()
        .map(|r| (r.source.message_id.as_str(), r.speaker.as_str(), r.source.authority_tier.as_deref()))
        .collect();
    assert_eq!(speakers.len(), 7);
    assert_eq!(speakers.first(), Some(&("u1", "owner (owner/local)", Some("owner"))));
    assert_eq!(speakers.get(1), Some(&("a1", "claude-code (runtime/agent%2Fclaude-code)", Some("owner"))));
    assert_eq!(records.first().and_then(|r| r.source.timestamp.as_deref()), Some("2026-11-30T10:00:00+00:00"));
    Ok(())
}

#[test]
fn a_second_run_changes_nothing_and_reads_nothing() -> TestResult {
    let dir = TempDir::new("import-cc-again");
    let root = projects(&dir);
    let store = store(&dir);
    run(&store, Format::ClaudeCode, std::slice::from_ref(&root))?;
    let before = snapshot(&store, SESSION);
    let again = run(&store, Format::ClaudeCode, &[root])?;
    assert_eq!((again.files_seen, again.files_unchanged, again.lines_read, again.nodes_added), (1, 1, 0, 0));
    assert!(again.problems.is_empty() && again.sessions.is_empty());
    assert_eq!(snapshot(&store, SESSION), before);
    Ok(())
}

#[test]
fn appended_lines_are_the_only_ones_read_and_a_reply_that_grows_is_joined() -> TestResult {
    let dir = TempDir::new("import-cc-append");
    let root = projects(&dir);
    let file = root.join("-home-ana-proj").join(FILE);
    let whole = std::fs::read(&file)?;
    // Cut after line 25 (a8, the first line of a three-line reply) and mid-line 26.
    let cut = whole.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(24).map(|(i, _)| i + 1).ok_or("lines")?;
    std::fs::write(&file, whole.get(..cut + 20).ok_or("cut")?)?;
    let store = store(&dir);
    let first = run(&store, Format::ClaudeCode, std::slice::from_ref(&file))?;
    assert_eq!(first.lines_read, 25);
    assert_eq!(turns(&store, SESSION, None), [t("o1", "user", "Orphan prompt"), t("a8", "assistant", "Part one")]);
    std::fs::OpenOptions::new().append(true).open(&file)?.write_all(whole.get(cut + 20..).ok_or("rest")?)?;
    let second = run(&store, Format::ClaudeCode, std::slice::from_ref(&file))?;
    assert_eq!((second.lines_read, second.files_reread, second.turns_extended), (6, 0, 1));
    assert!(second.problems.is_empty(), "{:?}", second.problems);
    assert_eq!(
        turns(&store, SESSION, None),
        [t("o1", "user", "Orphan prompt"), t("a8", "assistant", "Part one\n\nPart two")]
    );

    // The same as importing the whole file at once.
    let other = TempDir::new("import-cc-whole");
    let whole_file = other.path().join(FILE);
    std::fs::write(&whole_file, &whole)?;
    let once = super::store(&other);
    run(&once, Format::ClaudeCode, &[whole_file])?;
    assert_eq!(snapshot(&store, SESSION), snapshot(&once, SESSION));
    Ok(())
}

#[test]
fn a_rewritten_prefix_is_read_again_without_duplicates_and_deleted_files_stay() -> TestResult {
    let dir = TempDir::new("import-cc-rewrite");
    let root = projects(&dir);
    let file = root.join("-home-ana-proj").join(FILE);
    let store = store(&dir);
    run(&store, Format::ClaudeCode, std::slice::from_ref(&root))?;
    let before = snapshot(&store, SESSION);
    // Same lines, first one changed (a title rewritten): the prefix no longer matches.
    let text = std::fs::read_to_string(&file)?.replacen("Greeting and edits", "Greeting, edits", 1);
    std::fs::write(&file, text)?;
    let again = run(&store, Format::ClaudeCode, std::slice::from_ref(&root))?;
    assert_eq!((again.files_reread, again.lines_read, again.nodes_added, again.turns_extended), (1, 31, 0, 0));
    assert_eq!(snapshot(&store, SESSION), before);
    // Claude Code deletes old transcripts; the store keeps what was imported.
    std::fs::remove_file(&file)?;
    let gone = run(&store, Format::ClaudeCode, &[root])?;
    assert_eq!(gone.files_seen, 0);
    assert_eq!(snapshot(&store, SESSION), before);
    Ok(())
}

const REWIND: &str = "claude-code:5e5e0000-0000-4000-8000-00000000beef";
const REWIND_FILE: &str = "5e5e0000-0000-4000-8000-00000000beef.jsonl";

/// The rewind fixture's bytes and the offset just after line `n`.
fn rewind_cut(n: usize) -> Result<(Vec<u8>, usize), Box<dyn std::error::Error>> {
    let whole = std::fs::read(fixtures("claude-code").join("rewind").join(REWIND_FILE))?;
    let cut = whole.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(n - 1).map(|(i, _)| i + 1).ok_or("lines")?;
    Ok((whole, cut))
}

#[test]
fn a_last_prompt_leaf_after_a_rewind_picks_the_older_branch_as_head() -> TestResult {
    let dir = TempDir::new("import-cc-rewind");
    let file = dir.path().join(REWIND_FILE);
    std::fs::copy(fixtures("claude-code").join("rewind").join(REWIND_FILE), &file)?;
    let store = store(&dir);
    let report = run(&store, Format::ClaudeCode, std::slice::from_ref(&file))?;
    assert_eq!((report.lines_read, report.nodes_added, report.turns_added), (10, 6, 6));
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    // The peas branch was written last, but the person rewound to the beans branch; the
    // later marker naming a leaf the file lacks changes nothing.
    let head = store.get_session(REWIND)?.and_then(|s| s.head_id);
    assert_eq!(head.as_deref(), Some("r4"));
    assert_eq!(
        turns(&store, REWIND, None),
        [
            t("r1", "user", "Plan the garden"),
            t("r2", "assistant", "Beans and peas"),
            t("r3", "user", "Only beans, then?"),
            t("r4", "assistant", "Yes, beans.")
        ]
    );
    // Both branches stay stored.
    let mut tips: Vec<String> = store.list_branches(REWIND)?.into_iter().map(|tip| tip.head_msg_id).collect();
    tips.sort();
    assert_eq!(tips, ["r4", "r6"]);
    Ok(())
}

#[test]
fn a_last_prompt_leaf_holds_across_runs_until_a_node_follows_it() -> TestResult {
    let dir = TempDir::new("import-cc-rewind-grow");
    let file = dir.path().join(REWIND_FILE);
    let (whole, cut) = rewind_cut(7)?;
    std::fs::write(&file, whole.get(..cut).ok_or("cut")?)?;
    let store = store(&dir);
    // Line 5's marker named r4, but r5 and r6 came after it: the last line is the head.
    run(&store, Format::ClaudeCode, std::slice::from_ref(&file))?;
    assert_eq!(store.get_session(REWIND)?.and_then(|s| s.head_id).as_deref(), Some("r6"));
    // The rewind marker arrives in a later run.
    std::fs::OpenOptions::new().append(true).open(&file)?.write_all(whole.get(cut..).ok_or("rest")?)?;
    let second = run(&store, Format::ClaudeCode, std::slice::from_ref(&file))?;
    assert_eq!((second.lines_read, second.nodes_added), (3, 0));
    assert_eq!(store.get_session(REWIND)?.and_then(|s| s.head_id).as_deref(), Some("r4"));
    let once_dir = TempDir::new("import-cc-rewind-once");
    let once_file = once_dir.path().join(REWIND_FILE);
    std::fs::write(&once_file, &whole)?;
    let once = super::store(&once_dir);
    run(&once, Format::ClaudeCode, &[once_file])?;
    assert_eq!(snapshot(&store, REWIND), snapshot(&once, REWIND));
    // A prompt typed after the rewind is newer than the marker: it is the head.
    let next = r#"{"parentUuid": "r4", "isSidechain": false, "type": "user", "uuid": "r7", "timestamp": "2026-11-30T11:03:00.000Z", "message": {"role": "user", "content": "When do I sow?"}}"#;
    writeln!(std::fs::OpenOptions::new().append(true).open(&file)?, "{next}")?;
    let third = run(&store, Format::ClaudeCode, std::slice::from_ref(&file))?;
    assert_eq!((third.lines_read, third.nodes_added), (1, 1));
    assert_eq!(store.get_session(REWIND)?.and_then(|s| s.head_id).as_deref(), Some("r7"));
    assert_eq!(turns(&store, REWIND, None).len(), 5);
    Ok(())
}
