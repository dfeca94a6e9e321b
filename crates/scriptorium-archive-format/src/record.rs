//! One conversation turn to archive (`SourceRecord`), and the checks a record must pass
//! before it may become a v2 frame (spec 01 §2.7 step 1, §4).

use crate::error::{Error, ErrorCode};
use crate::ids::{is_valid_v2_source_id, v2_location};
use crate::meta::{AuthorityTier, SourceMeta, TrustState};
use crate::python::is_printable;
use crate::speaker::{normalize_identity_part, speaker_label};

/// The placeholder for an empty principal or speaker kind (spec 01 §2.3).
const UNKNOWN: &str = "unknown";

/// One turn of a conversation, as the runtime hands it to the archive writer.
///
/// Fields mirror the reference's `SourceRecord`; the strings are raw (unnormalized)
/// and are validated only when the record is rendered or planned.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct SourceRecord {
    /// The provider, for example `openprogram` or `telegram`.
    pub provider: String,
    /// The thread (conversation) id; one archive file per thread.
    pub thread_id: String,
    /// The message id; may contain `/`.
    pub message_id: String,
    /// Position in the thread; frames are written in (provider, thread, ordinal) order.
    pub ordinal: i64,
    /// The raw role (`user`, `assistant`, …), the label of last resort.
    pub role: String,
    /// The exact body text; never altered.
    pub content: String,
    /// The header timestamp; `None` and `""` both render as `[]`.
    pub timestamp: Option<String>,
    /// The raw stable speaker id, if the runtime knows one.
    pub speaker_id: Option<String>,
    /// The raw display name, if the runtime knows one.
    pub speaker_display: Option<String>,
    /// What kind of speaker (`owner`, `human`, …); empty means `unknown`.
    pub speaker_kind: String,
    /// Who said it; empty means `unknown`.
    pub principal_id: String,
    /// `owner`, `paired` or `None`.
    pub authority_tier: Option<String>,
    /// `trusted` or `pending`.
    pub trust_state: String,
}

impl SourceRecord {
    /// A trusted record with no speaker identity, no timestamp, no tier and unknown
    /// principal and speaker kind; set the other public fields as needed.
    pub fn new(
        provider: impl Into<String>,
        thread_id: impl Into<String>,
        message_id: impl Into<String>,
        ordinal: i64,
        role: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        SourceRecord {
            provider: provider.into(),
            thread_id: thread_id.into(),
            message_id: message_id.into(),
            ordinal,
            role: role.into(),
            content: content.into(),
            timestamp: None,
            speaker_id: None,
            speaker_display: None,
            speaker_kind: UNKNOWN.to_owned(),
            principal_id: UNKNOWN.to_owned(),
            authority_tier: None,
            trust_state: TrustState::Trusted.as_str().to_owned(),
        }
    }

    /// The source id `provider/thread/message` (the writer's `ref`).
    pub fn source_id(&self) -> String {
        format!("{}/{}/{}", self.provider, self.thread_id, self.message_id)
    }

    /// The speaker label of spec 01 §4: `display (id)`, either half, or the raw role.
    /// This is the writer protocol's `speaker`; the archive header re-normalizes it.
    pub fn speaker_label(&self) -> String {
        speaker_label(&self.role, self.speaker_id.as_deref(), self.speaker_display.as_deref())
    }

    /// The normalized trust metadata of this record (`invalid source trust metadata`
    /// when the trust state or tier is not one of the known names).
    pub fn meta(&self) -> Result<SourceMeta, Error> {
        let invalid = || Error::new(ErrorCode::InvalidSourceMeta, "invalid source trust metadata");
        let trust_state = TrustState::from_name(&self.trust_state).ok_or_else(invalid)?;
        let authority_tier = match self.authority_tier.as_deref() {
            None => None,
            Some(tier) => Some(AuthorityTier::from_name(tier).ok_or_else(invalid)?),
        };
        Ok(SourceMeta {
            authority_tier,
            principal_id: or_unknown(&self.principal_id),
            speaker_kind: or_unknown(&self.speaker_kind),
            trust_state,
        })
    }

    /// Whether the frame carries a `speaker-id` line: the runtime had an identity, that
    /// is a normalized id or display name that is not empty (spec 01 §2.3).
    pub(crate) fn has_speaker_line(&self) -> bool {
        let present = |part: Option<&str>| part.is_some_and(|p| !normalize_identity_part(p).is_empty());
        present(self.speaker_id.as_deref()) || present(self.speaker_display.as_deref())
    }

    /// Run the checks of spec 01 §2.7 step 1 in the reference's order, then the
    /// metadata check, and return what rendering needs.
    pub(crate) fn validate(&self) -> Result<CheckedRecord<'_>, Error> {
        let source_id = self.source_id();
        let path = v2_location(&source_id).ok_or_else(|| {
            Error::new(ErrorCode::InvalidSourceIdShape, "provider source IDs require provider/thread/message")
        })?;
        if !is_valid_v2_source_id(&source_id) {
            return Err(Error::new(ErrorCode::UnsafeSourceId, "source ID is not safe for a v2 header"));
        }
        let timestamp = self.timestamp.as_deref().unwrap_or_default();
        if !timestamp.chars().all(|c| is_printable(c) && !matches!(c, '[' | ']' | '\r' | '\n')) {
            return Err(Error::new(ErrorCode::UnsafeTimestamp, "source timestamp is not safe for a header"));
        }
        // The header re-normalizes the whole label, so check what will be written.
        let header_label = normalize_identity_part(&self.speaker_label());
        if header_label.is_empty() {
            return Err(Error::new(ErrorCode::EmptySpeakerLabel, "source record role/speaker label is empty"));
        }
        let meta = self.meta()?;
        Ok(CheckedRecord { record: self, source_id, path, timestamp, header_label, meta })
    }
}

fn or_unknown(value: &str) -> String {
    if value.is_empty() { UNKNOWN.to_owned() } else { value.to_owned() }
}

/// A record that passed [`SourceRecord::validate`], with its derived fields.
#[derive(Debug)]
pub(crate) struct CheckedRecord<'a> {
    pub(crate) record: &'a SourceRecord,
    pub(crate) source_id: String,
    /// The workspace-relative v2 archive path.
    pub(crate) path: String,
    pub(crate) timestamp: &'a str,
    pub(crate) header_label: String,
    pub(crate) meta: SourceMeta,
}
