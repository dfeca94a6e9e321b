//! The authority an importer gives a turn (spec 02 §5): the person at the terminal that
//! wrote the transcript is the local owner; the agent's replies carry runtime authority
//! under the owner's tier (never wider), non-interactive. No importer invents any other
//! speaker.

use scriptorium_archive_format::quote_path_component;
use serde_json::{Map, Value, json};

use crate::records::AUTHORITY_SCHEMA_KEY;

/// The owner's principal and stable speaker id (as the backend's local owner).
const OWNER_PRINCIPAL: &str = "owner";
const OWNER_SPEAKER: &str = "owner/local";

/// The authority fields of the local owner speaking at an interactive surface.
pub(crate) fn owner() -> Map<String, Value> {
    fields(json!({
        "speaker_kind": "owner",
        "speaker_id": OWNER_SPEAKER,
        "speaker_display": "owner",
        "principal_id": OWNER_PRINCIPAL,
        "authority_tier": "owner",
        "interaction": "interactive",
    }))
}

/// The authority fields of agent `agent` replying to the owner: speaker id
/// `runtime/<percent-encoded "agent/<agent>">` (spec 02 §2.2).
pub(crate) fn runtime(agent: &str) -> Map<String, Value> {
    fields(json!({
        "speaker_kind": "runtime",
        "speaker_id": format!("runtime/{}", quote_path_component(&format!("agent/{agent}"))),
        "speaker_display": agent,
        "principal_id": OWNER_PRINCIPAL,
        "authority_tier": "owner",
        "interaction": "non-interactive",
    }))
}

fn fields(value: Value) -> Map<String, Value> {
    let mut map = match value {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    map.insert(AUTHORITY_SCHEMA_KEY.to_owned(), Value::from(1));
    map
}
