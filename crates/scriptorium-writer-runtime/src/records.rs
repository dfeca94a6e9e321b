//! Turn → source record (spec 02 §2.2): which session nodes are records, with what
//! authority and speaker, and their o200k token counts (§2.3, decision Q3).

use std::cell::OnceCell;

use scriptorium_archive_format::{SourceRecord, TrustState};
use scriptorium_derived_views::count_o200k;

use crate::clock::{iso8601, parse_iso8601};
use crate::store::{Message, Timestamp};

/// The provider of every conversation record.
pub const PROVIDER: &str = "openprogram";

/// The metadata key that stamps a node as written under the authority schema.
pub const AUTHORITY_SCHEMA_KEY: &str = "authority_schema";

/// The authority fields of a node, all non-empty strings when present.
const AUTHORITY_FIELDS: [&str; 6] =
    ["speaker_kind", "speaker_id", "speaker_display", "principal_id", "authority_tier", "interaction"];

/// Tiers that hold `memory.source.append` (spec 02 §5); `mcp_browser` does not.
const APPENDING_TIERS: [&str; 2] = ["owner", "paired"];

/// Every tier the authority model knows.
const KNOWN_TIERS: [&str; 3] = ["owner", "paired", "mcp_browser"];

/// One conversation record with what the runtime needs besides the archive fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The archive record (provider `openprogram`, thread = session, message = node id).
    pub source: SourceRecord,
    /// What the writer sees as "speaker" (spec 01 §4).
    pub speaker: String,
    /// o200k tokens of the content, counted on first use: a pass needs them only for
    /// the records of its first batch.
    tokens: OnceCell<usize>,
    /// The node's time in Unix seconds, if it has a readable one.
    pub epoch: Option<f64>,
}

impl Record {
    /// A record of `source` with its speaker label and epoch; tokens are counted lazily.
    pub fn new(source: SourceRecord, epoch: Option<f64>) -> Self {
        let speaker = source.speaker_label();
        Record { source, speaker, tokens: OnceCell::new(), epoch }
    }

    /// A record whose token count is already known (tests, imports that cache counts).
    pub fn with_tokens(source: SourceRecord, epoch: Option<f64>, tokens: usize) -> Self {
        let record = Record::new(source, epoch);
        let _ = record.tokens.set(tokens);
        record
    }

    /// o200k tokens of the content (plain text, decision Q3).
    pub fn tokens(&self) -> usize {
        *self.tokens.get_or_init(|| count_o200k(&self.source.content))
    }

    /// The node id (the record's message id).
    pub fn node_id(&self) -> &str {
        &self.source.message_id
    }

    /// Whether the record is trusted (online records always are).
    pub fn is_trusted(&self) -> bool {
        self.source.trust_state == TrustState::Trusted.as_str()
    }
}

/// Why a branch cannot become records: a precondition failure (spec 02 §2.2 steps 4, 5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordError {
    /// A record-worthy node has no id; memory never invents one.
    MissingNodeId {
        /// The node's position in the branch.
        index: usize,
    },
    /// A node stamped with the authority schema carries no authority.
    RequiresAuthority {
        /// The node id.
        node_id: String,
    },
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordError::MissingNodeId { index } => write!(f, "message {index} has no id"),
            RecordError::RequiresAuthority { node_id } => write!(f, "message {node_id} requires authority"),
        }
    }
}

impl std::error::Error for RecordError {}

/// The authority of a node, when it has any.
struct Authority {
    speaker_kind: String,
    speaker_id: Option<String>,
    speaker_display: Option<String>,
    principal_id: String,
    tier: String,
}

/// The records of one branch (spec 02 §2.2), oldest first. `utc_offset` is the offset
/// (seconds) the ISO timestamps are written at.
pub fn records(session_id: &str, rows: &[Message], utc_offset: i32) -> Result<Vec<Record>, RecordError> {
    records_from(session_id, rows, 0, utc_offset)
}

/// [`records`] of `rows` that stand at index `first` of their branch onwards: ordinals
/// (and the index of a missing id) count from `first`, so records read in chunks are
/// the records of the whole.
pub(crate) fn records_from(
    session_id: &str,
    rows: &[Message],
    first: usize,
    utc_offset: i32,
) -> Result<Vec<Record>, RecordError> {
    let mut out = Vec::new();
    for (index, message) in (first..).zip(rows) {
        if message.role != "user" && message.role != "assistant" {
            continue;
        }
        if message.field("display") == Some("runtime")
            || matches!(message.field("source"), Some("job_followup" | "merge_turn"))
        {
            continue;
        }
        let text = message.content.text();
        if text.trim().is_empty() {
            continue;
        }
        if message.id.is_empty() {
            return Err(RecordError::MissingNodeId { index });
        }
        let authority = authority(message);
        if authority.is_none() && message.metadata.get(AUTHORITY_SCHEMA_KEY).is_some_and(|v| !v.is_null()) {
            return Err(RecordError::RequiresAuthority { node_id: message.id.clone() });
        }
        let mut source = SourceRecord::new(
            PROVIDER,
            session_id,
            message.id.as_str(),
            i64::try_from(index).unwrap_or(i64::MAX),
            message.role.as_str(),
            text,
        );
        let (timestamp, epoch) = match &message.timestamp {
            Timestamp::Unix(seconds) => (iso8601(*seconds, utc_offset), Some(*seconds)),
            Timestamp::Text(text) => (Some(text.trim().to_owned()), parse_iso8601(text)),
            Timestamp::None => (None, None),
        };
        source.timestamp = timestamp;
        match authority {
            Some(authority) => {
                if !APPENDING_TIERS.contains(&authority.tier.as_str()) {
                    // Present but without `memory.source.append`: not a record.
                    continue;
                }
                source.speaker_kind = authority.speaker_kind;
                source.principal_id = authority.principal_id;
                source.authority_tier = Some(authority.tier);
                source.speaker_id = authority.speaker_id.or_else(|| non_empty(message.field("speaker_id")));
                source.speaker_display =
                    authority.speaker_display.or_else(|| non_empty(message.field("speaker_display")));
            }
            None => {
                // Pre-authority history: legacy, unknown principal, no tier.
                source.speaker_id = non_empty(message.field("speaker_id"));
                source.speaker_display = non_empty(message.field("speaker_display"));
            }
        }
        out.push(Record::new(source, epoch));
    }
    Ok(out)
}

fn non_empty(value: Option<&str>) -> Option<String> {
    value.filter(|text| !text.is_empty()).map(str::to_owned)
}

/// The node's authority: present iff it names a known tier and a speaker kind and
/// principal (all non-empty strings).
fn authority(message: &Message) -> Option<Authority> {
    let get = |key: &str| non_empty(message.field(key));
    if AUTHORITY_FIELDS.iter().all(|key| get(key).is_none()) {
        return None;
    }
    let tier = get("authority_tier").filter(|tier| KNOWN_TIERS.contains(&tier.as_str()))?;
    Some(Authority {
        speaker_kind: get("speaker_kind")?,
        speaker_id: get("speaker_id"),
        speaker_display: get("speaker_display"),
        principal_id: get("principal_id")?,
        tier,
    })
}

#[cfg(test)]
mod tests;
