//! Codex CLI rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`): lines
//! `{timestamp, type, payload}`; one session per file, `codex:<session_meta.payload.id>`.
//!
//! What the person typed is `event_msg` `user_message` (the `response_item` user
//! messages also carry injected context, so they are not read); the reply is the
//! `response_item` `message` with role `assistant` (its `event_msg` `agent_message`
//! mirror is not read, or it would count twice). Lines have no ids: a turn's id is
//! `<session id>:<line number>` (stable, the file is append-only) and its parent the
//! turn before it. `thread_rolled_back{num_turns}` drops the last turns from the branch:
//! the next turn hangs from the node before the `num_turns`-th last user turn, so the
//! rolled-back turns stay stored as an abandoned branch. Tool calls, reasoning and other
//! events are machinery and not stored. The branch state between runs lives in the file's
//! import context.

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::authority;
use super::lines::{Batch, Chunk, FileCtx, stem};
use crate::clock::parse_iso8601;
use crate::error::Error;
use crate::store::{Content, Message, Timestamp};

/// The agent name assistant turns speak as.
const AGENT: &str = "codex";

/// The session id prefix.
pub(crate) const SESSION_PREFIX: &str = "codex:";

/// The branch as the next line sees it.
#[derive(Default, Deserialize, Serialize)]
struct Branch {
    /// The last turn on the branch.
    parent: Option<String>,
    /// The user turns on the branch, oldest first, each with its predecessor.
    users: Vec<(String, Option<String>)>,
}

pub(crate) fn parse(_tx: &Connection, ctx: &mut FileCtx<'_>, chunk: &Chunk) -> Result<Batch, Error> {
    let mut branch: Branch = serde_json::from_str(&ctx.context).unwrap_or_default();
    let mut batch = Batch::default();
    for (number, bytes) in chunk.iter() {
        let Some(line) = ctx.object(number, bytes) else { continue };
        let kind = line.get("type").and_then(Value::as_str).unwrap_or_default();
        let Some(payload) = line.get("payload").and_then(Value::as_object) else {
            if ctx.session.is_empty() {
                ctx.session = format!("{SESSION_PREFIX}{}", stem(ctx.path));
            }
            continue;
        };
        if ctx.session.is_empty() {
            let id = (kind == "session_meta")
                .then(|| payload.get("id").and_then(Value::as_str))
                .flatten()
                .filter(|id| !id.is_empty())
                .map_or_else(|| stem(ctx.path), str::to_owned);
            ctx.session = format!("{SESSION_PREFIX}{id}");
        }
        let payload_type = payload.get("type").and_then(Value::as_str).unwrap_or_default();
        let (role, text) = match (kind, payload_type) {
            ("event_msg", "user_message") => match payload.get("message").and_then(Value::as_str) {
                Some(text) => ("user", text.to_owned()),
                None => {
                    ctx.malformed(number, "a user_message without a `message` string");
                    continue;
                }
            },
            ("response_item", "message") if payload.get("role").and_then(Value::as_str) == Some("assistant") => {
                ("assistant", output_text(payload))
            }
            ("event_msg", "thread_rolled_back") => {
                let turns = payload.get("num_turns").and_then(Value::as_u64).unwrap_or(0);
                let keep = branch.users.len().saturating_sub(usize::try_from(turns).unwrap_or(usize::MAX));
                if keep < branch.users.len() {
                    branch.parent = branch.users.get(keep).and_then(|(_, predecessor)| predecessor.clone());
                    branch.users.truncate(keep);
                }
                continue;
            }
            _ => continue,
        };
        let text = normalize(&text);
        if text.trim().is_empty() {
            continue;
        }
        let id = format!("{}:{number}", ctx.session.strip_prefix(SESSION_PREFIX).unwrap_or(&ctx.session));
        let timestamp = match line.get("timestamp") {
            Some(Value::String(stamp)) => {
                parse_iso8601(stamp).map_or_else(|| Timestamp::Text(stamp.clone()), Timestamp::Unix)
            }
            _ => Timestamp::None,
        };
        let metadata: Map<String, Value> = if role == "user" { authority::owner() } else { authority::runtime(AGENT) };
        if role == "user" {
            branch.users.push((id.clone(), branch.parent.clone()));
        }
        batch.nodes.push(Message {
            id: id.clone(),
            predecessor: branch.parent.replace(id),
            role: role.to_owned(),
            content: Content::Text(text),
            timestamp,
            metadata,
        });
    }
    ctx.context = serde_json::to_string(&branch).unwrap_or_default();
    Ok(batch)
}

/// The `output_text` parts of an assistant message, joined by LF.
fn output_text(payload: &Map<String, Value>) -> String {
    match payload.get("content") {
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|part| matches!(part.get("type").and_then(Value::as_str), Some("output_text" | "text")))
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        Some(Value::String(text)) => text.clone(),
        _ => String::new(),
    }
}

fn normalize(text: &str) -> String {
    if text.contains('\r') { text.replace("\r\n", "\n").replace('\r', "\n") } else { text.to_owned() }
}
