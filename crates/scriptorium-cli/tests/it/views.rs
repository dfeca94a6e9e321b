//! `status`, `core`, and the derived views in `check` (`VIEWS_DRIFT`, `--repair`), on
//! real copies of the vectors' workspaces.

use serde_json::Value;

use crate::{Run, TempDir, TestResult, copy_tree, run, scriptorium, vectors};

const REPORT: &str = ".scriptorium/core-report.json";

/// A `topics/core.md` for tx-base: one block citing a pending frame (g1), one citing a
/// trusted one (g2).
const CORE_WITH_PENDING: &str = "# Core\n\nCraig quits.[^e-1] ^aaaa1111\n\n\
    [^e-1]: Time: `2024-03-19`; Sources: [telegram/group-100/g1](../sources/telegram/_v2/group-100.md#source-c5abce8940d6277f)\n\n\
    The sensor uses an ESP32.[^e-2] ^bbbb2222\n\n\
    [^e-2]: Time: `2024-03-20`; Sources: [telegram/group-100/g2](../sources/telegram/_v2/group-100.md#source-11a05d4db2cef8b8)\n";

fn copy_of(tree: &str) -> Result<TempDir, Box<dyn std::error::Error>> {
    let dir = TempDir::new()?;
    copy_tree(&vectors().join(tree), dir.path())?;
    Ok(dir)
}

fn verb(ws: &TempDir, args: &[&str]) -> Result<Run, std::io::Error> {
    run(scriptorium(ws.path()).args(args).arg("--workspace").arg(ws.path()))
}

fn read(ws: &TempDir, path: &str) -> std::io::Result<Vec<u8>> {
    std::fs::read(ws.path().join(path))
}

#[test]
fn check_reports_drifted_views_and_repair_rebuilds_them_as_they_were() -> TestResult {
    let ws = copy_of("_resources/tx-base")?;
    let relations = read(&ws, "relations.json")?;
    let day = read(&ws, "timeline/2024/03/15.md")?;
    ws.write("relations.json", b"{}\n")?;
    std::fs::remove_file(ws.path().join("timeline/2024/03/15.md"))?;
    ws.write("timeline/1999.md", b"# 1999\n")?;

    let out = verb(&ws, &["check", "--json"])?;
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    let report = out.json()?;
    assert_eq!(report["views"]["code"], "VIEWS_DRIFT");
    let drift = serde_json::json!(["relations.json", "timeline/1999.md", "timeline/2024/03/15.md"]);
    assert_eq!(report["views"]["drift"], drift);
    // The other sections are unaffected: only the views fail.
    assert_eq!(report["topics"]["ok"], true);

    let repaired = verb(&ws, &["check", "--repair"])?;
    assert_eq!(repaired.code, Some(0), "{}\n{}", repaired.stdout, repaired.stderr);
    assert!(repaired.stderr.contains("repair: rebuilt derived views: relations.json"), "{}", repaired.stderr);
    assert!(repaired.stdout.contains("views: ok"), "{}", repaired.stdout);
    assert_eq!(read(&ws, "relations.json")?, relations);
    assert_eq!(read(&ws, "timeline/2024/03/15.md")?, day);
    assert!(!ws.path().join("timeline/1999.md").exists());
    let history = verb(&ws, &["history", "--json", "--limit", "1"])?.json()?;
    assert_eq!(history[0]["message"], "memory: rebuild derived views");
    Ok(())
}

#[test]
fn status_shows_counts_history_and_the_stored_core_report() -> TestResult {
    let ws = copy_of("transaction/core-render/after")?;
    let before = verb(&ws, &["status", "--json"])?;
    assert_eq!(before.code, Some(0), "{}", before.stderr);
    let before = before.json()?;
    assert_eq!((before["topic_files"].as_u64(), before["source_files"].as_u64()), (Some(4), Some(4)));
    assert_eq!(before["core"]["master"], true);
    assert_eq!(before["core"]["report"], Value::Null, "no install has written a report yet");
    assert_eq!(before["history_head"], Value::Null);
    // The vector rendered core.md under a smaller budget than the built-in 2000.
    assert_eq!(before["views"]["drift"], serde_json::json!(["core.md"]));

    assert_eq!(verb(&ws, &["check", "--repair"])?.code, Some(0));
    let after = verb(&ws, &["status", "--json"])?.json()?;
    assert_eq!(after["views"]["in_step"], true);
    let stored: Value = serde_json::from_slice(&read(&ws, REPORT)?)?;
    assert_eq!(after["core"]["report"], stored);
    assert_eq!(stored["format"], 1);
    assert_eq!(stored["budget"], 2000);
    assert_eq!(stored["rendered"].as_array().map(Vec::len), Some(4));
    assert!(stored["tokens_used"].as_u64().is_some_and(|used| used > 0 && used <= 2000), "{stored}");
    let head = verb(&ws, &["history", "--json", "--limit", "1"])?.json()?;
    assert_eq!(after["history_head"], head[0]["id"]);
    assert_ne!(after["revision"], before["revision"]);

    let human = verb(&ws, &["status"])?;
    let tokens = stored["tokens_used"].as_u64().unwrap_or_default();
    assert!(human.stdout.contains(&format!("core.md: {tokens} of 2000 tokens, 4 blocks rendered, 0 left out\n")));
    assert!(human.stdout.contains("derived views: in step\n"), "{}", human.stdout);
    Ok(())
}

