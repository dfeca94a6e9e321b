//! `scriptorium hook install|uninstall claude-code`: real settings files in a temporary
//! project and home; other settings and hooks survive, a backup holds the old bytes,
//! installing twice changes nothing, and the installed command really runs.

use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::{TempDir, TestResult, run, scriptorium};

const EVENTS: [&str; 4] = ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"];

fn users_settings() -> Value {
    json!({
        "permissions": {"allow": ["Bash(cargo test:*)"]},
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send 'Claude is done'"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh", "timeout": 5}]}]
        }
    })
}

fn backups(dir: &Path) -> Result<Vec<std::path::PathBuf>, std::io::Error> {
    let mut out: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("settings.json.bak-")))
        .collect();
    out.sort();
    Ok(out)
}

fn read_json(path: &Path) -> Result<Value, Box<dyn std::error::Error>> {
    Ok(serde_json::from_slice(&std::fs::read(path)?)?)
}

/// Our handlers per event: (command, timeout).
fn ours(settings: &Value) -> Vec<(String, String, u64)> {
    let mut out = Vec::new();
    for event in EVENTS {
        for group in settings["hooks"][event].as_array().into_iter().flatten() {
            for handler in group["hooks"].as_array().into_iter().flatten() {
                let command = handler["command"].as_str().unwrap_or_default();
                if command.contains(" hook claude-code ") {
                    out.push((event.to_owned(), command.to_owned(), handler["timeout"].as_u64().unwrap_or(0)));
                }
            }
        }
    }
    out
}

#[test]
fn install_merges_backs_up_and_is_idempotent_and_uninstall_removes_only_ours() -> TestResult {
    let dir = TempDir::new()?;
    let original = serde_json::to_string_pretty(&users_settings())?;
    let settings = dir.write("project/.claude/settings.json", original.as_bytes())?;
    let claude_dir = settings.parent().ok_or("parent")?;
    let project = dir.path().join("project");

    let out = run(scriptorium(dir.path())
        .args(["hook", "install", "claude-code", "--json", "--project"])
        .arg(&project)
        .arg("--workspace")
        .arg(dir.path().join("memory")))?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let report = out.json()?;
    assert_eq!(report["changed"], true);
    assert_eq!(report["installed"], 4);
    let installed = read_json(&settings)?;
    assert_eq!(installed["permissions"], users_settings()["permissions"]);
    assert_eq!(installed["hooks"]["PreToolUse"], users_settings()["hooks"]["PreToolUse"]);
    assert_eq!(installed["hooks"]["Stop"][0], users_settings()["hooks"]["Stop"][0], "the user's Stop hook stays first");
    let mine = ours(&installed);
    assert_eq!(mine.iter().map(|(e, _, _)| e.as_str()).collect::<Vec<_>>(), EVENTS);
    for ((_, command, timeout), event) in
        mine.iter().zip(["session-start", "user-prompt-submit", "stop", "session-end"])
    {
        assert!(command.contains(&format!(" hook claude-code {event} --workspace ")), "{command}");
        assert!(command.contains(&dir.path().join("memory").display().to_string()), "{command}");
        assert!((1..=10).contains(timeout), "{timeout}");
    }
    let saved = backups(claude_dir)?;
    assert_eq!(saved.len(), 1);
    assert_eq!(std::fs::read_to_string(&saved[0])?, original, "the backup holds the old bytes");

    let again = run(scriptorium(dir.path())
        .args(["hook", "install", "claude-code", "--json", "--project"])
        .arg(&project)
        .arg("--workspace")
        .arg(dir.path().join("memory")))?;
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert_eq!(again.json()?["changed"], false);
    assert_eq!(read_json(&settings)?, installed, "installing twice adds nothing");
    assert_eq!(backups(claude_dir)?.len(), 1, "no backup when nothing changes");

    let removed =
        run(scriptorium(dir.path()).args(["hook", "uninstall", "claude-code", "--json", "--project"]).arg(&project))?;
    assert_eq!(removed.code, Some(0), "{}", removed.stderr);
    assert_eq!(removed.json()?["removed"], 4);
    assert_eq!(read_json(&settings)?, users_settings(), "only ours went");
    assert_eq!(backups(claude_dir)?.len(), 2);
    let nothing = run(scriptorium(dir.path()).args(["hook", "uninstall", "claude-code", "--project"]).arg(&project))?;
    assert_eq!(nothing.code, Some(0));
    assert!(nothing.stdout.contains("unchanged"), "{}", nothing.stdout);
    Ok(())
}

#[test]
fn user_scope_creates_the_file_under_home() -> TestResult {
    let dir = TempDir::new()?;
    let out = run(scriptorium(dir.path()).env_remove("CLAUDE_CONFIG_DIR").args([
        "hook",
        "install",
        "claude-code",
        "--user",
    ]))?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stdout.starts_with("installed 4 Claude Code hooks in "), "{}", out.stdout);
    let settings = read_json(&dir.path().join(".claude/settings.json"))?;
    assert_eq!(ours(&settings).len(), 4);
    assert!(backups(&dir.path().join(".claude"))?.is_empty(), "no old file, no backup");
    let config_dir = dir.path().join("elsewhere");
    let out = run(scriptorium(dir.path()).env("CLAUDE_CONFIG_DIR", &config_dir).args([
        "hook",
        "install",
        "claude-code",
        "--user",
    ]))?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(ours(&read_json(&config_dir.join("settings.json"))?).len(), 4);
    Ok(())
}

#[test]
fn a_settings_file_that_is_not_json_is_left_alone() -> TestResult {
    let dir = TempDir::new()?;
    for bad in [&b"{ \"hooks\": "[..], b"[1, 2]", b"{\"hooks\": {\"Stop\": {}}}"] {
        let settings = dir.write("p/.claude/settings.json", bad)?;
        let out = run(scriptorium(dir.path())
            .args(["hook", "install", "claude-code", "--project"])
            .arg(dir.path().join("p")))?;
        assert_eq!(out.code, Some(2));
        assert_eq!(out.error_code()?, "CLI_SETTINGS_INVALID");
        assert_eq!(std::fs::read(&settings)?, bad, "unchanged");
        assert!(backups(&dir.path().join("p/.claude"))?.is_empty());
    }
    Ok(())
}

#[test]
fn the_installed_command_runs_through_a_shell() -> TestResult {
    let dir = TempDir::new()?;
    // A workspace path with a space and a quote, so the quoting is exercised.
    let workspace = dir.path().join("my memory's home");
    std::fs::create_dir_all(workspace.join("topics"))?;
    std::fs::write(workspace.join("core.md"), "# Core\n\nThe owner takes green tea, no sugar.\n")?;
    let out = run(scriptorium(dir.path())
        .args(["hook", "install", "claude-code", "--project"])
        .arg(dir.path())
        .arg("--workspace")
        .arg(&workspace))?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let settings = read_json(&dir.path().join(".claude/settings.json"))?;
    let command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"].as_str().ok_or("command")?.to_owned();
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(&command)
        .env("HOME", dir.path())
        .env("SCRIPTORIUM_CONFIG", dir.path().join("no-config.toml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    std::io::Write::write_all(
        child.stdin.as_mut().ok_or("stdin")?,
        br#"{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}"#,
    )?;
    drop(child.stdin.take());
    let output = child.wait_with_output()?;
    assert_eq!(output.status.code(), Some(0));
    let reply: Value = serde_json::from_slice(&output.stdout)?;
    let context = reply["hookSpecificOutput"]["additionalContext"].as_str().ok_or("context")?;
    assert!(context.contains("The owner takes green tea, no sugar."), "{context}");
    Ok(())
}
