//! The history line's shape and the redaction of secrets, on a real file.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

fn run(error: Option<&str>) -> Trajectory {
    Trajectory {
        stage: "write".into(),
        system_prompt: "SYSTEM".into(),
        prompt: "TASK".into(),
        turns: vec![
            TurnRecord {
                round: 1,
                tool: "Read".into(),
                arguments: json!({"file_path": "topics/a.md"}),
                status: "ok".into(),
                output: "# A\n".into(),
                topic_paths: None,
            },
            TurnRecord {
                round: 2,
                tool: "commit".into(),
                arguments: Value::Null,
                status: "ok".into(),
                output: String::new(),
                topic_paths: Some(vec!["topics/a.md".into()]),
            },
        ],
        reply: "done".into(),
        rounds: 2,
        input_tokens: 120,
        output_tokens: 30,
        stop_reason: "end_turn".into(),
        error: error.map(str::to_owned),
    }
}

/// The keys of the JSON object `line` in written order (serde_json's map would sort them).
fn keys(line: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut depth = 0;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            '"' => {
                let mut text = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        c => text.push(c),
                    }
                }
                if depth == 1 && chars.peek() == Some(&':') {
                    keys.push(text);
                }
            }
            _ => {}
        }
    }
    keys
}

#[test]
fn a_run_has_the_spec_keys_in_order() {
    let line = run(None).to_line(&[]);
    let value: Value = serde_json::from_str(&line).unwrap_or_default();
    assert_eq!(
        keys(&line),
        [
            "stage",
            "system_prompt",
            "prompt",
            "turns",
            "reply",
            "rounds",
            "input_tokens",
            "output_tokens",
            "stop_reason"
        ]
    );
    assert_eq!(value["turns"][1]["count"], 1);
    assert_eq!(value["turns"][1]["topic_paths"], json!(["topics/a.md"]));
    assert!(value["turns"][0].get("count").is_none());
    let turn = value["turns"][1].to_string();
    assert!(line.contains(r#"{"round":2,"tool":"commit","arguments":null,"status":"ok","output":"","count":1,"topic_paths":["topics/a.md"]}"#), "{turn}");
    let failed = run(Some("MODEL_TIMEOUT")).to_line(&[]);
    assert_eq!(keys(&failed), ["stage", "system_prompt", "prompt", "error", "turns"]);
}

#[test]
fn lines_are_appended_one_per_run() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("scriptorium-trajectory-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    append_trajectory(&dir, &run(None), &[])?;
    append_trajectory(&dir, &run(Some("boom")), &[])?;
    let text = std::fs::read_to_string(dir.join(AGENT_HISTORY_FILE))?;
    let lines: Vec<Value> = text.lines().map(serde_json::from_str).collect::<Result<_, _>>()?;
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["error"], "boom");
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

proptest! {
    /// A secret anywhere in a run, even one that needs JSON escaping, never reaches the file.
    #[test]
    fn a_secret_never_reaches_the_history(
        secret in "[A-Za-z0-9\"\\\\/\n-]{8,24}",
        prefix in ".{0,8}",
        field in 0usize..5,
    ) {
        let mut trajectory = run(None);
        let leaked = format!("{prefix}{secret}{prefix}");
        match field {
            0 => trajectory.prompt = leaked,
            1 => trajectory.reply = leaked,
            2 => trajectory.turns[0].output = leaked,
            3 => trajectory.turns[0].arguments = json!({"content": leaked}),
            _ => trajectory.error = Some(leaked),
        }
        let dir = std::env::temp_dir().join(format!("scriptorium-redact-{}-{field}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let _ = std::fs::remove_file(dir.join(AGENT_HISTORY_FILE));
        append_trajectory(&dir, &trajectory, &[secret.as_str()]).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let text = std::fs::read_to_string(dir.join(AGENT_HISTORY_FILE)).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let escaped = serde_json::to_string(&secret).unwrap_or_default();
        let escaped = escaped.trim_matches('"');
        prop_assert!(!text.contains(secret.as_str()) && !text.contains(escaped));
        let value: Value = serde_json::from_str(text.trim_end()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(!value.to_string().contains(escaped));
        std::fs::remove_dir_all(&dir).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
}
