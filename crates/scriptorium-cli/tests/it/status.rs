//! `scriptorium status --json` carries the full status object of spec 02 §7 (what
//! `memory_status` answers), plus `workspace_path` and the CLI's own sections; the human
//! status opens with `memory root: <path>` (spec 02 §8.3).

use crate::{TempDir, TestResult, copy_tree, run, scriptorium, vectors};

#[test]
fn status_carries_every_field_of_the_status_object() -> TestResult {
    let dir = TempDir::new()?;
    let root = dir.path().join("memory");
    copy_tree(&vectors().join("_resources/tx-base"), &root)?;
    let out = run(scriptorium(dir.path()).args(["status", "--json", "--workspace"]).arg(&root))?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let status = out.json()?;
    for key in [
        "workspace",
        "revision",
        "topic_files",
        "blocks",
        "source_files",
        "timeline_files",
        "recent_events",
        "relations",
        "core_exists",
        "embedding_available",
        "writer",
        "workspace_path",
    ] {
        assert!(status.get(key).is_some(), "{key} missing: {status}");
    }
    assert_eq!(status["workspace"], "workspace", "no workspace id yet");
    assert_eq!(status["workspace_path"], root.display().to_string());
    assert_eq!((status["topic_files"].as_u64(), status["source_files"].as_u64()), (Some(3), Some(4)));
    assert_eq!(status["blocks"], 4);
    assert_eq!(status["timeline_files"], 2);
    let recent = std::fs::read_to_string(root.join("recent_events.jsonl"))?;
    assert_eq!(status["recent_events"].as_u64(), Some(recent.lines().filter(|l| !l.trim().is_empty()).count() as u64));
    assert_eq!(status["core_exists"], false);
    assert_eq!(status["embedding_available"], false);
    assert_eq!(status["writer"]["pending_turns"], 0);

    // An install gives the workspace its id, and core.md once topics/core.md exists.
    let other = TempDir::new()?;
    copy_tree(&vectors().join("transaction/core-render/after"), other.path())?;
    std::fs::remove_file(other.path().join("core.md"))?;
    let repair = run(scriptorium(dir.path()).args(["check", "--repair", "--workspace"]).arg(other.path()))?;
    assert_eq!(repair.code, Some(0), "{}", repair.stderr);
    let root = other.path();
    let status = run(scriptorium(dir.path()).args(["status", "--json", "--workspace"]).arg(root))?.json()?;
    assert_eq!(status["core_exists"], true, "{status}");
    let id = std::fs::read_to_string(root.join(".scriptorium/workspace-id"))?;
    assert_eq!(status["workspace"], id.trim());

    let human = run(scriptorium(dir.path()).args(["status", "--workspace"]).arg(root))?;
    assert_eq!(human.code, Some(0), "{}", human.stderr);
    // Spec 02 §8.3: the human status opens with the memory root.
    let first = human.stdout.lines().next().unwrap_or_default();
    assert_eq!(first, format!("memory root: {}", root.display()), "{}", human.stdout);
    let blocks = status["blocks"].as_u64().unwrap_or_default();
    assert!(human.stdout.contains(&format!("memory: {blocks} blocks, ")), "{}", human.stdout);
    assert!(human.stdout.contains("; core.md exists\n"), "{}", human.stdout);
    Ok(())
}
