//! The journal manifest: one entry per changed file with its path, the SHA-256 of the
//! bytes it replaces (or none for a new file) and of the bytes it installs (or none for a
//! delete). Entry `k` with new bytes has its staged copy `<k>.staged` beside it (named
//! as `layout.rs` says).

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// The format tag of a manifest; a manifest with another tag is not ours to apply.
const FORMAT: &str = "scriptorium-txn-v1";

/// A SHA-256 digest.
pub(crate) type Hash = [u8; 32];

/// The SHA-256 of `bytes`.
pub(crate) fn sha256(bytes: &[u8]) -> Hash {
    Sha256::digest(bytes).into()
}

/// One changed file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Workspace-relative, `/`-separated, validated before staging.
    pub(crate) path: String,
    /// The digest of the bytes before the transaction; `None` when there was no file.
    pub(crate) old: Option<Hash>,
    /// The digest of the bytes installed; `None` for a delete.
    pub(crate) new: Option<Hash>,
}

/// The staged copy of entry `index`.
pub(crate) fn staged_name(index: usize) -> String {
    format!("{index}.staged")
}

/// Every entry of one transaction, in path order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Manifest {
    pub(crate) entries: Vec<Entry>,
}

fn hex(hash: &Hash) -> String {
    hash.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn unhex(text: &str) -> Option<Hash> {
    let mut out = [0u8; 32];
    if text.len() != 64 {
        return None;
    }
    for (slot, pair) in out.iter_mut().zip(text.as_bytes().chunks(2)) {
        let pair = std::str::from_utf8(pair).ok()?;
        *slot = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(out)
}

fn optional_hash(value: Option<&Value>) -> Option<Option<Hash>> {
    match value? {
        Value::Null => Some(None),
        Value::String(text) => unhex(text).map(Some),
        _ => None,
    }
}

impl Manifest {
    /// Whether an entry deletes a file.
    pub(crate) fn has_delete(&self) -> bool {
        self.entries.iter().any(|entry| entry.new.is_none())
    }

    /// The manifest as JSON, one line.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let entries: Vec<Value> = self
            .entries
            .iter()
            .map(|entry| json!({"path": entry.path, "old": entry.old.as_ref().map(hex), "new": entry.new.as_ref().map(hex)}))
            .collect();
        let mut bytes = json!({"format": FORMAT, "entries": entries}).to_string().into_bytes();
        bytes.push(b'\n');
        bytes
    }

    /// Read a manifest; `None` when it is not one of ours or is damaged.
    pub(crate) fn parse(bytes: &[u8]) -> Option<Manifest> {
        let value: Map<String, Value> = serde_json::from_slice(bytes).ok()?;
        if value.get("format")?.as_str()? != FORMAT {
            return None;
        }
        let entries = value
            .get("entries")?
            .as_array()?
            .iter()
            .map(|entry| {
                let entry = entry.as_object()?;
                Some(Entry {
                    path: entry.get("path")?.as_str()?.to_owned(),
                    old: optional_hash(entry.get("old"))?,
                    new: optional_hash(entry.get("new"))?,
                })
            })
            .collect::<Option<Vec<Entry>>>()?;
        Some(Manifest { entries })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_round_trips_and_rejects_damage() {
        let manifest = Manifest {
            entries: vec![
                Entry { path: "topics/a.md".into(), old: None, new: Some(sha256(b"a")) },
                Entry { path: "topics/b.md".into(), old: Some(sha256(b"b")), new: None },
            ],
        };
        let bytes = manifest.to_bytes();
        assert_eq!(Manifest::parse(&bytes), Some(manifest));
        assert_eq!(Manifest::parse(bytes.get(..bytes.len() / 2).expect("half")), None);
        assert_eq!(Manifest::parse(br#"{"format":"other","entries":[]}"#), None);
        assert_eq!(
            Manifest::parse(br#"{"format":"scriptorium-txn-v1","entries":[{"path":"x","old":"zz","new":null}]}"#),
            None
        );
    }
}
