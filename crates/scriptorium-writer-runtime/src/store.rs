//! What memory needs from the session store (spec 02 §2.1): the [`SessionStore`] trait,
//! the plain data it returns, and the durable SQLite implementation in `sqlite.rs`.
//!
//! Memory only reads conversations and merges node metadata; the importers and the HTTP
//! API (later issues) fill the store through [`SqliteStore::append`].

mod sqlite;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::Error;

pub use self::sqlite::{APPLICATION_ID, SCHEMA_VERSION, SESSIONS_FILE, SqliteStore};
pub(crate) use self::sqlite::{
    append_in, last_node_at_in, next_node_in, node_in, set_content_in, set_head_in, sql_error,
};

/// A node's content: text, or a list of parts (`{"type":"text","text":…}` and others),
/// or any other JSON value the producer stored.
#[derive(Clone, Debug, PartialEq)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// A list of content parts.
    Parts(Vec<Value>),
    /// Anything else (null, a number, an object): no text for memory.
    Other(Value),
}

impl Content {
    /// The text memory reads (spec 02 §2.2 step 3): the string itself, or the `text` of
    /// every `{"type":"text"}` part joined by LF (empty parts skipped); else empty.
    pub fn text(&self) -> String {
        match self {
            Content::Text(text) => text.clone(),
            Content::Parts(parts) => parts
                .iter()
                .filter(|part| part.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .filter(|text| !text.is_empty())
                .collect::<Vec<_>>()
                .join("\n"),
            Content::Other(_) => String::new(),
        }
    }
}

/// A node's timestamp as stored: Unix seconds, or a producer's string passed through.
#[derive(Clone, Debug, PartialEq)]
pub enum Timestamp {
    /// Unix seconds.
    Unix(f64),
    /// A non-numeric stamp, kept as given.
    Text(String),
    /// No stamp.
    None,
}

/// One visible node of a session, with its metadata (the marker, authority fields,
/// `display`, `source`, …) as the session store holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    /// The node id, unique within its session.
    pub id: String,
    /// The id of the node before it, if any.
    pub predecessor: Option<String>,
    /// `user`, `assistant`, `tool`, …
    pub role: String,
    /// The content.
    pub content: Content,
    /// When it was said.
    pub timestamp: Timestamp,
    /// Free-form metadata; the reference flattens these keys onto the message.
    pub metadata: Map<String, Value>,
}

impl Message {
    /// A text message with no predecessor, no timestamp and no metadata.
    pub fn text(id: impl Into<String>, role: impl Into<String>, text: impl Into<String>) -> Self {
        Message {
            id: id.into(),
            predecessor: None,
            role: role.into(),
            content: Content::Text(text.into()),
            timestamp: Timestamp::None,
            metadata: Map::new(),
        }
    }

    /// A metadata string field, if present and a string.
    pub fn field(&self, key: &str) -> Option<&str> {
        self.metadata.get(key).and_then(Value::as_str)
    }
}

/// A session's summary.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionInfo {
    /// The session id.
    pub id: String,
    /// The current head node, if the session has nodes.
    pub head_id: Option<String>,
    /// When the session last changed by an append (Unix seconds); markers never move it.
    pub updated_at: f64,
    /// Whether the session is archived.
    pub archived: bool,
}

/// A branch tip of a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchTip {
    /// The node that ends the branch.
    pub head_msg_id: String,
    /// Whether the branch was archived (abandoned) by the user.
    pub archived: bool,
}

/// Metadata patches per node id, merged key by key (a `null` value removes the key).
pub type MetadataPatches = BTreeMap<String, Map<String, Value>>;

/// The operations memory needs from a session store, exactly those of spec 02 §2.1.
pub trait SessionStore: Send + Sync {
    /// The path root → `head` (default: the session head) by predecessor edges, without
    /// rewound nodes and the root node. Empty for an unknown session or head.
    fn get_branch(&self, session_id: &str, head_id: Option<&str>) -> Result<Vec<Message>, Error>;

    /// The session, if it exists.
    fn get_session(&self, session_id: &str) -> Result<Option<SessionInfo>, Error>;

    /// The session's branch tips (live and archived).
    fn list_branches(&self, session_id: &str) -> Result<Vec<BranchTip>, Error>;

    /// Every visible node of the session, in insertion order.
    fn get_messages(&self, session_id: &str) -> Result<Vec<Message>, Error>;

    /// Sessions ordered by id, `limit` from `offset`, archived ones only when asked.
    fn list_sessions(&self, limit: usize, offset: usize, include_archived: bool) -> Result<Vec<SessionInfo>, Error>;

    /// Merge `patches` into the nodes' metadata in one transaction. Never changes the
    /// session's `updated_at`; ids the session does not hold are skipped.
    fn merge_node_metadata_batch(&self, session_id: &str, patches: &MetadataPatches) -> Result<(), Error>;

    /// The node ids of the part of [`get_branch`](SessionStore::get_branch) after its
    /// newest node whose metadata `marker_key` equals `marker` (all of it when none is
    /// marked), oldest first. Not one of the spec's operations but derived from
    /// `get_branch` (this default), so any store has it; a store may answer it by walking
    /// back from the head over ids, predecessors and markers only and stopping at the
    /// mark, which is what makes the per-turn pass cheap on long sessions: the pass then
    /// loads only the nodes its batch needs ([`get_nodes`](SessionStore::get_nodes)).
    fn get_unmarked_suffix_ids(
        &self,
        session_id: &str,
        head_id: Option<&str>,
        marker_key: &str,
        marker: &str,
    ) -> Result<Vec<String>, Error> {
        let rows = self.get_branch(session_id, head_id)?;
        let start = rows.iter().rposition(|row| row.field(marker_key) == Some(marker)).map_or(0, |index| index + 1);
        Ok(rows.into_iter().skip(start).map(|row| row.id).collect())
    }

    /// The nodes of [`get_unmarked_suffix_ids`](SessionStore::get_unmarked_suffix_ids).
    fn get_unmarked_suffix(
        &self,
        session_id: &str,
        head_id: Option<&str>,
        marker_key: &str,
        marker: &str,
    ) -> Result<Vec<Message>, Error> {
        let ids = self.get_unmarked_suffix_ids(session_id, head_id, marker_key, marker)?;
        self.get_nodes(session_id, &ids)
    }

    /// The visible nodes of the session among `ids`, in the order of `ids`, each once;
    /// ids the session does not hold (or holds rewound) are skipped. Derived from
    /// [`get_messages`](SessionStore::get_messages) by default.
    fn get_nodes(&self, session_id: &str, ids: &[String]) -> Result<Vec<Message>, Error> {
        let mut by_id: std::collections::HashMap<String, Message> =
            self.get_messages(session_id)?.into_iter().map(|row| (row.id.clone(), row)).collect();
        Ok(ids.iter().filter_map(|id| by_id.remove(id)).collect())
    }
}
