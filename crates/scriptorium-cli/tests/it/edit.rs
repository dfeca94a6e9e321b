//! `scriptorium edit` with `EDITOR` set to real scripts that rewrite the draft: a valid
//! edit installs as one transaction, a rejected one keeps the draft and the topic.

use std::path::{Path, PathBuf};

use crate::{Run, TempDir, TestResult, copy_tree, run, scriptorium, vectors};

const PREFS: &str = "topics/prefs.md";

fn tx_base() -> Result<TempDir, Box<dyn std::error::Error>> {
    let dir = TempDir::new()?;
    copy_tree(&vectors().join("_resources/tx-base"), &dir.path().join("memory"))?;
    Ok(dir)
}

/// An executable shell script `name` in `dir` with `body` (it gets the draft as `$1`).
fn editor(dir: &TempDir, name: &str, body: &str) -> Result<PathBuf, Box<dyn std::error::Error>> {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.write(name, format!("#!/bin/sh\n{body}\n").as_bytes())?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    Ok(path)
}

fn edit(dir: &TempDir, editor: &Path, args: &[&str]) -> Result<Run, std::io::Error> {
    run(scriptorium(dir.path())
        .env_remove("VISUAL")
        .env("EDITOR", editor)
        .arg("edit")
        .args(args)
        .arg("--workspace")
        .arg(dir.path().join("memory")))
}

fn drafts(dir: &TempDir) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir.path().join("memory/.scriptorium/drafts")) else { return Vec::new() };
    entries.filter_map(|entry| entry.ok().map(|entry| entry.path())).collect()
}

#[test]
fn a_saved_draft_is_validated_and_installed_with_its_message() -> TestResult {
    let dir = tx_base()?;
    let script = editor(&dir, "ed.sh", "sed -i 's/over coffee/over coffee, hot/' \"$1\"")?;
    let out = edit(&dir, &script, &["topics/prefs", "--message", "prefs: hot tea"])?;
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.starts_with("validated and derived views rebuilt\nrevision "), "{}", out.stdout);
    assert!(out.stdout.contains("changed topics/prefs.md\n"), "{}", out.stdout);
    let text = std::fs::read_to_string(dir.path().join("memory").join(PREFS))?;
    assert!(text.contains("Craig prefers green tea over coffee, hot.[^e-d7b532f365] ^0d9bb518"), "{text}");
    assert_eq!(drafts(&dir), Vec::<PathBuf>::new(), "an installed draft is removed");
    let history =
        run(scriptorium(dir.path()).args(["history", "--json", "--workspace"]).arg(dir.path().join("memory")))?;
    assert_eq!(history.json()?[0]["message"], "prefs: hot tea");
    Ok(())
}

#[test]
fn a_rejected_draft_is_kept_and_the_topic_untouched() -> TestResult {
    let dir = tx_base()?;
    let before = std::fs::read(dir.path().join("memory").join(PREFS))?;
    let script = editor(&dir, "bad.sh", "printf '# Preferences\\n\\nAn uncited claim.\\n' > \"$1\"")?;
    let out = edit(&dir, &script, &[PREFS])?;
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    assert!(out.stderr.starts_with("error[INVALID_TOPIC_FORMAT]: "), "{}", out.stderr);
    assert!(out.stderr.contains("  topics/prefs.md:3: TOPIC_UNCITED_TEXT "), "{}", out.stderr);
    assert_eq!(std::fs::read(dir.path().join("memory").join(PREFS))?, before);
    let kept = drafts(&dir);
    assert_eq!(kept.len(), 1, "{kept:?}");
    let draft = kept.first().ok_or("draft")?;
    assert!(out.stderr.contains(&format!("the draft is kept at {}", draft.display())), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(draft)?, "# Preferences\n\nAn uncited claim.\n");

    let json = edit(&dir, &script, &[PREFS, "--json"])?;
    assert_eq!(json.code, Some(1));
    let value = json.json()?;
    assert_eq!((value["ok"].as_bool(), value["error"]["code"].as_str()), (Some(false), Some("INVALID_TOPIC_FORMAT")));
    Ok(())
}

#[test]
fn an_unchanged_draft_installs_nothing() -> TestResult {
    let dir = tx_base()?;
    let script = editor(&dir, "noop.sh", "true")?;
    let out = edit(&dir, &script, &[PREFS])?;
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (Some(0), "no change: topics/prefs.md is as it was\n"),
        "{}",
        out.stderr
    );
    assert!(!dir.path().join("memory/.git").exists(), "no history commit");
    assert_eq!(drafts(&dir), Vec::<PathBuf>::new());
    Ok(())
}

#[test]
fn a_failing_editor_and_bad_paths_are_refused() -> TestResult {
    let dir = tx_base()?;
    let before = std::fs::read(dir.path().join("memory").join(PREFS))?;
    let failing = editor(&dir, "fail.sh", "echo scribble > \"$1\"; exit 3")?;
    let out = edit(&dir, &failing, &[PREFS])?;
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.starts_with("error[CLI_EDIT_FAILED]: the editor "), "{}", out.stderr);
    assert!(out.stderr.contains("the draft is kept at "), "{}", out.stderr);
    assert_eq!(std::fs::read(dir.path().join("memory").join(PREFS))?, before);

    let noop = editor(&dir, "noop.sh", "true")?;
    let cases: [(&str, &str, i32); 3] = [
        ("core.md", "READ_ONLY_PATH", 1),
        ("../escape.md", "PATH_OUTSIDE_WORKSPACE", 1),
        ("topics/nobody", "CLI_FILE_NOT_FOUND", 2),
    ];
    for (path, code, status) in cases {
        let out = edit(&dir, &noop, &[path])?;
        assert_eq!(out.code, Some(status), "{path}: {}", out.stderr);
        assert!(out.stderr.starts_with(&format!("error[{code}]: ")), "{path}: {}", out.stderr);
    }
    Ok(())
}

#[test]
fn visual_wins_over_editor() -> TestResult {
    let dir = tx_base()?;
    let good = editor(&dir, "good.sh", "sed -i 's/over coffee/over cocoa/' \"$1\"")?;
    let failing = editor(&dir, "fail.sh", "exit 3")?;
    let out = run(scriptorium(dir.path())
        .env("VISUAL", &good)
        .env("EDITOR", &failing)
        .args(["edit", PREFS, "--json", "--workspace"])
        .arg(dir.path().join("memory")))?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let value = out.json()?;
    assert_eq!(value["ok"], true, "{value}");
    assert!(std::fs::read_to_string(dir.path().join("memory").join(PREFS))?.contains("over cocoa"));
    Ok(())
}
