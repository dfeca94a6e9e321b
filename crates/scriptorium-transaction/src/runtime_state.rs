//! `RuntimeState`, the content of `<runtime-dir>/runtime.json` (spec 01 §1.3): written as
//! Python's `json.dumps(indent=2, ensure_ascii=False)` plus LF, keys in the reference's
//! order.
//!
//! `creation_order` is written by rank (then id). Python writes it in insertion order,
//! which is rank order for every file the reference writes (ids are seeded in parse
//! order and each new one gets the next rank), so the bytes match; for a hand-edited file
//! out of rank order this is our canonical form (decision Q8).
//!
//! Loading never fails: an unreadable file, or one whose members have the wrong types,
//! loads as the default state; unknown keys (such as the legacy `cursors`) are ignored
//! and dropped on the next save; a repeated key keeps its last value, as in Python.
//!
//! One key is this project's own: `written_batch`, the node ids of the batch the last
//! writer transaction installed and that are not yet marked in the session store
//! (docs/durability.md, "Exactly-once writing"). It is written only while set, so a state
//! without it has the reference's bytes, and the reference ignores it on load.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// The runtime counters and the block creation order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RuntimeState {
    /// Block id → creation rank.
    creation_order: BTreeMap<String, i64>,
    /// Background write commits since the last global organize pass.
    pub write_commits_since_global: i64,
    /// Local batches written since the last local organize pass.
    pub local_batches: i64,
    /// Tokens written since the last local organize pass.
    pub local_tokens: i64,
    /// When the last global organize pass ran (ISO-8601), if ever.
    pub last_global_at: Option<String>,
    /// The batch the last writer transaction installed whose marking is not yet known to
    /// be done; the writer runtime sets it inside that transaction and clears it after
    /// marking.
    pub written_batch: Option<WrittenBatch>,
}

/// The node ids of one installed writer batch, recorded in `runtime.json` by the same
/// install that changed memory, so a crash before the marking can be finished without a
/// second model call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WrittenBatch {
    /// The session the batch came from.
    pub session_id: String,
    /// The node ids to mark, oldest first.
    pub node_ids: Vec<String>,
    /// The batch's trusted tokens, added to `local_tokens` when the marking completes.
    pub tokens: i64,
}

impl WrittenBatch {
    /// A batch record for `session_id` and `node_ids`.
    pub fn new(session_id: impl Into<String>, node_ids: Vec<String>, tokens: i64) -> Self {
        WrittenBatch { session_id: session_id.into(), node_ids, tokens }
    }
}

impl RuntimeState {
    /// The creation order by rank, then id (the order it is written in).
    pub fn creation_order(&self) -> Vec<(&str, i64)> {
        let mut order: Vec<(&str, i64)> = self.creation_order.iter().map(|(id, rank)| (id.as_str(), *rank)).collect();
        order.sort_by_key(|&(id, rank)| (rank, id));
        order
    }

    /// The creation rank of block `id`.
    pub fn rank(&self, id: &str) -> Option<i64> {
        self.creation_order.get(id).copied()
    }

    /// Set the rank of `id`.
    pub fn set_rank(&mut self, id: &str, rank: i64) {
        self.creation_order.insert(id.to_owned(), rank);
    }

    /// Whether `other` gives every block the same rank as this state does (the counters
    /// and the batch record may differ).
    pub fn same_creation_order(&self, other: &RuntimeState) -> bool {
        self.creation_order == other.creation_order
    }

    /// Whether any block has a rank yet.
    pub fn has_creation_order(&self) -> bool {
        !self.creation_order.is_empty()
    }

    /// The rank a new block gets: one more than the largest, or 0.
    pub fn next_rank(&self) -> i64 {
        self.creation_order.values().map(|rank| rank.saturating_add(1)).max().unwrap_or(0)
    }

