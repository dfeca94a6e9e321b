//! Claude Code session files (`~/.claude/projects/<project>/<session>.jsonl`), one
//! session per file, named `claude-code:<file stem>`.
//!
//! Every line with a `uuid` becomes a node with predecessor `parentUuid` (or, at a
//! compaction root, `logicalParentUuid`), so edits and rewinds are branches and
//! compactions stay linked; a parent missing from the file leaves the node a root until
//! it arrives. Sidechain lines (subagents) are skipped. Turns: a user line that a person
//! typed (not meta, not a compact summary, no `tool_result`, not only command or
//! reminder envelopes, not an interrupt notice) is an owner turn; the lines of one
//! assistant API message (same `message.id`, chained by parent) are one runtime turn,
//! node id = the first line's `uuid`, text = their text blocks joined by a blank line.
//! Everything else is machinery (`tool` or `system` nodes, kind in `import_kind`).
//!
//! The session head is the last node line, unless a `last-prompt` line after it names a
//! `leafUuid` the file holds (newer CLIs write it; after `/rewind` it can name an older
//! branch): then that leaf.

use std::collections::HashMap;

use rusqlite::Connection;
use serde_json::{Map, Value};

use super::authority;
use super::lines::{Batch, Chunk, FileCtx, stem};
use crate::clock::parse_iso8601;
use crate::error::Error;
use crate::store::{Content, Message, Timestamp, node_in};

/// The agent name assistant turns speak as.
const AGENT: &str = "claude-code";

/// The session id prefix.
pub(crate) const SESSION_PREFIX: &str = "claude-code:";

/// Metadata keys of the nodes this importer writes.
const KIND: &str = "import_kind";
const MESSAGE_ID: &str = "message_id";
const TURN: &str = "turn";

/// Envelope elements Claude Code wraps around commands and injected context; a user line
/// made only of these is machinery.
const ENVELOPES: &[&str] = &[
    "command-name",
    "command-message",
    "command-args",
    "command-contents",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "system-reminder",
    "task-notification",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "user-prompt-submit-hook",
];

/// One assistant message's lines within a chunk.
struct Group {
    head: String,
    /// The head's index in the batch when the head is new to the store.
    index: Option<usize>,
    /// The head's stored text when it was stored before.
    base: Option<String>,
    /// Texts of lines new to the store, in file order.
    texts: Vec<String>,
}

