//! The evidence (`sources`) argument of a changes request (spec 02 §4.2): validation,
//! the deterministic ids new evidence is archived under, and label substitution.
//!
//! Everything here is pure. The transaction archives the [`ArchivedEvidence::records`]
//! into its stage with the archive writer, so evidence installs together with the
//! prose that cites it, and substitutes labels in the edit text with
//! [`substitute_source_labels`].
//!
//! # Identity
//!
//! Ids depend only on who said what in which turn, so a retry of the same evidence from
//! the same origin archives nothing new. With `␟` = U+001F and `observed` the normalized
//! `observed_at` (empty when absent):
//!
//! ```text
//! seed    = principal_id ␟ speaker_kind ␟ speaker_id ␟ authority_tier ␟ origin_id
//! thread  = hex16(sha256(seed "\n" role₁␟content₁␟observed₁ "\n" role₂␟… ))
//! message = hex16(sha256(seed ␟ thread ␟ ordinal ␟ role ␟ content ␟ observed))
//! ```
//!
//! `hex16` is the first 16 lowercase hex digits, `ordinal` is 1-based in decimal, the
//! display name is left out, and content is hashed exactly as given (CR and all). The
//! layout was recovered from the vectors `transaction/changes-write-file`,
//! `patch-create-file` and `source-bytes-exact`, which it reproduces.

mod iso8601;
mod labels;

use std::collections::{BTreeMap, BTreeSet};

use scriptorium_archive_format::SourceRecord;
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use crate::error::{Error, ErrorCode};

pub use self::labels::substitute_source_labels;

/// The most evidence items one request may carry.
pub const MAX_SOURCES: usize = 64;

/// The most content, in UTF-8 bytes summed over all items, one request may carry.
pub const MAX_SOURCE_CONTENT_BYTES: usize = 256_000;

/// The provider new evidence is archived under (historic: `sources/claude-code/_v2/`).
pub const EVIDENCE_PROVIDER: &str = "claude-code";

/// The roles an evidence item may have, in the order the error message lists them.
pub const EVIDENCE_ROLES: [&str; 4] = ["user", "assistant", "system", "tool"];

/// The separator of the identity hash inputs (U+001F, the ASCII unit separator).
const UNIT_SEPARATOR: &str = "\u{1f}";

/// One validated evidence item: something said in this turn that an edit cites.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// The label the edit text cites it by. Invariant: matches `new-source-[a-z0-9-]+`.
    pub label: String,
    /// One of [`EVIDENCE_ROLES`].
    pub role: String,
    /// The exact text, never altered. Invariant: not blank.
    pub content: String,
    /// When it was said, normalized as Python's `datetime.isoformat()` writes it.
    pub observed_at: Option<String>,
}

/// Who the current turn belongs to, as the runtime recorded it; never read from the
/// request itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Provenance {
    /// The principal, for example `owner` or `telegram:42`.
    pub principal_id: String,
    /// The speaker kind, for example `human` or `runtime`.
    pub speaker_kind: String,
    /// The stable speaker id, for example `owner/local`.
    pub speaker_id: String,
    /// The display name; shown in the frame header, left out of the identity.
    pub speaker_display: String,
    /// The authority tier, `owner` or `paired`.
    pub authority_tier: String,
    /// Where the turn came from: `<session>/<turn>`, or `owner-rest/memory-changes`.
    pub origin_id: String,
}

impl Provenance {
    /// The identity seed: every field but the display name, joined by U+001F.
    fn seed(&self) -> String {
        [&self.principal_id, &self.speaker_kind, &self.speaker_id, &self.authority_tier, &self.origin_id]
            .map(String::as_str)
            .join(UNIT_SEPARATOR)
    }
}

/// Validated evidence turned into archive records, and the label → source id map.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArchivedEvidence {
    /// One trusted record per item, in request order, ready for the archive writer.
    pub records: Vec<SourceRecord>,
    /// Each label and the source id (`claude-code/<thread>/<message>`) it stands for.
    pub source_ids: BTreeMap<String, String>,
}

/// Validate the `sources` argument: absent (`null`) or a list of at most
/// [`MAX_SOURCES`] objects `{label, role, content, observed_at?}` with unique labels and
/// at most [`MAX_SOURCE_CONTENT_BYTES`] of content in all. Every failure is
/// `INVALID_ARGUMENT`, worded as the reference words it. Unknown keys are ignored.
pub fn parse_evidence(sources: &Value) -> Result<Vec<Evidence>, Error> {
    let items = match sources {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        _ => return Err(invalid("sources must be a list")),
    };
    if items.len() > MAX_SOURCES {
        return Err(invalid(format!("at most {MAX_SOURCES} sources are allowed"))
            .with_detail("count", items.len())
            .with_detail("limit", MAX_SOURCES));
    }
    let mut seen = BTreeSet::new();
    let mut evidence = Vec::with_capacity(items.len());
    let mut total_bytes = 0;
    for (index, item) in items.iter().enumerate() {
        let item = item.as_object().ok_or_else(|| invalid(format!("sources[{index}] must be an object")))?;
        let parsed = parse_item(index, item)?;
        if !seen.insert(parsed.label.clone()) {
            return Err(invalid(format!("duplicate source label: {}", parsed.label)));
        }
        total_bytes += parsed.content.len();
        evidence.push(parsed);
    }
    if total_bytes > MAX_SOURCE_CONTENT_BYTES {
        return Err(invalid(format!("sources content exceeds {MAX_SOURCE_CONTENT_BYTES} bytes"))
            .with_detail("bytes", total_bytes)
            .with_detail("limit", MAX_SOURCE_CONTENT_BYTES));
    }
    Ok(evidence)
}

