//! `memory.backend = none`: every memory verb refuses with `MEMORY_DISABLED`, exit
//! status 1, before the workspace exists.

use serde_json::Value;

use crate::{TempDir, TestResult, run, scriptorium};

#[test]
fn every_memory_verb_refuses_and_creates_nothing() -> TestResult {
    let dir = TempDir::new()?;
    let ws = dir.path().join("memory");
    let ws_arg = ws.to_str().ok_or("path")?;
    let verbs: [&[&str]; 12] = [
        &["init"],
        &["check"],
        &["status"],
        &["core"],
        &["search", "tea"],
        &["grep", "tea"],
        &["history"],
        &["recall", "tea"],
        &["show", "topics/a.md"],
        &["edit", "topics/a.md"],
        &["export"],
        &["write", "--all"],
    ];
    for verb in verbs {
        let out =
            run(scriptorium(dir.path()).env("SCRIPTORIUM_BACKEND", "none").args(verb).args(["--workspace", ws_arg]))?;
        assert_eq!(out.code, Some(1), "{verb:?}: {}", out.stderr);
        assert_eq!(out.stderr, "error[MEMORY_DISABLED]: memory is disabled by memory.backend=none\n", "{verb:?}");
        let json = run(scriptorium(dir.path()).env("SCRIPTORIUM_BACKEND", "none").args(verb).args([
            "--json",
            "--workspace",
            ws_arg,
        ]))?
        .json()?;
        assert_eq!(json["error"]["code"], Value::from("MEMORY_DISABLED"), "{verb:?}");
        assert!(!ws.exists(), "{verb:?} created the workspace");
    }
    // The same from the configuration file.
    let config = dir.write("config.toml", b"[memory]\nbackend = \"none\"\n")?;
    let out = run(scriptorium(dir.path()).env("SCRIPTORIUM_CONFIG", &config).args(["init", "--workspace", ws_arg]))?;
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(!ws.exists());
    Ok(())
}