pub(crate) fn parse(tx: &Connection, ctx: &mut FileCtx<'_>, chunk: &Chunk) -> Result<Batch, Error> {
    if ctx.session.is_empty() {
        ctx.session = format!("{SESSION_PREFIX}{}", stem(ctx.path));
    }
    let session = ctx.session.clone();
    let mut batch = Batch::default();
    let mut groups: HashMap<String, Group> = HashMap::new();
    // Line uuid → its assistant message id, for the lines of this chunk.
    let mut message_of: HashMap<String, Option<String>> = HashMap::new();
    // The active leaf a `last-prompt` line of this chunk named, while no node line has
    // followed it. A marker of an earlier chunk needs no memory: it already set the head,
    // and only a new node moves the head again.
    let mut leaf: Option<String> = None;
    for (number, bytes) in chunk.iter() {
        let Some(line) = ctx.object(number, bytes) else { continue };
        if line.get("type").and_then(Value::as_str) == Some("last-prompt") {
            // Only a leaf the file holds counts; an unknown one leaves the rule as it was.
            if let Some(named) = text_field(&line, "leafUuid")
                && (message_of.contains_key(&named) || node_in(tx, &session, &named)?.is_some())
            {
                leaf = Some(named);
            }
            continue;
        }
        let Some(uuid) = text_field(&line, "uuid") else { continue };
        if message_of.contains_key(&uuid) {
            // A line written twice: the first one counts (as a stored node would).
            continue;
        }
        if line.get("isSidechain").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        let predecessor = text_field(&line, "parentUuid").or_else(|| text_field(&line, "logicalParentUuid"));
        if predecessor.as_deref() == Some(uuid.as_str()) {
            ctx.malformed(number, "the line is its own parent");
            continue;
        }
        let timestamp = match line.get("timestamp") {
            Some(Value::String(stamp)) => {
                parse_iso8601(stamp).map_or_else(|| Timestamp::Text(stamp.clone()), Timestamp::Unix)
            }
            Some(Value::Number(seconds)) => seconds.as_f64().map_or(Timestamp::None, Timestamp::Unix),
            _ => Timestamp::None,
        };
        let message = line.get("message").and_then(Value::as_object);
        let kind = line.get("type").and_then(Value::as_str).unwrap_or_default();
        let mut node = Message {
            id: uuid.clone(),
            predecessor: predecessor.clone(),
            role: "system".to_owned(),
            content: Content::Text(String::new()),
            timestamp,
            metadata: Map::new(),
        };
        let mut message_id = None;
        match kind {
            "user" => {
                let content = message.and_then(|message| message.get("content"));
                match user_kind(&line, content) {
                    Ok(text) => {
                        node.role = "user".to_owned();
                        node.content = Content::Text(text);
                        node.metadata = authority::owner();
                    }
                    Err((role, kind, text)) => {
                        node.role = role.to_owned();
                        node.content = Content::Text(text);
                        node.metadata.insert(KIND.to_owned(), kind.into());
                    }
                }
            }
            "assistant" => {
                let content = message.and_then(|message| message.get("content"));
                let text = block_text(content, "\n");
                let model = message.and_then(|message| message.get("model")).and_then(Value::as_str);
                if model == Some("<synthetic>") {
                    // Client-made lines such as "No response requested.": no reply.
                    node.metadata.insert(KIND.to_owned(), "synthetic".into());
                    node.content = Content::Text(text);
                } else {
                    let id = message.and_then(|message| text_field(message, "id")).unwrap_or_else(|| uuid.clone());
                    message_id = Some(id.clone());
                    let stored = node_in(tx, &session, &uuid)?;
                    let group = match groups.get(&id) {
                        Some(_) => None,
                        None => continuation(tx, &session, &id, predecessor.as_deref(), &message_of)?,
                    };
                    if let Some(group) = group {
                        groups.insert(id.clone(), group);
                    }
                    match groups.get_mut(&id) {
                        Some(group) => {
                            node.role = "tool".to_owned();
                            node.metadata.insert(KIND.to_owned(), "continuation".into());
                            node.metadata.insert(TURN.to_owned(), group.head.clone().into());
                            if stored.is_none() {
                                group.texts.push(text);
                            }
                        }
                        None => {
                            node.role = "assistant".to_owned();
                            node.metadata = authority::runtime(AGENT);
                            if let Some(model) = model {
                                node.metadata.insert("model".to_owned(), model.into());
                            }
                            let (index, base, texts) = match stored {
                                Some(stored) => (None, Some(stored.content.text()), Vec::new()),
                                None => (Some(batch.nodes.len()), None, vec![text]),
                            };
                            groups.insert(id.clone(), Group { head: uuid.clone(), index, base, texts });
                        }
                    }
                    node.metadata.insert(MESSAGE_ID.to_owned(), id.into());
                }
            }
            "system" => {
                let subtype = line.get("subtype").and_then(Value::as_str).unwrap_or("system");
                node.metadata.insert(KIND.to_owned(), subtype.into());
                node.content =
                    Content::Text(line.get("content").and_then(Value::as_str).unwrap_or_default().to_owned());
            }
            other => {
                node.metadata.insert(KIND.to_owned(), if other.is_empty() { "unknown" } else { other }.into());
            }
        }
        // A new node written after the marker is newer activity: its branch is the active
        // one. (A line stored before, read again, is not; checked only while a marker holds.)
        if leaf.is_some() && node_in(tx, &session, &uuid)?.is_none() {
            leaf = None;
        }
        message_of.insert(uuid, message_id);
        batch.nodes.push(node);
    }
    batch.head = leaf;
    for group in groups.into_values() {
        match (group.index, group.base) {
            (Some(index), _) => {
                if let Some(node) = batch.nodes.get_mut(index) {
                    node.content = Content::Text(join(group.texts));
                }
            }
            (None, Some(base)) if group.texts.iter().any(|text| !text.trim().is_empty()) => {
                let mut texts = vec![base];
                texts.extend(group.texts);
                batch.updates.push((group.head, Content::Text(join(texts))));
            }
            (None, _) => {}
        }
    }
    Ok(batch)
}

