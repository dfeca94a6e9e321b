//! `scriptorium recall`: the fenced block automatic recall gives the model, on a real copy
//! of the tx-base workspace.

use serde_json::Value;

use crate::{Run, TempDir, TestResult, copy_tree, run, scriptorium, vectors};

fn tx_base() -> Result<TempDir, Box<dyn std::error::Error>> {
    let dir = TempDir::new()?;
    copy_tree(&vectors().join("_resources/tx-base"), &dir.path().join("memory"))?;
    Ok(dir)
}

/// `recall` with a configuration file holding `config` (empty: the defaults).
fn recall(dir: &TempDir, config: &str, words: &[&str]) -> Result<Run, Box<dyn std::error::Error>> {
    let config = dir.write("config.toml", config.as_bytes())?;
    Ok(run(scriptorium(dir.path())
        .arg("recall")
        .args(words)
        .arg("--workspace")
        .arg(dir.path().join("memory"))
        .arg("--config")
        .arg(config))?)
}

#[test]
fn recall_prints_the_fenced_block_the_model_sees_without_pending_speech() -> TestResult {
    let dir = tx_base()?;
    let out = recall(&dir, "", &["green", "tea"])?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stdout.starts_with("<memory-context>\n[System note: The following is recalled memory"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.ends_with("\n</memory-context>\n"), "{}", out.stdout);
    assert!(out.stdout.contains("\n[2024-03-16] Craig prefers green tea over coffee.\n"), "{}", out.stdout);
    assert_eq!(out.stderr, "", "piped: no progress bytes");

    let pending = recall(&dir, "", &["Craig", "quitting", "job"])?;
    assert_eq!(pending.code, Some(0), "{}", pending.stderr);
    assert!(!pending.stdout.contains("secretly quitting"), "pending speech is never recalled: {}", pending.stdout);
    Ok(())
}

#[test]
fn recall_json_carries_the_text_and_where_each_hit_points() -> TestResult {
    let dir = tx_base()?;
    let human = recall(&dir, "", &["green", "tea"])?;
    let out = recall(&dir, "", &["green", "tea", "--json"])?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let value = out.json()?;
    assert_eq!(value["ok"], true);
    assert_eq!(value["query"], "green tea");
    assert_eq!(value["text"].as_str().map(|text| format!("{text}\n")), Some(human.stdout));
    let hits = value["hits"].as_array().ok_or("hits")?;
    let prefs = hits.iter().find(|hit| hit["path"] == "topics/prefs.md").ok_or("the prefs block is a hit")?;
    assert_eq!(prefs["anchor"], "#^0d9bb518");
    assert!(hits.iter().all(|hit| hit["content"].as_str().is_some_and(|text| !text.is_empty())));
    Ok(())
}

#[test]
fn recall_follows_the_configuration() -> TestResult {
    let dir = tx_base()?;
    let agent = recall(&dir, "[memory.retrieval]\nmethod = \"agent\"\n", &["green", "tea"])?;
    assert_eq!(agent.code, Some(0), "{}", agent.stderr);
    assert_eq!(agent.stdout, "nothing recalled for \"green tea\"\n");

    let one = recall(&dir, "[memory.retrieval]\ntop_k = 1\n", &["green", "tea", "--json"])?.json()?;
    assert_eq!(one["hits"].as_array().map(Vec::len), Some(1), "{one}");
    Ok(())
}

#[test]
fn a_disabled_backend_refuses_before_the_workspace_exists() -> TestResult {
    let dir = TempDir::new()?;
    let missing = dir.path().join("memory");
    let config = dir.write("config.toml", b"[memory]\nbackend = \"none\"\n")?;
    let out = run(scriptorium(dir.path())
        .args(["recall", "tea", "--json", "--workspace"])
        .arg(&missing)
        .arg("--config")
        .arg(&config))?;
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert_eq!(out.stderr, "error[MEMORY_DISABLED]: memory is disabled by memory.backend=none\n");
    let value: Value = out.json()?;
    assert_eq!(value["ok"], false);
    assert_eq!(value["error"]["code"], "MEMORY_DISABLED");
    assert!(!missing.exists(), "the workspace is never created");
    Ok(())
}
