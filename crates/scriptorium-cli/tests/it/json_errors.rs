//! Every verb asked for `--json` answers a failure with `{"ok": false, "error": {"code",
//! "message"}}` on stdout, and the same code on its one stderr line.

use crate::{TempDir, TestResult, run, scriptorium};

#[test]
fn every_json_verb_reports_a_missing_workspace_as_a_json_error() -> TestResult {
    let dir = TempDir::new()?;
    let missing = dir.path().join("nowhere");
    let missing = missing.to_str().ok_or("path")?;
    let verbs: [&[&str]; 15] = [
        &["check"],
        &["status"],
        &["core"],
        &["search", "tea"],
        &["grep", "tea"],
        &["history"],
        &["restore", "abcd"],
        &["update", "--changes", "x.json"],
        &["recall", "tea"],
        &["show", "topics/a.md"],
        &["edit", "topics/a.md"],
        &["export"],
        &["sessions"],
        &["write", "--all"],
        &["backfill"],
    ];
    for verb in verbs {
        let out = run(scriptorium(dir.path()).args(verb).args(["--json", "--workspace", missing]))?;
        let value = out.json().map_err(|err| format!("{verb:?}: stdout not JSON ({err}): {:?}", out.stdout))?;
        assert_eq!(value["ok"], false, "{verb:?}: {value}");
        let code = value["error"]["code"].as_str().ok_or_else(|| format!("{verb:?}: no code: {value}"))?;
        assert!(value["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{verb:?}");
        assert!(out.stderr.starts_with(&format!("error[{code}]: ")), "{verb:?}: {}", out.stderr);
        assert_ne!(out.code, Some(0), "{verb:?}");
    }
    assert!(!dir.path().join("nowhere").exists(), "no verb created the missing workspace");
    Ok(())
}
