//! `import`: the real binary reads Claude Code's default directory under `HOME`, reports
//! skipped lines as warnings with file and line, and a second run changes nothing;
//! `sessions` then lists the imported session with its pending turns.

use std::path::Path;

use crate::{TempDir, TestResult, copy_tree, run, scriptorium};

const FIXTURE: &str = "../scriptorium-writer-runtime/tests/fixtures/import/claude-code/projects";

#[test]
fn import_claude_code_from_the_default_directory_then_list_it() -> TestResult {
    let dir = TempDir::new()?;
    copy_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE), &dir.path().join(".claude/projects"))?;
    std::fs::create_dir_all(dir.path().join("memory/topics"))?;
    let sessions = dir.path().join("sessions.sqlite3");
    let import = |json: bool| {
        let mut cmd = scriptorium(dir.path());
        cmd.env_remove("CLAUDE_CONFIG_DIR").args(["import", "claude-code", "--sessions"]).arg(&sessions);
        if json {
            cmd.arg("--json");
        }
        run(&mut cmd)
    };
    let first = import(true)?;
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    let report = first.json()?;
    assert_eq!(report["files_seen"], 1);
    assert_eq!(report["turns_added"], 11);
    assert_eq!(report["nodes_added"], 24);
    assert_eq!(report["sessions"], serde_json::json!(["claude-code:0b0c1d2e-0000-4000-8000-00000000cafe"]));
    let lines: Vec<u64> =
        report["problems"].as_array().ok_or("problems")?.iter().filter_map(|p| p["line"].as_u64()).collect();
    assert_eq!(lines, [18, 23]);
    let warnings: Vec<&str> = first.stderr.lines().collect();
    assert_eq!(warnings.len(), 2, "{}", first.stderr);
    assert!(warnings.iter().all(|w| w.starts_with("warning[WRITER_IMPORT_MALFORMED_LINE]: ")), "{warnings:?}");
    assert!(warnings.first().is_some_and(|w| w.contains("cafe.jsonl:18: ")), "{warnings:?}");

    let again = import(false)?;
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert!(
        again.stdout.contains("1 files (1 unchanged, 0 read again), 0 lines read; 0 turns new"),
        "{}",
        again.stdout
    );
    assert!(again.stderr.is_empty(), "{}", again.stderr);

    let listed = run(scriptorium(dir.path())
        .args(["sessions", "--json", "--workspace"])
        .arg(dir.path().join("memory"))
        .arg("--sessions")
        .arg(&sessions))?;
    assert_eq!(listed.code, Some(0), "{}", listed.stderr);
    let listed = listed.json()?;
    assert_eq!(listed["sessions"][0]["id"], "claude-code:0b0c1d2e-0000-4000-8000-00000000cafe");
    // Nothing is written yet: every turn of every branch is pending.
    assert_eq!(listed["sessions"][0]["pending_turns"], 11);
    Ok(())
}

#[test]
fn import_refuses_an_unknown_format_and_a_pathless_jsonl() -> TestResult {
    let dir = TempDir::new()?;
    let unknown = run(scriptorium(dir.path()).args(["import", "gemini"]))?;
    assert_eq!(unknown.code, Some(2));
    assert!(unknown.stderr.starts_with("error[CLI_USAGE]: "), "{}", unknown.stderr);
    let pathless = run(scriptorium(dir.path()).args(["import", "jsonl", "--sessions"]).arg(dir.path().join("s.db")))?;
    assert_eq!(pathless.code, Some(2));
    assert!(pathless.stderr.contains("needs a PATH"), "{}", pathless.stderr);
    assert!(!dir.path().join("s.db").exists());
    Ok(())
}
