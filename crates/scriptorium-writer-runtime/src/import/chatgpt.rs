//! A ChatGPT data export's `conversations.json`: an array of conversations
//! `{id|conversation_id, current_node, mapping{node_id: {id, parent, children,
//! message|null}}}`, each a session `chatgpt:<id>` whose nodes are the mapping's (so
//! edits and regenerations are branches) and whose head is `current_node`.
//!
//! Turns: `user` messages of content type `text`/`multimodal_text` (owner) and
//! `assistant` messages to `all` (runtime); system, hidden
//! (`is_visually_hidden_from_conversation`), reasoning and context messages, tool
//! messages and assistant messages to a tool are machinery nodes that keep the tree
//! connected. The file is read whole, again only when it changed.

use std::collections::{HashMap, HashSet};
use std::io::{BufReader, Seek, SeekFrom};
use std::path::Path;

use serde_json::{Map, Value};

use super::authority;
use super::lines::{Batch, store_batch};
use super::path_key;
use super::report::{ImportReport, ProblemCode};
use super::state::{self, FileState};
use crate::error::Error;
use crate::store::{Content, Message, SqliteStore, Timestamp};

/// The format name in `import_files`.
const FORMAT: &str = "chatgpt";

/// The agent name assistant turns speak as.
const AGENT: &str = "chatgpt";

/// The session id prefix.
pub(crate) const SESSION_PREFIX: &str = "chatgpt:";

const KIND: &str = "import_kind";

pub(crate) fn import_file(store: &SqliteStore, path: &Path, now: f64, report: &mut ImportReport) -> Result<(), Error> {
    let Some((mut file, size, mtime)) = state::open(path, report) else { return Ok(()) };
    let print = match state::fingerprint(&mut file, size) {
        Ok(print) => print,
        Err(error) => {
            state::unreadable(report, path, &error);
            return Ok(());
        }
    };
    let key = path_key(path);
    if let Some(prior) = store.transact(|tx| state::load(tx, &key, FORMAT))? {
        if prior.size == size && prior.mtime_ns == mtime && prior.fingerprint == print {
            report.files_unchanged += 1;
            return Ok(());
        }
        report.files_reread += 1;
    }
    // The fingerprint moved the position: read the whole export from its start.
    if let Err(error) = file.seek(SeekFrom::Start(0)) {
        state::unreadable(report, path, &error);
        return Ok(());
    }
    let conversations = match serde_json::from_reader::<_, Value>(BufReader::new(file)) {
        Ok(Value::Array(conversations)) => conversations,
        Ok(_) => {
            report.problem(ProblemCode::MalformedFile, path.to_path_buf(), None, "the export is not a JSON array");
            return Ok(());
        }
        Err(error) => {
            let why = if error.is_io() { "the export could not be read" } else { "the export is not valid JSON" };
            report.problem(ProblemCode::MalformedFile, path.to_path_buf(), None, why);
            return Ok(());
        }
    };
    report.lines_read += 1;
    report.bytes_read += size;
    for (index, conversation) in conversations.iter().enumerate() {
        let Some((session, batch)) = conversation_batch(conversation) else {
            report.problem(
                ProblemCode::MalformedFile,
                path.to_path_buf(),
                None,
                format!("conversation {index} has no id or no mapping object; skipped"),
            );
            continue;
        };
        let added = store.transact(|tx| store_batch(tx, &session, &batch, now))?;
        if added.nodes > 0 {
            report.sessions.insert(session);
        }
        report.nodes_added += added.nodes;
        report.turns_added += added.turns;
    }
    let done = FileState {
        session: String::new(),
        offset: size,
        line: 0,
        size,
        mtime_ns: mtime,
        fingerprint: print,
        context: String::new(),
    };
    store.transact(|tx| state::save(tx, &key, FORMAT, &done, now))
}

