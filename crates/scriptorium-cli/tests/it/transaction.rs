//! `update`, `history`, `restore` and `check --repair` on a real copy of the vectors'
//! `tx-base` workspace: exit statuses, the contract code of a rejection, that a
//! rejection changes nothing, and that history and restore round-trip.

use crate::{TempDir, TestResult, copy_tree, run, scriptorium, vectors};

const PREFS: &str = "topics/prefs.md";

fn tx_base() -> Result<TempDir, Box<dyn std::error::Error>> {
    let dir = TempDir::new()?;
    copy_tree(&vectors().join("_resources/tx-base"), dir.path())?;
    Ok(dir)
}

/// The `error[CODE]: …` line of a rejected transaction (contract codes, not `CLI_*`).
fn contract_code(stderr: &str) -> Option<&str> {
    stderr.trim_end().strip_prefix("error[")?.split_once("]: ").map(|(code, _)| code)
}

#[test]
fn update_installs_changes_and_history_lists_the_commit() -> TestResult {
    let ws = tx_base()?;
    let old = std::fs::read_to_string(ws.path().join(PREFS))?;
    let new = old.replace("green tea over coffee", "green tea over coffee, hot");
    let changes = serde_json::json!([{"path": PREFS, "action": "write", "content": new}]);
    let file = ws.write("edit.json", changes.to_string().as_bytes())?;
    let out = run(scriptorium(ws.path())
        .args(["update", "--json", "--message", "warm tea", "--workspace"])
        .arg(ws.path())
        .arg("--changes")
        .arg(&file))?;
    assert_eq!(out.code, Some(0), "stdout {}\nstderr {}", out.stdout, out.stderr);
    let result = out.json()?;
    // The derived views are rebuilt in the same install as the edit.
    let changed = serde_json::json!(["recent_events.jsonl", "timeline/2024/03/16.md", PREFS]);
    assert_eq!(result["changed_files"], changed);
    assert_eq!(result["git_committed"], true);
    assert_eq!(std::fs::read_to_string(ws.path().join(PREFS))?, new);

    let listed = run(scriptorium(ws.path()).args(["history", "--json", "--limit", "1", "--workspace"]).arg(ws.path()))?;
    assert_eq!(listed.code, Some(0), "{}", listed.stderr);
    let entries = listed.json()?;
    assert_eq!(entries[0]["id"], result["git_commit"]);
    assert_eq!(entries[0]["message"], "warm tea");
    Ok(())
}

