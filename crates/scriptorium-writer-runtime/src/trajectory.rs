//! `agent-history.jsonl` (spec 01 §1.3, spec 02 §10.3): one JSON object per writer-agent
//! run, appended to the runtime directory. Not memory: it is outside the revision's
//! memory files and never read back by the runtime, so it is written best-effort.
//!
//! Secrets never reach it: before a line is written, every occurrence of a secret the
//! caller names (the API keys in use) is replaced by `[redacted]`, so that even a model
//! or a tool output that echoes a key leaves no trace of it.

use std::io::Write;
use std::path::Path;

use serde_json::Value;

/// The file name inside the runtime directory.
pub const AGENT_HISTORY_FILE: &str = "agent-history.jsonl";

/// What replaces a secret in a written line.
const REDACTED: &str = "[redacted]";

/// One audited step of a run: a tool call, an end-of-turn commit or the closing
/// `agent` entry (spec 02 §10.4).
#[derive(Clone, Debug, PartialEq)]
pub struct TurnRecord {
    /// The model round the step belongs to (1-based).
    pub round: u32,
    /// `Read`, `Write`, …, `commit` or `agent`.
    pub tool: String,
    /// The call's arguments as the model sent them (`null` for commit and agent entries).
    pub arguments: Value,
    /// `ok` or `error`.
    pub status: String,
    /// What the step returned (the tool result, the commit's rejection, …).
    pub output: String,
    /// For commits: how many topic files, and which.
    pub topic_paths: Option<Vec<String>>,
}

/// One writer-agent run as the history records it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trajectory {
    /// The stage name (`write`, `organize-repair`, …).
    pub stage: String,
    /// The system prompt sent.
    pub system_prompt: String,
    /// The user prompt sent.
    pub prompt: String,
    /// Every audited step, in order.
    pub turns: Vec<TurnRecord>,
    /// The model's final text reply.
    pub reply: String,
    /// Model rounds used.
    pub rounds: u32,
    /// Prompt tokens over the run.
    pub input_tokens: u64,
    /// Completion tokens over the run.
    pub output_tokens: u64,
    /// The provider's last stop reason.
    pub stop_reason: String,
    /// The error that ended the run, if one did.
    pub error: Option<String>,
}

impl Trajectory {
    /// The JSON line of spec 01 §1.3, keys in its order: `stage`, `system_prompt`,
    /// `prompt`, then `error` and `turns` for a failed run, or `turns`, `reply`,
    /// `rounds`, `input_tokens`, `output_tokens`, `stop_reason`; every string with
    /// `secrets` redacted.
    pub fn to_line(&self, secrets: &[&str]) -> String {
        let text = |value: &str| Value::from(redact(value, secrets)).to_string();
        let turns: Vec<String> = self.turns.iter().map(|turn| turn.to_line(secrets)).collect();
        let turns = format!("[{}]", turns.join(","));
        let mut fields = vec![
            ("stage", text(&self.stage)),
            ("system_prompt", text(&self.system_prompt)),
            ("prompt", text(&self.prompt)),
        ];
        match &self.error {
            Some(error) => fields.extend([("error", text(error)), ("turns", turns)]),
            None => fields.extend([
                ("turns", turns),
                ("reply", text(&self.reply)),
                ("rounds", self.rounds.to_string()),
                ("input_tokens", self.input_tokens.to_string()),
                ("output_tokens", self.output_tokens.to_string()),
                ("stop_reason", text(&self.stop_reason)),
            ]),
        }
        ordered_object(&fields)
    }
}

impl TurnRecord {
    /// The audit entry, keys in the order of spec 02 §10.4.
    fn to_line(&self, secrets: &[&str]) -> String {
        let text = |value: &str| Value::from(redact(value, secrets)).to_string();
        let mut arguments = self.arguments.clone();
        redact_value(&mut arguments, secrets);
        let mut fields = vec![
            ("round", self.round.to_string()),
            ("tool", text(&self.tool)),
            ("arguments", arguments.to_string()),
            ("status", text(&self.status)),
            ("output", text(&self.output)),
        ];
        if let Some(paths) = &self.topic_paths {
            fields.push(("count", paths.len().to_string()));
            let paths: Vec<Value> = paths.iter().map(|path| Value::from(redact(path, secrets))).collect();
            fields.push(("topic_paths", Value::Array(paths).to_string()));
        }
        ordered_object(&fields)
    }
}

/// `{"k":v,…}` from already serialized values, keys in the given order (serde_json's
/// own map sorts its keys).
fn ordered_object(fields: &[(&str, String)]) -> String {
    let mut out = String::from("{");
    for (n, (key, value)) in fields.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        out.push_str(&Value::from(*key).to_string());
        out.push(':');
        out.push_str(value);
    }
    out.push('}');
    out
}

/// `line` with every non-empty `secret` replaced by `[redacted]`.
pub fn redact(line: &str, secrets: &[&str]) -> String {
    let mut out = line.to_owned();
    for secret in secrets.iter().filter(|secret| !secret.is_empty()) {
        if out.contains(secret) {
            out = out.replace(secret, REDACTED);
        }
    }
    out
}

/// Redact every string inside `value` (before serialization, so escaping cannot hide a
/// secret from the match).
fn redact_value(value: &mut Value, secrets: &[&str]) {
    match value {
        Value::String(text) if secrets.iter().any(|secret| !secret.is_empty() && text.contains(secret)) => {
            *text = redact(text, secrets);
        }
        Value::Array(items) => items.iter_mut().for_each(|item| redact_value(item, secrets)),
        Value::Object(map) => map.values_mut().for_each(|item| redact_value(item, secrets)),
        _ => {}
    }
}

/// Append `trajectory` as one line to `runtime_dir/agent-history.jsonl`, with `secrets`
/// redacted. One `write` of the whole line on an append-mode file, so concurrent runs
/// never interleave inside a line.
///
/// Errors: the I/O error; the caller treats the history as best-effort.
pub fn append_trajectory(runtime_dir: &Path, trajectory: &Trajectory, secrets: &[&str]) -> std::io::Result<()> {
    let mut line = trajectory.to_line(secrets);
    line.push('\n');
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(runtime_dir.join(AGENT_HISTORY_FILE))?;
    file.write_all(line.as_bytes())
}

#[cfg(test)]
mod tests;
