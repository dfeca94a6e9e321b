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
//!
//! A fork is a new rollout whose first `session_meta` names the parent in
//! `forked_from_id`; Codex copies the parent's history up to the fork point into it
//! (stamped at the fork instant). Those copies are recognised by matching the fork's
//! turns, in order, against the parent session's stored nodes (same role, same text):
//! a copy is not stored again, and the branch continues from the parent's node. The
//! fork's own first turn is then a root of its session whose metadata links it to the
//! parent: `forked_from_session`, and `forked_from_node` = the parent's last copied turn,
//! or, when nothing was copied, the parent's last node stamped at or before the fork's
//! `session_meta` timestamp.

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::authority;
use super::lines::{Batch, Chunk, FileCtx, stem};
use crate::clock::parse_iso8601;
use crate::error::Error;
use crate::store::{Content, Message, Timestamp, last_node_at_in, next_node_in};

/// The agent name assistant turns speak as.
const AGENT: &str = "codex";

/// The session id prefix.
pub(crate) const SESSION_PREFIX: &str = "codex:";

/// Metadata keys linking a fork's roots to the parent session and node they fork from.
const FORKED_FROM_SESSION: &str = "forked_from_session";
const FORKED_FROM_NODE: &str = "forked_from_node";

/// The branch as the next line sees it. Ids on it may be the parent session's (a fork's
/// copied turns); a node hanging from one becomes a root linked to it.
#[derive(Default, Deserialize, Serialize)]
#[serde(default)]
struct Branch {
    /// The last turn on the branch.
    parent: Option<String>,
    /// The user turns on the branch, oldest first, each with its predecessor.
    users: Vec<(String, Option<String>)>,
    /// Set when the rollout is a fork.
    fork: Option<Fork>,
}

/// A fork's parent and how far its copied history has been matched.
#[derive(Default, Deserialize, Serialize)]
#[serde(default)]
struct Fork {
    /// The parent's session id (`codex:<forked_from_id>`).
    session: String,
    /// The fork's `session_meta` timestamp (Unix seconds).
    at: Option<f64>,
    /// While copies are still being matched: the row of the parent's last matched node
    /// (0 before the first). `None` once a turn did not match: matching never resumes.
    cursor: Option<i64>,
    /// Whether any turn was a copy.
    copied: bool,
    /// The parent node a root hangs from when nothing was copied (found by time, once).
    base: Option<String>,
}

pub(crate) fn parse(tx: &Connection, ctx: &mut FileCtx<'_>, chunk: &Chunk) -> Result<Batch, Error> {
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
            // Only the first `session_meta` is the rollout's own; later ones are copies.
            let parent = (kind == "session_meta")
                .then(|| payload.get("forked_from_id").and_then(Value::as_str))
                .flatten()
                .filter(|parent| !parent.is_empty() && *parent != id);
            if let Some(parent) = parent {
                let stamp = payload.get("timestamp").or_else(|| line.get("timestamp")).and_then(Value::as_str);
                branch.fork = Some(Fork {
                    session: format!("{SESSION_PREFIX}{parent}"),
                    at: stamp.and_then(parse_iso8601),
                    cursor: Some(0),
                    ..Fork::default()
                });
            }
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
        if let Some(copy) = copied_turn(tx, &mut branch, role, &text)? {
            // The parent's turn, copied into the fork: the branch goes on from it.
            if role == "user" {
                branch.users.push((copy.clone(), branch.parent.clone()));
            }
            branch.parent = Some(copy);
            continue;
        }
        let own = ctx.session.strip_prefix(SESSION_PREFIX).unwrap_or(&ctx.session);
        let id = format!("{own}:{number}");
        let timestamp = match line.get("timestamp") {
            Some(Value::String(stamp)) => {
                parse_iso8601(stamp).map_or_else(|| Timestamp::Text(stamp.clone()), Timestamp::Unix)
            }
            _ => Timestamp::None,
        };
        let mut metadata: Map<String, Value> =
            if role == "user" { authority::owner() } else { authority::runtime(AGENT) };
        if role == "user" {
            branch.users.push((id.clone(), branch.parent.clone()));
        }
        let mut predecessor = branch.parent.replace(id.clone());
        // Own ids are `<own id>:<line>`; any other id on the branch is the parent's.
        if predecessor.as_deref().is_some_and(|p| !p.strip_prefix(own).is_some_and(|rest| rest.starts_with(':'))) {
            let node = predecessor.take();
            link(tx, &mut branch, node, &mut metadata)?;
        } else if predecessor.is_none() {
            link(tx, &mut branch, None, &mut metadata)?;
        }
        batch.nodes.push(Message {
            id,
            predecessor,
            role: role.to_owned(),
            content: Content::Text(text),
            timestamp,
            metadata,
        });
    }
    ctx.context = serde_json::to_string(&branch).unwrap_or_default();
    Ok(batch)
}

/// The parent node id when this turn of a fork is a copy of the parent's next stored
/// turn; ends the matching for good at the first turn that is not.
fn copied_turn(tx: &Connection, branch: &mut Branch, role: &str, text: &str) -> Result<Option<String>, Error> {
    let Some(fork) = branch.fork.as_mut() else { return Ok(None) };
    let Some(cursor) = fork.cursor else { return Ok(None) };
    match next_node_in(tx, &fork.session, cursor)? {
        Some((row, node)) if node.role == role && node.content.text() == text => {
            fork.cursor = Some(row);
            fork.copied = true;
            Ok(Some(node.id))
        }
        _ => {
            fork.cursor = None;
            Ok(None)
        }
    }
}

/// Link a root of a fork to the parent: `node` when its branch hangs from a parent node,
/// else the node the fork started from (none when the copy began at the parent's start).
fn link(
    tx: &Connection,
    branch: &mut Branch,
    node: Option<String>,
    metadata: &mut Map<String, Value>,
) -> Result<(), Error> {
    let Some(fork) = branch.fork.as_mut() else { return Ok(()) };
    let node = match node {
        Some(node) => Some(node),
        None if fork.copied => None,
        None => {
            if fork.base.is_none() {
                fork.base = match fork.at {
                    Some(at) => last_node_at_in(tx, &fork.session, at)?,
                    None => None,
                };
            }
            fork.base.clone()
        }
    };
    metadata.insert(FORKED_FROM_SESSION.to_owned(), fork.session.clone().into());
    if let Some(node) = node {
        metadata.insert(FORKED_FROM_NODE.to_owned(), node.into());
    }
    Ok(())
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