/// One conversation's session id and batch: nodes (parents before children) and the head.
fn conversation_batch(conversation: &Value) -> Option<(String, Batch)> {
    let id = ["conversation_id", "id"]
        .iter()
        .find_map(|key| conversation.get(*key).and_then(Value::as_str).filter(|id| !id.is_empty()))?;
    let mapping = conversation.get("mapping")?.as_object()?;
    let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut roots = Vec::new();
    for (key, node) in mapping {
        match parent_of(node).filter(|parent| mapping.contains_key(*parent) && parent != key) {
            Some(parent) => children.entry(parent).or_default().push(key),
            None => roots.push(key.as_str()),
        }
    }
    // Depth first from each root, children in the export's order; a node never reached
    // (a cycle) is added after, so nothing is lost.
    let mut order = Vec::with_capacity(mapping.len());
    let mut seen = HashSet::new();
    let mut stack: Vec<&str> = roots.into_iter().rev().collect();
    while let Some(key) = stack.pop() {
        if !seen.insert(key) {
            continue;
        }
        order.push(key);
        if let Some(kids) = children.get(key) {
            stack.extend(kids.iter().rev());
        }
    }
    order.extend(mapping.keys().map(String::as_str).filter(|key| !seen.contains(key)));
    let mut batch = Batch::default();
    for key in order {
        let Some(node) = mapping.get(key) else { continue };
        batch.nodes.push(message(key, parent_of(node).filter(|parent| *parent != key), node.get("message")));
    }
    batch.head = conversation.get("current_node").and_then(Value::as_str).map(str::to_owned);
    Some((format!("{SESSION_PREFIX}{id}"), batch))
}

fn parent_of(node: &Value) -> Option<&str> {
    node.get("parent").and_then(Value::as_str).filter(|parent| !parent.is_empty())
}

/// The node for mapping entry `key`.
fn message(key: &str, parent: Option<&str>, message: Option<&Value>) -> Message {
    let mut node = Message {
        id: key.to_owned(),
        predecessor: parent.map(str::to_owned),
        role: "system".to_owned(),
        content: Content::Text(String::new()),
        timestamp: Timestamp::None,
        metadata: Map::new(),
    };
    let Some(message) = message.filter(|message| message.is_object()) else {
        node.metadata.insert(KIND.to_owned(), "root".into());
        return node;
    };
    if let Some(seconds) = message.get("create_time").and_then(Value::as_f64) {
        node.timestamp = Timestamp::Unix(seconds);
    }
    let role = message.pointer("/author/role").and_then(Value::as_str).unwrap_or_default();
    let content_type = message.pointer("/content/content_type").and_then(Value::as_str).unwrap_or_default();
    let hidden =
        message.pointer("/metadata/is_visually_hidden_from_conversation").and_then(Value::as_bool) == Some(true);
    let recipient = message.get("recipient").and_then(Value::as_str).unwrap_or("all");
    let text = parts_text(message.get("content"));
    let (role, kind) = match (role, content_type) {
        _ if hidden => ("system", "hidden"),
        ("user", "text" | "multimodal_text") => ("user", ""),
        ("assistant", "text" | "multimodal_text") if recipient == "all" => ("assistant", ""),
        ("assistant", _) => ("tool", "tool_call"),
        ("tool", _) => ("tool", "tool_result"),
        ("system", _) => ("system", "system"),
        _ => ("system", "other"),
    };
    node.role = role.to_owned();
    match role {
        "user" => {
            node.metadata = authority::owner();
            node.content = Content::Text(text);
        }
        "assistant" => {
            node.metadata = authority::runtime(AGENT);
            if let Some(model) = message.pointer("/metadata/model_slug").and_then(Value::as_str) {
                node.metadata.insert("model".to_owned(), model.into());
            }
            node.content = Content::Text(text);
        }
        _ => {
            node.metadata.insert(KIND.to_owned(), kind.into());
            if !content_type.is_empty() {
                node.metadata.insert("content_type".to_owned(), content_type.into());
            }
        }
    }
    node
}

/// The string parts of a message's content (or its `text`), joined by LF; image
/// pointers and other non-string parts carry no text.
fn parts_text(content: Option<&Value>) -> String {
    let text = match content.and_then(|content| content.get("parts")) {
        Some(Value::Array(parts)) => {
            parts.iter().filter_map(Value::as_str).filter(|part| !part.is_empty()).collect::<Vec<_>>().join("\n")
        }
        _ => content.and_then(|content| content.get("text")).and_then(Value::as_str).unwrap_or_default().to_owned(),
    };
    if text.contains('\r') { text.replace("\r\n", "\n").replace('\r', "\n") } else { text }
}
