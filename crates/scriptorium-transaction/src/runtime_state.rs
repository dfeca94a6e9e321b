//! `RuntimeState`, the content of `<runtime-dir>/runtime.json` (spec 01 §1.3): written as
//! Python's `json.dumps(indent=2, ensure_ascii=False)` plus LF, keys in the reference's
//! order, `creation_order` in document order (Python dicts keep insertion order, and the
//! revision hashes these bytes, so the order must survive a load and save).
//!
//! Loading never fails: an unreadable file, or one whose members have the wrong types,
//! loads as the default state; unknown keys (such as the legacy `cursors`) are ignored
//! and dropped on the next save.

use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

/// The runtime counters and the block creation order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RuntimeState {
    /// Block id → creation rank, in document order.
    /// Invariant: ids are unique (kept by [`RuntimeState::set_rank`] and the loader).
    creation_order: Vec<(String, i64)>,
    /// Background write commits since the last global organize pass.
    pub write_commits_since_global: i64,
    /// Local batches written since the last local organize pass.
    pub local_batches: i64,
    /// Tokens written since the last local organize pass.
    pub local_tokens: i64,
    /// When the last global organize pass ran (ISO-8601), if ever.
    pub last_global_at: Option<String>,
}

impl RuntimeState {
    /// The creation order, in document order.
    pub fn creation_order(&self) -> &[(String, i64)] {
        &self.creation_order
    }

    /// The creation rank of block `id`.
    pub fn rank(&self, id: &str) -> Option<i64> {
        self.creation_order.iter().find(|(known, _)| known == id).map(|(_, rank)| *rank)
    }

    /// Set the rank of `id`, keeping its position if it is known and appending it if not
    /// (Python dict assignment).
    pub fn set_rank(&mut self, id: &str, rank: i64) {
        match self.creation_order.iter_mut().find(|(known, _)| known == id) {
            Some(slot) => slot.1 = rank,
            None => self.creation_order.push((id.to_owned(), rank)),
        }
    }

    /// The rank a new block gets: one more than the largest, or 0.
    pub fn next_rank(&self) -> i64 {
        self.creation_order.iter().map(|(_, rank)| rank.saturating_add(1)).max().unwrap_or(0)
    }

    /// Load from the bytes of `runtime.json`; never fails (see the module docs).
    pub fn parse(bytes: &[u8]) -> RuntimeState {
        let mut deserializer = serde_json::Deserializer::from_slice(bytes);
        match Raw::deserialize(&mut deserializer).and_then(|raw| deserializer.end().map(|()| raw)) {
            Ok(raw) => raw.interpret().unwrap_or_default(),
            Err(_) => RuntimeState::default(),
        }
    }

    /// The file's bytes: `json.dumps(state, indent=2, ensure_ascii=False) + "\n"`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = String::from("{\n  \"creation_order\": ");
        if self.creation_order.is_empty() {
            out.push_str("{}");
        } else {
            out.push_str("{\n");
            for (index, (id, rank)) in self.creation_order.iter().enumerate() {
                let separator = if index + 1 == self.creation_order.len() { "" } else { "," };
                out.push_str(&format!("    {}: {rank}{separator}\n", json_string(id)));
            }
            out.push_str("  }");
        }
        let last = self.last_global_at.as_deref().map_or_else(|| "null".to_owned(), json_string);
        out.push_str(&format!(
            ",\n  \"write_commits_since_global\": {},\n  \"local_batches\": {},\n  \"local_tokens\": {},\n  \"last_global_at\": {last}\n}}\n",
            self.write_commits_since_global, self.local_batches, self.local_tokens
        ));
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

/// The file as parsed, before interpretation; `creation_order` keeps document order.
#[derive(Default)]
struct Raw {
    creation_order: Option<Vec<(String, Value)>>,
    others: Vec<(String, Value)>,
}

impl Raw {
    fn member(&self, key: &str) -> Option<&Value> {
        // A repeated key: the last one wins, as in Python.
        self.others.iter().rev().find(|(known, _)| known == key).map(|(_, value)| value)
    }

    fn counter(&self, key: &str) -> Option<i64> {
        self.member(key).map_or(Some(0), integer)
    }

    fn interpret(self) -> Option<RuntimeState> {
        let mut state = RuntimeState {
            creation_order: Vec::new(),
            write_commits_since_global: self.counter("write_commits_since_global")?,
            local_batches: self.counter("local_batches")?,
            local_tokens: self.counter("local_tokens")?,
            last_global_at: self.member("last_global_at").and_then(Value::as_str).map(str::to_owned),
        };
        for (id, rank) in self.creation_order.unwrap_or_default() {
            state.set_rank(&id, integer(&rank)?);
        }
        Some(state)
    }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a runtime state object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut raw = Raw::default();
        while let Some(key) = map.next_key::<String>()? {
            if key == "creation_order" {
                raw.creation_order = Some(map.next_value::<Ordered>()?.0);
            } else if matches!(
                key.as_str(),
                "write_commits_since_global" | "local_batches" | "local_tokens" | "last_global_at"
            ) {
                raw.others.push((key, map.next_value()?));
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(raw)
    }
}

/// A JSON object's members in document order.
struct Ordered(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(OrderedVisitor)
    }
}

struct OrderedVisitor;

impl<'de> Visitor<'de> for OrderedVisitor {
    type Value = Ordered;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
        let mut members = Vec::new();
        while let Some(entry) = map.next_entry::<String, Value>()? {
            members.push(entry);
        }
        Ok(Ordered(members))
    }
}

#[cfg(test)]
mod tests;