    /// Give every id in `ids` without a rank the next one, in the given order (an id
    /// listed twice is ranked once); returns how many ranks it gave. The next rank is
    /// computed once and counted up: asking for it per id scans every rank, which is
    /// quadratic on a first build of a large workspace.
    pub fn assign_ranks<'a>(&mut self, ids: impl IntoIterator<Item = &'a str>) -> usize {
        let mut next = None;
        let mut given = 0;
        for id in ids {
            if !self.creation_order.contains_key(id) {
                let rank = *next.get_or_insert_with(|| self.next_rank());
                self.creation_order.insert(id.to_owned(), rank);
                next = Some(rank.saturating_add(1));
                given += 1;
            }
        }
        given
    }

    /// The state `committed` (the committed `runtime.json`, if any) holds with its
    /// creation order seeded from the committed tree's ids (`committed_ids`, in parse
    /// order) when it has none yet (spec 02 §4.3, "seed creation order (if none yet) from
    /// the baseline"), as file bytes; `None` when there is nothing to seed.
    ///
    /// Without the seed the derive step would rank the staged tree in parse order, so a
    /// record this transaction creates in an early file would rank older than every
    /// committed one.
    pub fn seeded<'a>(committed: Option<&[u8]>, committed_ids: impl IntoIterator<Item = &'a str>) -> Option<Vec<u8>> {
        let mut state = committed.map(RuntimeState::parse).unwrap_or_default();
        if state.has_creation_order() || state.assign_ranks(committed_ids) == 0 {
            return None;
        }
        Some(state.to_bytes())
    }

    /// Load from the bytes of `runtime.json`; never fails (see the module docs).
    pub fn parse(bytes: &[u8]) -> RuntimeState {
        match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(members)) => interpret(&members).unwrap_or_default(),
            _ => RuntimeState::default(),
        }
    }

    /// The file's bytes: `json.dumps(state, indent=2, ensure_ascii=False) + "\n"`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = String::from("{\n  \"creation_order\": ");
        let order = self.creation_order();
        if order.is_empty() {
            out.push_str("{}");
        } else {
            out.push_str("{\n");
            for (index, (id, rank)) in order.iter().enumerate() {
                let separator = if index + 1 == order.len() { "" } else { "," };
                out.push_str(&format!("    {}: {rank}{separator}\n", json_string(id)));
            }
            out.push_str("  }");
        }
        let last = self.last_global_at.as_deref().map_or_else(|| "null".to_owned(), json_string);
        out.push_str(&format!(
            ",\n  \"write_commits_since_global\": {},\n  \"local_batches\": {},\n  \"local_tokens\": {},\n  \"last_global_at\": {last}",
            self.write_commits_since_global, self.local_batches, self.local_tokens
        ));
        if let Some(batch) = &self.written_batch {
            out.push_str(&format!(
                ",\n  \"written_batch\": {{\n    \"session_id\": {},\n    \"node_ids\": ",
                json_string(&batch.session_id)
            ));
            if batch.node_ids.is_empty() {
                out.push_str("[]");
            } else {
                let ids: Vec<String> = batch.node_ids.iter().map(|id| format!("      {}", json_string(id))).collect();
                out.push_str(&format!("[\n{}\n    ]", ids.join(",\n")));
            }
            out.push_str(&format!(",\n    \"tokens\": {}\n  }}", batch.tokens));
        }
        out.push_str("\n}\n");
        out.into_bytes()
    }
}

/// A JSON string literal as Python writes it with `ensure_ascii=False`: the same escapes
/// as serde_json (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`, other controls as `\u00xx`).
fn json_string(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// An integer as Python's `int()` would accept it from JSON (an integral float too).
fn integer(value: &Value) -> Option<i64> {
    value.as_i64().or_else(|| value.as_f64().filter(|float| float.fract() == 0.0).map(|float| float as i64))
}

/// A counter member: missing is 0, anything but an integer makes the file unreadable.
fn counter(members: &Map<String, Value>, key: &str) -> Option<i64> {
    members.get(key).map_or(Some(0), integer)
}

fn interpret(members: &Map<String, Value>) -> Option<RuntimeState> {
    let creation_order = match members.get("creation_order") {
        None => BTreeMap::new(),
        Some(Value::Object(order)) => {
            order.iter().map(|(id, rank)| Some((id.clone(), integer(rank)?))).collect::<Option<_>>()?
        }
        Some(_) => return None,
    };
    Some(RuntimeState {
        creation_order,
        write_commits_since_global: counter(members, "write_commits_since_global")?,
        local_batches: counter(members, "local_batches")?,
        local_tokens: counter(members, "local_tokens")?,
        // An old float timestamp is not an error, only unset.
        last_global_at: members.get("last_global_at").and_then(Value::as_str).map(str::to_owned),
        written_batch: members.get("written_batch").and_then(written_batch),
    })
}

/// A `written_batch` member; a malformed one reads as absent (nothing owed is known).
fn written_batch(value: &Value) -> Option<WrittenBatch> {
    let session_id = value.get("session_id")?.as_str()?.to_owned();
    let node_ids =
        value.get("node_ids")?.as_array()?.iter().map(|id| id.as_str().map(str::to_owned)).collect::<Option<_>>()?;
    let tokens = integer(value.get("tokens")?)?;
    Some(WrittenBatch { session_id, node_ids, tokens })
}

#[cfg(test)]
mod tests;