#[test]
fn core_renders_now_and_reports_pending_blocks_as_left_out() -> TestResult {
    let ws = copy_of("_resources/tx-base")?;
    ws.write("topics/core.md", CORE_WITH_PENDING.as_bytes())?;
    let out = verb(&ws, &["core", "--json"])?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let value = out.json()?;
    let text = value["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("# Core\n\nThe sensor uses an ESP32.[^e-2] ^bbbb2222\n\n[^e-2]:"), "{text}");
    assert!(text.contains("](sources/telegram/_v2/group-100.md#"), "links move to the root: {text}");
    assert!(!text.contains("Craig quits"), "{text}");
    assert_eq!(value["report"]["rendered"], serde_json::json!(["bbbb2222"]));
    assert_eq!(value["report"]["left_out"], serde_json::json!([{"block_id": "aaaa1111", "reason": "pending"}]));
    // Nothing was written: `core` only reads.
    assert!(!ws.path().join("core.md").exists());
    assert!(!ws.path().join(REPORT).exists());

    let human = verb(&ws, &["core"])?;
    assert!(human.stdout.starts_with(text), "{}", human.stdout);
    assert!(human.stdout.contains("  left out: aaaa1111 (pending)\n"), "{}", human.stdout);
    let status = verb(&ws, &["status"])?;
    assert!(status.stdout.contains("core.md: no render report yet"), "{}", status.stdout);
    Ok(())
}

#[test]
fn core_without_a_master_says_so() -> TestResult {
    let ws = copy_of("_resources/tx-base")?;
    let out = verb(&ws, &["core", "--json"])?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.json()?, serde_json::json!({"master": false, "text": null, "report": null}));
    assert_eq!(verb(&ws, &["core"])?.stdout, "no topics/core.md: nothing to render\n");
    Ok(())
}

#[test]
fn deleting_topics_core_removes_the_rendered_core_and_its_report_for_good() -> TestResult {
    let ws = copy_of("transaction/core-render/after")?;
    assert_eq!(verb(&ws, &["check", "--repair"])?.code, Some(0));
    assert!(ws.path().join(REPORT).is_file());
    let edit = ws.write("delete.json", br#"[{"path": "topics/core.md", "action": "delete"}]"#)?;
    let out = run(scriptorium(ws.path()).arg("update").arg("--changes").arg(&edit).arg("--workspace").arg(ws.path()))?;
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("changed core.md\n"), "{}", out.stdout);
    // The rendered root file is not hand-written, so it is not promoted back (spec 01 §7.1).
    assert!(!ws.path().join("topics/core.md").exists());
    assert!(!ws.path().join("core.md").exists());
    assert!(!ws.path().join(REPORT).exists());
    let status = verb(&ws, &["status", "--json"])?.json()?;
    assert_eq!(status["core"]["master"], false);
    assert_eq!(status["views"]["in_step"], true);
    Ok(())
}

#[test]
fn a_hand_written_root_core_without_a_master_survives_installs() -> TestResult {
    let ws = copy_of("_resources/tx-base")?;
    // Prose without block ids does not parse as a topic, so it is not promoted either.
    ws.write("core.md", b"Remember: Craig likes tea.\n")?;
    let old = std::fs::read_to_string(ws.path().join("topics/prefs.md"))?;
    let changes = serde_json::json!([{"path": "topics/prefs.md", "action": "write", "content": old.replace("coffee", "coffee, hot")}]);
    let edit = ws.write("edit.json", changes.to_string().as_bytes())?;
    let out = run(scriptorium(ws.path()).arg("update").arg("--changes").arg(&edit).arg("--workspace").arg(ws.path()))?;
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert_eq!(read(&ws, "core.md")?, b"Remember: Craig likes tea.\n");
    assert!(!ws.path().join(REPORT).exists());
    let check = verb(&ws, &["check", "--json"])?;
    assert_eq!(check.json()?["views"]["ok"], true, "{}", check.stdout);
    Ok(())
}

#[test]
fn a_workspace_never_installed_has_no_views_yet_and_no_drift() -> TestResult {
    let ws = TempDir::new()?;
    ws.write(crate::THREAD_1, &crate::complete_archive()?)?;
    let status = verb(&ws, &["status", "--json"])?;
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    let status = status.json()?;
    assert_eq!(status["views"], serde_json::json!({"built": false, "in_step": true, "drift": []}));
    assert_eq!((status["topic_files"].as_u64(), status["source_files"].as_u64()), (Some(0), Some(1)));
    let check = verb(&ws, &["check", "--json"])?;
    assert_eq!(check.code, Some(0), "{}", check.stdout);
    assert_eq!(check.json()?.get("views"), None, "the section is left out");
    Ok(())
}
