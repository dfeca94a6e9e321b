//! `source-meta` tokens: trust and provenance of one archived record (spec §2.3, §3.5).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value};

use crate::error::{Error, ErrorCode};
use crate::python::push_json_string;

/// Whether a record may be recalled and cited yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TrustState {
    /// Usable everywhere.
    Trusted,
    /// Held back until the owner promotes it.
    Pending,
}

impl TrustState {
    /// The on-disk string form.
    pub const fn as_str(self) -> &'static str {
        match self {
            TrustState::Trusted => "trusted",
            TrustState::Pending => "pending",
        }
    }

    /// Parse the on-disk string form.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "trusted" => Some(TrustState::Trusted),
            "pending" => Some(TrustState::Pending),
            _ => None,
        }
    }
}

/// Who stands behind a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AuthorityTier {
    /// The workspace owner.
    Owner,
    /// A paired peer: may only add.
    Paired,
}

impl AuthorityTier {
    /// The on-disk string form.
    pub const fn as_str(self) -> &'static str {
        match self {
            AuthorityTier::Owner => "owner",
            AuthorityTier::Paired => "paired",
        }
    }

    /// Parse the on-disk string form.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "owner" => Some(AuthorityTier::Owner),
            "paired" => Some(AuthorityTier::Paired),
            _ => None,
        }
    }
}

/// The normalized metadata of a v2 frame (version 1 shape).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourceMeta {
    /// The tier, or `None` for no tier (unpaired or unknown).
    pub authority_tier: Option<AuthorityTier>,
    /// Who said it; never empty (`"unknown"` by default).
    pub principal_id: String,
    /// What kind of speaker (`owner`, `human`, `runtime`, …); never empty.
    pub speaker_kind: String,
    /// Whether the record is trusted or pending.
    pub trust_state: TrustState,
}

/// The placeholder the reference writes for an empty principal or speaker kind.
const UNKNOWN: &str = "unknown";

impl Default for SourceMeta {
    /// What a frame without a `source-meta` line reads as (decision Q7).
    fn default() -> Self {
        SourceMeta {
            authority_tier: None,
            principal_id: UNKNOWN.to_owned(),
            speaker_kind: UNKNOWN.to_owned(),
            trust_state: TrustState::Trusted,
        }
    }
}

impl SourceMeta {
    /// Normalize loose metadata (a JSON object as callers pass it): `trust_state` is
    /// required; `authority_tier` must be absent, null, `owner` or `paired`; an empty
    /// or missing principal or speaker kind becomes `"unknown"`; unknown keys are ignored.
    pub fn normalize(value: &Value) -> Result<Self, Error> {
        let invalid = || Error::new(ErrorCode::InvalidSourceMeta, "invalid source trust metadata");
        let object = value.as_object().ok_or_else(invalid)?;
        let trust_state =
            object.get("trust_state").and_then(Value::as_str).and_then(TrustState::from_name).ok_or_else(invalid)?;
        let authority_tier = match object.get("authority_tier") {
            None | Some(Value::Null) => None,
            Some(Value::String(tier)) => Some(AuthorityTier::from_name(tier).ok_or_else(invalid)?),
            Some(_) => return Err(invalid()),
        };
        if object.get("version").is_some_and(|version| version.as_i64() != Some(1)) {
            return Err(invalid());
        }
        Ok(SourceMeta {
            authority_tier,
            principal_id: text_or_unknown(object.get("principal_id")),
            speaker_kind: text_or_unknown(object.get("speaker_kind")),
            trust_state,
        })
    }

    /// The canonical JSON: sorted keys, no spaces, non-ASCII raw (Python
    /// `json.dumps(ensure_ascii=False, sort_keys=True, separators=(",", ":"))`).
    pub fn canonical_json(&self) -> String {
        let mut out = String::with_capacity(128);
        out.push_str("{\"authority_tier\":");
        match self.authority_tier {
            Some(tier) => push_json_string(&mut out, tier.as_str()),
            None => out.push_str("null"),
        }
        out.push_str(",\"principal_id\":");
        push_json_string(&mut out, &self.principal_id);
        out.push_str(",\"speaker_kind\":");
        push_json_string(&mut out, &self.speaker_kind);
        out.push_str(",\"trust_state\":");
        push_json_string(&mut out, self.trust_state.as_str());
        out.push_str(",\"version\":1}");
        out
    }