/// Check one item's fields in the order label, role, content, observed_at.
fn parse_item(index: usize, item: &Map<String, Value>) -> Result<Evidence, Error> {
    let field = |name: &str| item.get(name).unwrap_or(&Value::Null);
    let label = match field("label") {
        // The reference strips the label and role (Python `str.strip()`) before checking them.
        Value::String(label) if labels::is_label(py_strip(label)) => py_strip(label).to_owned(),
        other => {
            return Err(invalid(format!("sources[{index}].label must match new-source-[a-z0-9-]+"))
                .with_detail("label", other.clone()));
        }
    };
    let role = match field("role") {
        Value::String(role) if EVIDENCE_ROLES.contains(&py_strip(role)) => py_strip(role).to_owned(),
        _ => {
            let roles = EVIDENCE_ROLES.map(|role| format!("'{role}'")).join(", ");
            return Err(invalid(format!("sources[{index}].role must be one of [{roles}]")));
        }
    };
    let content = match field("content") {
        Value::String(content) if !is_blank(content) => content.clone(),
        Value::String(_) | Value::Null => return Err(invalid(format!("sources[{index}].content is empty"))),
        _ => return Err(invalid(format!("sources[{index}].content must be a string"))),
    };
    let observed_at = match field("observed_at") {
        Value::Null => None,
        Value::String(text) if text.is_empty() => None,
        Value::String(text) => {
            Some(iso8601::normalize(py_strip(text)).ok_or_else(|| bad_time(index, field("observed_at")))?)
        }
        other => return Err(bad_time(index, other)),
    };
    Ok(Evidence { label, role, content, observed_at })
}

/// `text` without leading and trailing whitespace in Python's sense (`str.strip()`).
fn py_strip(text: &str) -> &str {
    text.trim_matches(scriptorium_archive_format::text::is_space)
}

/// Blank in Python's sense (`not content.strip()`).
fn is_blank(text: &str) -> bool {
    text.chars().all(scriptorium_archive_format::text::is_space)
}

fn bad_time(index: usize, value: &Value) -> Error {
    invalid(format!("sources[{index}].observed_at must be ISO 8601")).with_detail("observed_at", value.clone())
}

/// Turn validated evidence into archive records with the ids of the module docs.
///
/// Creating evidence needs the runtime's provenance for the turn: with evidence and no
/// provenance this fails with `WRITER_PRECONDITION_FAILED`. No evidence gives an empty
/// result whether or not there is provenance.
pub fn evidence_records(evidence: &[Evidence], provenance: Option<&Provenance>) -> Result<ArchivedEvidence, Error> {
    if evidence.is_empty() {
        return Ok(ArchivedEvidence::default());
    }
    let Some(provenance) = provenance else {
        return Err(Error::new(
            ErrorCode::WriterPreconditionFailed,
            "creating sources requires the runtime's provenance of the current turn",
        ));
    };
    let seed = provenance.seed();
    let observed = |item: &Evidence| item.observed_at.clone().unwrap_or_default();
    let mut thread_input = seed.clone();
    for item in evidence {
        thread_input.push('\n');
        thread_input.push_str(&[item.role.as_str(), &item.content, &observed(item)].join(UNIT_SEPARATOR));
    }
    let thread_id = hex16(&thread_input);
    let mut archived = ArchivedEvidence::default();
    for (ordinal, item) in (1_i64..).zip(evidence) {
        let ordinal_text = ordinal.to_string();
        let message_input =
            [seed.as_str(), &thread_id, &ordinal_text, &item.role, &item.content, &observed(item)].join(UNIT_SEPARATOR);
        let mut record =
            SourceRecord::new(EVIDENCE_PROVIDER, &thread_id, hex16(&message_input), ordinal, &item.role, &item.content);
        record.timestamp = item.observed_at.clone();
        record.speaker_id = non_empty(&provenance.speaker_id);
        record.speaker_display = non_empty(&provenance.speaker_display);
        record.speaker_kind = provenance.speaker_kind.clone();
        record.principal_id = provenance.principal_id.clone();
        record.authority_tier = non_empty(&provenance.authority_tier);
        archived.source_ids.insert(item.label.clone(), record.source_id());
        archived.records.push(record);
    }
    Ok(archived)
}

fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_owned())
}

/// The first 16 lowercase hex digits of the SHA-256 of `text`'s UTF-8 bytes.
fn hex16(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().take(8).map(|byte| format!("{byte:02x}")).collect()
}

fn invalid(message: impl Into<Box<str>>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

#[cfg(test)]
mod tests;
