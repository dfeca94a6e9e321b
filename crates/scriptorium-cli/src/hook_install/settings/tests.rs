//! The merge keeps every hook that is not ours and is idempotent.

use serde_json::{Value, json};

use super::{Entry, install, is_ours, quote, remove_ours, words};

fn entries() -> Vec<Entry> {
    vec![
        Entry {
            event: "SessionStart",
            command: "/opt/bin/scriptorium hook claude-code session-start".into(),
            timeout: 10,
        },
        Entry {
            event: "Stop",
            command: "'/my dir/scriptorium' hook claude-code stop --workspace /w".into(),
            timeout: 10,
        },
    ]
}

fn others() -> Value {
    json!({
        "model": "opus",
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check.sh", "timeout": 5}]}],
        }
    })
}

#[test]
fn words_undo_the_quoting_that_quote_adds() {
    for word in ["plain", "/my dir/scriptorium", "it's", "a\"b", "", "x y 'z'"] {
        let line = format!("{} hook", quote(word));
        assert_eq!(words(&line), vec![word.to_owned(), "hook".to_owned()], "{line}");
    }
    assert_eq!(words(r#"a "b \" c" d\ e"#), vec!["a", "b \" c", "d e"]);
}

#[test]
fn ours_is_the_scriptorium_program_with_hook_claude_code() {
    assert!(is_ours("/usr/local/bin/scriptorium hook claude-code stop"));
    assert!(is_ours("'/my dir/scriptorium' hook claude-code user-prompt-submit --workspace '/w x'"));
    assert!(is_ours(r"'C:\bin\scriptorium.exe' hook claude-code stop"));
    assert!(!is_ours("scriptorium mcp"));
    assert!(!is_ours("echo scriptorium hook claude-code"));
    assert!(!is_ours("/bin/not-scriptorium hook claude-code stop"));
}

#[test]
fn install_adds_ours_and_keeps_the_rest() -> Result<(), super::Shape> {
    let mut settings = others();
    install(&mut settings, &entries())?;
    assert_eq!(settings["model"], "opus");
    assert_eq!(settings["hooks"]["PreToolUse"], others()["hooks"]["PreToolUse"]);
    let stop = settings["hooks"]["Stop"].as_array().cloned().unwrap_or_default();
    assert_eq!(stop.len(), 2, "{stop:?}");
    assert_eq!(stop[0], others()["hooks"]["Stop"][0]);
    assert_eq!(stop[1]["hooks"][0]["command"], entries()[1].command);
    assert_eq!(stop[1]["hooks"][0]["type"], "command");
    assert_eq!(stop[1]["hooks"][0]["timeout"], 10);
    assert_eq!(settings["hooks"]["SessionStart"][0]["hooks"][0]["command"], entries()[0].command);
    Ok(())
}

#[test]
fn install_twice_equals_install_once_and_uninstall_restores() -> Result<(), super::Shape> {
    let mut once = others();
    install(&mut once, &entries())?;
    let mut twice = once.clone();
    install(&mut twice, &entries())?;
    assert_eq!(once, twice);
    let removed = remove_ours(&mut twice)?;
    assert_eq!(removed, 2);
    assert_eq!(twice, others());
    Ok(())
}

#[test]
fn a_handler_of_ours_beside_a_users_handler_leaves_the_users_group() -> Result<(), super::Shape> {
    let mut settings = json!({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "scriptorium hook claude-code stop"},
        {"type": "command", "command": "say done"},
    ]}]}});
    assert_eq!(remove_ours(&mut settings)?, 1);
    assert_eq!(settings, json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}));
    Ok(())
}

#[test]
fn an_empty_file_gets_a_hooks_object() -> Result<(), super::Shape> {
    let mut settings = json!({});
    install(&mut settings, &entries())?;
    assert_eq!(settings["hooks"].as_object().map(|m| m.len()), Some(2));
    remove_ours(&mut settings)?;
    assert_eq!(settings, json!({"hooks": {}}));
    Ok(())
}

#[test]
fn a_wrong_shape_is_refused() {
    for bad in [json!([]), json!({"hooks": []}), json!({"hooks": {"Stop": {}}})] {
        let mut settings = bad.clone();
        assert!(install(&mut settings, &entries()).is_err(), "{bad}");
    }
}
