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

/// Write two frames of session `sess-7f2a` into `<state>/memory` with the real archive writer.
fn openprogram_state(state: &Path) -> TestResult {
    use scriptorium_archive_format::{MemoryTree, SourceRecord, plan_append};
    let mut said = SourceRecord::new("openprogram", "sess-7f2a", "msg_1", 1, "user", "Ich heiße Zoë.");
    said.speaker_id = Some("owner/local".to_owned());
    said.speaker_display = Some("owner".to_owned());
    said.speaker_kind = "owner".to_owned();
    said.principal_id = "owner".to_owned();
    said.authority_tier = Some("owner".to_owned());
    let mut reply = SourceRecord::new("openprogram", "sess-7f2a", "msg_2", 2, "assistant", "Notiert.");
    reply.speaker_kind = "runtime".to_owned();
    reply.principal_id = "owner".to_owned();
    reply.authority_tier = Some("owner".to_owned());
    let plan = plan_append(&[said, reply], &MemoryTree::new())?;
    for file in &plan.files {
        let path = state.join("memory").join(&file.path);
        std::fs::create_dir_all(path.parent().ok_or("no parent")?)?;
        std::fs::write(path, &file.bytes)?;
    }
    Ok(())
}

#[test]
fn import_openprogram_from_the_profile_state_dir_read_only() -> TestResult {
    let dir = TempDir::new()?;
    // OPENPROGRAM_PROFILE=work names `~/.openprogram-work/` (spec 01 §1.1).
    let state = dir.path().join(".openprogram-work");
    openprogram_state(&state)?;
    let archive = state.join("memory/sources/openprogram/_v2/sess-7f2a.md");
    let before = std::fs::read(&archive)?;
    std::fs::create_dir_all(dir.path().join("memory/topics"))?;
    let sessions = dir.path().join("sessions.sqlite3");
    let import = || {
        run(scriptorium(dir.path())
            .env("OPENPROGRAM_PROFILE", "work")
            .args(["import", "openprogram", "--json", "--sessions"])
            .arg(&sessions))
    };
    let first = import()?;
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    let report = first.json()?;
    assert_eq!((report["files_seen"].as_u64(), report["turns_added"].as_u64()), (Some(1), Some(2)));
    assert_eq!(report["sessions"], serde_json::json!(["sess-7f2a"]));
    assert!(first.stderr.is_empty(), "{}", first.stderr);
    let again = import()?;
    assert_eq!((again.json()?["files_unchanged"].as_u64(), again.json()?["nodes_added"].as_u64()), (Some(1), Some(0)));
    assert_eq!(std::fs::read(&archive)?, before);
    let listed = run(scriptorium(dir.path())
        .args(["sessions", "--json", "--workspace"])
        .arg(dir.path().join("memory"))
        .arg("--sessions")
        .arg(&sessions))?;
    assert_eq!(listed.json()?["sessions"][0]["id"], "sess-7f2a");
    Ok(())
}