#[test]
fn a_rejected_patch_prints_its_contract_code_exits_1_and_changes_nothing() -> TestResult {
    let ws = tx_base()?;
    let before = std::fs::read(ws.path().join(PREFS))?;
    let patch = "--- a/topics/prefs.md\n+++ b/topics/prefs.md\n@@ -1,1 +1,1 @@\n-# Not the heading\n+# Drinks\n";
    let file = ws.write("edit.diff", patch.as_bytes())?;
    let out = run(scriptorium(ws.path()).args(["update", "--workspace"]).arg(ws.path()).arg("--patch").arg(&file))?;
    assert_eq!(out.code, Some(1), "stdout {}\nstderr {}", out.stdout, out.stderr);
    assert_eq!(contract_code(&out.stderr), Some("PATCH_CONFLICT"), "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert_eq!(std::fs::read(ws.path().join(PREFS))?, before);
    Ok(())
}

#[test]
fn a_stale_base_revision_is_a_concurrent_update() -> TestResult {
    let ws = tx_base()?;
    let file = ws.write("edit.json", br#"[{"path": "topics/prefs.md", "action": "delete"}]"#)?;
    let out = run(scriptorium(ws.path())
        .args(["update", "--base-revision", "00000000000000000000000000000000", "--workspace"])
        .arg(ws.path())
        .arg("--changes")
        .arg(&file))?;
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert_eq!(contract_code(&out.stderr), Some("CONCURRENT_UPDATE"), "{}", out.stderr);
    assert!(ws.path().join(PREFS).exists());
    Ok(())
}

#[test]
fn update_without_an_edit_is_a_usage_error() -> TestResult {
    let ws = tx_base()?;
    let out = run(scriptorium(ws.path()).args(["update", "--workspace"]).arg(ws.path()))?;
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert_eq!(out.error_code()?, "CLI_USAGE");
    Ok(())
}

#[test]
fn restore_brings_a_deleted_topic_back_from_history() -> TestResult {
    let ws = tx_base()?;
    let original = std::fs::read_to_string(ws.path().join(PREFS))?;
    let file = ws.write("edit.json", br#"[{"path": "topics/prefs.md", "action": "delete"}]"#)?;
    let deleted = run(scriptorium(ws.path())
        .args(["update", "--json", "--workspace"])
        .arg(ws.path())
        .arg("--changes")
        .arg(&file))?;
    assert_eq!(deleted.code, Some(0), "{}", deleted.stderr);
    assert!(!ws.path().join(PREFS).exists());

    let listed = run(scriptorium(ws.path()).args(["history", "--json", "--workspace"]).arg(ws.path()))?.json()?;
    let first = listed.as_array().and_then(|e| e.last()).and_then(|e| e["id"].as_str()).ok_or("no history")?;
    let out = run(scriptorium(ws.path()).args(["restore", "--workspace"]).arg(ws.path()).args([first, PREFS]))?;
    assert_eq!(out.code, Some(0), "stdout {}\nstderr {}", out.stdout, out.stderr);
    // The restored bytes went through normalization, which ends the file with one LF.
    assert_eq!(std::fs::read_to_string(ws.path().join(PREFS))?.trim_end(), original.trim_end());
    Ok(())
}

#[test]
fn check_repair_quarantines_an_unreadable_tail_and_then_passes_the_archive() -> TestResult {
    let ws = tx_base()?;
    let archive = "sources/telegram/_v2/group-100.md";
    let mut bytes = std::fs::read(ws.path().join(archive))?;
    bytes.extend_from_slice(b"not a frame\n");
    std::fs::write(ws.path().join(archive), &bytes)?;
    let broken = run(scriptorium(ws.path()).args(["check", "--json", "--workspace"]).arg(ws.path()))?;
    assert_eq!(broken.json()?["archives"]["incomplete"], 1, "{}", broken.stdout);

    let out = run(scriptorium(ws.path()).args(["check", "--repair", "--json", "--workspace"]).arg(ws.path()))?;
    assert!(out.stderr.contains("tail moved to"), "{}", out.stderr);
    assert_eq!(out.json()?["archives"]["incomplete"], 0, "{}", out.stdout);
    let quarantine = ws.path().join(".scriptorium/quarantine");
    let mut found = false;
    for entry in std::fs::read_dir(&quarantine)? {
        let tail = entry?.path().join(archive);
        found |= std::fs::read(&tail).is_ok_and(|t| t.ends_with(b"not a frame\n"));
    }
    assert!(found, "the tail is not in the quarantine");
    Ok(())
}

#[test]
fn deleting_the_core_master_of_a_reference_workspace_removes_its_render_for_good() -> TestResult {
    // The reference wrote this workspace: a rendered core.md and no render report.
    let ws = TempDir::new()?;
    copy_tree(&vectors().join("transaction/core-render/after"), ws.path())?;
    assert!(ws.path().join("core.md").exists());
    let file = ws.write("edit.json", br#"[{"path": "topics/core.md", "action": "delete"}]"#)?;
    let out = run(scriptorium(ws.path())
        .args(["update", "--json", "--workspace"])
        .arg(ws.path())
        .arg("--changes")
        .arg(&file))?;
    assert_eq!(out.code, Some(0), "stdout {}\nstderr {}", out.stdout, out.stderr);
    // Spec 01 §7.1: the render goes with its master and is not promoted back (§7.3).
    assert!(!ws.path().join("core.md").exists(), "the stale render survived");
    assert!(!ws.path().join("topics/core.md").exists(), "the render was promoted back");
    let changed = out.json()?["changed_files"].clone();
    assert!(changed.as_array().is_some_and(|c| c.contains(&serde_json::json!("core.md"))), "{changed}");
    Ok(())
}