    /// The token of a `source-meta` line: unpadded base64url of [`Self::canonical_json`].
    pub fn encode_token(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.canonical_json().as_bytes())
    }

    /// The whole `<!-- source-meta:TOKEN -->` line.
    pub fn to_line(&self) -> String {
        format!("<!-- source-meta:{} -->", self.encode_token())
    }

    /// Decode a token, accepting only byte-canonical tokens of the current shape or
    /// of the pre-tier `origin_scope` shape (spec §3.5).
    pub fn decode_token(token: &str) -> Option<Self> {
        let bytes = URL_SAFE_NO_PAD.decode(token.as_bytes()).ok()?;
        let value: Value = serde_json::from_slice(&bytes).ok()?;
        let object = value.as_object()?;
        if object.len() == 5 && object.contains_key("authority_tier") {
            let meta = Self::normalize(&value).ok()?;
            return (meta.encode_token() == token).then_some(meta);
        }
        decode_origin_scope(object, token)
    }
}

fn text_or_unknown(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        // Python `str(value or "unknown")`: falsy values become the placeholder.
        None | Some(Value::Null) | Some(Value::String(_)) | Some(Value::Bool(false)) => UNKNOWN.to_owned(),
        Some(Value::Number(n)) if n.as_f64() == Some(0.0) => UNKNOWN.to_owned(),
        Some(Value::Array(a)) if a.is_empty() => UNKNOWN.to_owned(),
        Some(Value::Object(o)) if o.is_empty() => UNKNOWN.to_owned(),
        Some(Value::Bool(true)) => "True".to_owned(),
        Some(other) => other.to_string(),
    }
}

/// The pre-tier shape: exactly `version, trust_state, speaker_kind, principal_id,
/// origin_scope{origin, capabilities}`, canonical bytes, sorted duplicate-free
/// non-empty capabilities, origin `legacy-unknown` or `local-owner`.
fn decode_origin_scope(object: &Map<String, Value>, token: &str) -> Option<SourceMeta> {
    const KEYS: [&str; 5] = ["origin_scope", "principal_id", "speaker_kind", "trust_state", "version"];
    if object.len() != KEYS.len() || !KEYS.iter().all(|k| object.contains_key(*k)) {
        return None;
    }
    if object.get("version")?.as_i64()? != 1 || !object.get("version")?.is_u64() {
        return None;
    }
    let trust_state = TrustState::from_name(object.get("trust_state")?.as_str()?)?;
    let principal_id = object.get("principal_id")?.as_str()?;
    let speaker_kind = object.get("speaker_kind")?.as_str()?;
    if principal_id.is_empty() || speaker_kind.is_empty() {
        return None;
    }
    let scope = object.get("origin_scope")?.as_object()?;
    if scope.len() != 2 {
        return None;
    }
    let origin = scope.get("origin")?.as_str()?;
    let authority_tier = match origin {
        "local-owner" => Some(AuthorityTier::Owner),
        "legacy-unknown" => None,
        _ => return None,
    };
    let capabilities: Vec<&str> =
        scope.get("capabilities")?.as_array()?.iter().map(Value::as_str).collect::<Option<_>>()?;
    if capabilities.iter().any(|c| c.is_empty())
        || capabilities.iter().zip(capabilities.iter().skip(1)).any(|(a, b)| a >= b)
    {
        return None;
    }
    let mut canonical = String::with_capacity(160);
    canonical.push_str("{\"origin_scope\":{\"capabilities\":[");
    for (n, capability) in capabilities.iter().enumerate() {
        if n > 0 {
            canonical.push(',');
        }
        push_json_string(&mut canonical, capability);
    }
    canonical.push_str("],\"origin\":");
    push_json_string(&mut canonical, origin);
    canonical.push_str("},\"principal_id\":");
    push_json_string(&mut canonical, principal_id);
    canonical.push_str(",\"speaker_kind\":");
    push_json_string(&mut canonical, speaker_kind);
    canonical.push_str(",\"trust_state\":");
    push_json_string(&mut canonical, trust_state.as_str());
    canonical.push_str(",\"version\":1}");
    if URL_SAFE_NO_PAD.encode(canonical.as_bytes()) != token {
        return None;
    }
    Some(SourceMeta {
        authority_tier,
        principal_id: principal_id.to_owned(),
        speaker_kind: speaker_kind.to_owned(),
        trust_state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_example_token_round_trips() {
        let token = "eyJhdXRob3JpdHlfdGllciI6InBhaXJlZCIsInByaW5jaXBhbF9pZCI6InRlbGVncmFtLzQ0MDIiLCJzcGVha2VyX2tpbmQiOiJodW1hbiIsInRydXN0X3N0YXRlIjoidHJ1c3RlZCIsInZlcnNpb24iOjF9";
        let meta = SourceMeta::decode_token(token).expect("spec example decodes");
        assert_eq!(meta.authority_tier, Some(AuthorityTier::Paired));
        assert_eq!(meta.principal_id, "telegram/4402");
        assert_eq!(meta.encode_token(), token);
    }

    #[test]
    fn padded_or_garbage_tokens_are_rejected() {
        let token = SourceMeta::default().encode_token();
        assert!(SourceMeta::decode_token(&format!("{token}=")).is_none());
        assert!(SourceMeta::decode_token("not-json").is_none());
    }
}