/// The group an assistant line of message `id` continues when its parent is a line of
/// the same message stored by an earlier run: the head's id and stored text.
fn continuation(
    tx: &Connection,
    session: &str,
    id: &str,
    parent: Option<&str>,
    message_of: &HashMap<String, Option<String>>,
) -> Result<Option<Group>, Error> {
    let Some(parent) = parent else { return Ok(None) };
    if message_of.contains_key(parent) {
        // The parent is in this chunk and not of this message.
        return Ok(None);
    }
    let Some(parent) = node_in(tx, session, parent)? else { return Ok(None) };
    if parent.field(MESSAGE_ID) != Some(id) {
        return Ok(None);
    }
    let head = parent.field(TURN).unwrap_or(parent.id.as_str()).to_owned();
    let base = match node_in(tx, session, &head)? {
        Some(stored) => stored.content.text(),
        None => String::new(),
    };
    Ok(Some(Group { head, index: None, base: Some(base), texts: Vec::new() }))
}

/// A user line's turn text, or why it is machinery: `(role, import_kind, text)`.
fn user_kind(
    line: &Map<String, Value>,
    content: Option<&Value>,
) -> Result<String, (&'static str, &'static str, String)> {
    let flag = |key: &str| line.get(key).and_then(Value::as_bool) == Some(true);
    let has_tool_result = content
        .and_then(Value::as_array)
        .is_some_and(|blocks| blocks.iter().any(|block| block_type(block) == Some("tool_result")));
    if has_tool_result {
        return Err(("tool", "tool_result", String::new()));
    }
    let text = normalize(&block_text(content, "\n"));
    if flag("isCompactSummary") {
        return Err(("system", "compact_summary", text));
    }
    if flag("isMeta") {
        return Err(("system", "meta", text));
    }
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(("system", "empty", text));
    }
    if trimmed.starts_with("[Request interrupted by user") {
        return Err(("system", "interrupt", text));
    }
    if trimmed.starts_with("Caveat: The messages below were generated by the user while running local commands") {
        return Err(("system", "meta", text));
    }
    if only_envelopes(trimmed) {
        return Err(("system", "command", text));
    }
    Ok(text)
}

/// Whether `text` is nothing but [`ENVELOPES`] elements and whitespace.
fn only_envelopes(text: &str) -> bool {
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let Some(tag) = ENVELOPES.iter().find(|tag| {
            rest.strip_prefix('<').and_then(|r| r.strip_prefix(**tag)).is_some_and(|r| r.starts_with(['>', ' ', '/']))
        }) else {
            return false;
        };
        let close = format!("</{tag}>");
        match rest.find(&close) {
            Some(at) => rest = rest.get(at + close.len()..).unwrap_or_default().trim_start(),
            None => match rest.find("/>") {
                Some(at) if rest.get(..at).is_some_and(|open| !open.contains('>')) => {
                    rest = rest.get(at + 2..).unwrap_or_default().trim_start();
                }
                _ => return false,
            },
        }
    }
    true
}

/// The text of a message `content`: the string itself, or its `text` blocks joined by
/// `separator` (thinking, tool and image blocks carry no turn text).
fn block_text(content: Option<&Value>, separator: &str) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|block| block_type(block) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join(separator),
        _ => String::new(),
    }
}

fn block_type(block: &Value) -> Option<&str> {
    block.get("type").and_then(Value::as_str)
}

/// The non-blank texts of one reply, a blank line between them, line ends as LF.
/// Each text is normalized before the join, so a CR ending one piece never merges with
/// the separator: a reply joined in one run equals the same reply joined across runs.
fn join(texts: Vec<String>) -> String {
    texts.iter().filter(|text| !text.trim().is_empty()).map(|text| normalize(text)).collect::<Vec<_>>().join("\n\n")
}

/// CRLF (and a lone CR) as LF: turn text is compared and archived line by line.
fn normalize(text: &str) -> String {
    if text.contains('\r') { text.replace("\r\n", "\n").replace('\r', "\n") } else { text.to_owned() }
}

fn text_field(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key).and_then(Value::as_str).filter(|text| !text.is_empty()).map(str::to_owned)
}
