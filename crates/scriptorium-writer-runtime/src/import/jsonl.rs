//! Scriptorium's own line format (docs/format/session-import.md): one JSON object per
//! line with `id`, `parent`, `role`, `content`, `timestamp`, `speaker_id`,
//! `speaker_display` and `authority_tier`; one session per file, `jsonl:<file stem>`.

use rusqlite::Connection;
use serde_json::{Map, Value};

use super::authority;
use super::lines::{Batch, Chunk, FileCtx, stem};
use crate::clock::parse_iso8601;
use crate::error::Error;
use crate::records::AUTHORITY_SCHEMA_KEY;
use crate::store::{Content, Message, Timestamp};

/// The session id prefix.
pub(crate) const SESSION_PREFIX: &str = "jsonl:";

pub(crate) fn parse(_tx: &Connection, ctx: &mut FileCtx<'_>, chunk: &Chunk) -> Result<Batch, Error> {
    if ctx.session.is_empty() {
        ctx.session = format!("{SESSION_PREFIX}{}", stem(ctx.path));
    }
    let mut batch = Batch::default();
    for (number, bytes) in chunk.iter() {
        let Some(line) = ctx.object(number, bytes) else { continue };
        match node(&line) {
            Ok(node) => batch.nodes.push(node),
            Err(why) => ctx.malformed(number, why),
        }
    }
    Ok(batch)
}

/// The node of one line, or why the line is malformed.
fn node(line: &Map<String, Value>) -> Result<Message, String> {
    let text = |key: &str| -> Result<Option<String>, String> {
        match line.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) if text.is_empty() => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(format!("`{key}` is not a string")),
        }
    };
    let id = text("id")?.ok_or("`id` is missing")?;
    let role = text("role")?.ok_or("`role` is missing")?;
    let predecessor = text("parent")?;
    if predecessor.as_deref() == Some(id.as_str()) {
        return Err("the node is its own parent".to_owned());
    }
    let content = match line.get("content") {
        None | Some(Value::Null) => Content::Text(String::new()),
        Some(Value::String(text)) => Content::Text(text.clone()),
        Some(Value::Array(parts)) => Content::Parts(parts.clone()),
        Some(_) => return Err("`content` is neither a string nor a list of parts".to_owned()),
    };
    let timestamp = match line.get("timestamp") {
        None | Some(Value::Null) => Timestamp::None,
        Some(Value::Number(seconds)) => seconds.as_f64().map_or(Timestamp::None, Timestamp::Unix),
        Some(Value::String(stamp)) => {
            parse_iso8601(stamp).map_or_else(|| Timestamp::Text(stamp.clone()), Timestamp::Unix)
        }
        Some(_) => return Err("`timestamp` is neither a number nor a string".to_owned()),
    };
    let speaker_id = text("speaker_id")?;
    let speaker_display = text("speaker_display")?;
    let principal = text("principal_id")?;
    let tier = text("authority_tier")?;
    let mut metadata = Map::new();
    match (role.as_str(), tier.as_deref()) {
        (_, Some(tier)) if !matches!(tier, "owner" | "paired" | "mcp_browser") => {
            return Err(format!("`authority_tier` {tier:?} is not owner, paired or mcp_browser"));
        }
        ("user", Some("owner")) => {
            metadata = authority::owner();
            override_speaker(&mut metadata, speaker_id, speaker_display);
        }
        ("user", Some(tier)) => {
            let speaker = speaker_id.ok_or("a paired or mcp_browser speaker needs `speaker_id`")?;
            metadata.insert(AUTHORITY_SCHEMA_KEY.to_owned(), Value::from(1));
            metadata.insert("speaker_kind".to_owned(), "human".into());
            metadata.insert("principal_id".to_owned(), principal.unwrap_or_else(|| speaker.clone()).into());
            metadata.insert("speaker_display".to_owned(), speaker_display.unwrap_or_else(|| speaker.clone()).into());
            metadata.insert("speaker_id".to_owned(), speaker.into());
            metadata.insert("authority_tier".to_owned(), tier.into());
            metadata.insert("interaction".to_owned(), "interactive".into());
        }
        ("assistant", Some(tier)) => {
            let agent = speaker_display.clone().unwrap_or_else(|| "assistant".to_owned());
            metadata = authority::runtime(&agent);
            override_speaker(&mut metadata, speaker_id, speaker_display);
            metadata.insert("authority_tier".to_owned(), tier.into());
            if let Some(principal) = principal {
                metadata.insert("principal_id".to_owned(), principal.into());
            } else if tier != "owner" {
                return Err("a runtime turn under a non-owner tier needs `principal_id`".to_owned());
            }
        }
        _ => {
            // No tier: pre-authority history, the speaker fields as given (spec 02 §2.2).
            metadata.extend(speaker_id.map(|id| ("speaker_id".to_owned(), Value::String(id))));
            metadata.extend(speaker_display.map(|name| ("speaker_display".to_owned(), Value::String(name))));
        }
    }
    Ok(Message { id, predecessor, role, content, timestamp, metadata })
}

fn override_speaker(metadata: &mut Map<String, Value>, id: Option<String>, display: Option<String>) {
    if let Some(id) = id {
        metadata.insert("speaker_id".to_owned(), id.into());
    }
    if let Some(display) = display {
        metadata.insert("speaker_display".to_owned(), display.into());
    }
}
