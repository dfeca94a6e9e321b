//! Errors of the model clients: a bad configuration ([`ConfigError`], stable `WRITER_MODEL_*`
//! codes) and a failed call ([`LlmError`], a provider reason of spec 02 §2.9), with the
//! provider classifier that reads a failed HTTP reply.

use serde_json::Value;

use crate::agent::{AgentError, AgentErrorKind, ProviderReason};
use crate::failure::{MemoryWriteFailureCode, PassError, classify};
use crate::llm::config::ApiKey;

/// Why a model configuration was refused. Stable strings (docs/error-codes.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConfigErrorCode {
    /// The model is not `provider/model` with a known provider and a model name.
    ModelSpecInvalid,
    /// The provider needs an API key and none is configured or in its environment variable.
    ApiKeyMissing,
    /// The API key holds a character an HTTP header cannot carry.
    ApiKeyInvalid,
    /// An `openai-compatible` model has no base URL.
    BaseUrlMissing,
    /// The base URL is not an `http(s)://host…` URL without credentials, query or fragment.
    BaseUrlInvalid,
}

impl ConfigErrorCode {
    /// Every code, for the registry test.
    pub const ALL: &'static [ConfigErrorCode] =
        &[Self::ModelSpecInvalid, Self::ApiKeyMissing, Self::ApiKeyInvalid, Self::BaseUrlMissing, Self::BaseUrlInvalid];

    /// The stable string form.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ModelSpecInvalid => "WRITER_MODEL_SPEC_INVALID",
            Self::ApiKeyMissing => "WRITER_MODEL_KEY_MISSING",
            Self::ApiKeyInvalid => "WRITER_MODEL_KEY_INVALID",
            Self::BaseUrlMissing => "WRITER_MODEL_BASE_URL_MISSING",
            Self::BaseUrlInvalid => "WRITER_MODEL_BASE_URL_INVALID",
        }
    }
}

impl std::fmt::Display for ConfigErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A model configuration that cannot make a client. Its message never holds a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    code: ConfigErrorCode,
    message: String,
}

impl ConfigError {
    pub(crate) fn new(code: ConfigErrorCode, message: impl Into<String>) -> Self {
        ConfigError { code, message: message.into() }
    }

    /// The stable code.
    pub fn code(&self) -> ConfigErrorCode {
        self.code
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ConfigError {}

impl From<ConfigError> for AgentError {
    /// A writer without a usable model is a precondition failure (`WRITER_PRECONDITION_FAILED`).
    fn from(error: ConfigError) -> Self {
        AgentError::new(AgentErrorKind::Precondition, error.to_string())
    }
}

/// A model call that failed after its retries, classified for spec 02 §2.9.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LlmError {
    reason: ProviderReason,
    retryable: bool,
    http_status: Option<u16>,
    quota_exhausted: bool,
    attempts: u32,
    message: String,
}

impl LlmError {
    pub(crate) fn new(reason: ProviderReason, retryable: bool, message: impl Into<String>) -> Self {
        LlmError { reason, retryable, http_status: None, quota_exhausted: false, attempts: 1, message: message.into() }
    }

    /// The provider reason (`RateLimit`, `Auth`, `Context`, …).
    pub fn reason(&self) -> ProviderReason {
        self.reason
    }

    /// Whether the same write may succeed later (429 except quota, 5xx, transport, timeout).
    pub fn retryable(&self) -> bool {
        self.retryable
    }

    /// The HTTP status of the last attempt, if it got one.
    pub fn http_status(&self) -> Option<u16> {
        self.http_status
    }

    /// How many HTTP attempts the call made.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The failure code the write pass reports for it (`MODEL_RATE_LIMIT`, …).
    pub fn code(&self) -> MemoryWriteFailureCode {
        classify(&PassError::Agent(AgentError::from(self.clone()))).reason_code
    }

    pub(crate) fn with_status(mut self, status: u16) -> Self {
        self.http_status = Some(status);
        self
    }

    pub(crate) fn with_attempts(mut self, attempts: u32) -> Self {
        self.attempts = attempts;
        self
    }

    /// Drop every occurrence of the key from the message (a provider may echo it back).
    pub(crate) fn redacted(mut self, key: Option<&ApiKey>) -> Self {
        if let Some(key) = key {
            self.message = crate::trajectory::redact(&self.message, &[key.expose()]);
        }
        self
    }
}

impl std::fmt::Display for LlmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LlmError {}

impl From<LlmError> for AgentError {
    /// An agent-execution error carrying the explicit provider reason and verdict.
    fn from(error: LlmError) -> Self {
        AgentError {
            message: error.message,
            kind: AgentErrorKind::Execution,
            provider_reason: Some(error.reason),
            http_status: error.http_status,
            transport: error.reason == ProviderReason::Transport,
            timeout: error.reason == ProviderReason::Timeout,
            quota_exhausted: error.quota_exhausted,
            retryable: Some(error.retryable),
            commit_rejected: false,
        }
    }
}

/// How much provider text an error message keeps.
const MAX_PROVIDER_TEXT: usize = 500;

/// The `{code, type, message}` a provider's error body names, from any of the shapes:
/// OpenAI `{"error":{…}}`, Anthropic `{"type":"error","error":{…}}`, vLLM's flat
/// `{"object":"error",…}`, llama.cpp's `{"error":{"code":400,…}}`.
#[derive(Debug, Default)]
struct ErrorBody {
    code: String,
    kind: String,
    message: String,
    detail_code: String,
}

fn text_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Number(number)) => number.to_string(),
        _ => String::new(),
    }
}

fn parse_error_body(body: &[u8]) -> ErrorBody {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return ErrorBody { message: String::from_utf8_lossy(body).into_owned(), ..ErrorBody::default() };
    };
    let inner = match value.get("error") {
        Some(inner @ Value::Object(_)) => inner,
        Some(Value::String(message)) => return ErrorBody { message: message.clone(), ..ErrorBody::default() },
        _ => &value,
    };
    ErrorBody {
        code: text_of(inner.get("code")),
        kind: text_of(inner.get("type")),
        message: text_of(inner.get("message")),
        detail_code: text_of(inner.get("details").and_then(|details| details.get("error_code"))),
    }
}

const CONTEXT_CODES: &[&str] = &["context_length_exceeded", "exceed_context_size_error", "request_too_large"];
const CONTEXT_MARKERS: &[&str] = &[
    "context length",
    "context_length",
    "context window",
    "context size",
    "prompt is too long",
    "input is too long",
    "too many tokens",
    "maximum context",
];
const POLICY_CODES: &[&str] = &["content_policy_violation", "content_filter"];
const POLICY_MARKERS: &[&str] = &["content policy", "content management policy", "safety system"];
const QUOTA_CODES: &[&str] = &["insufficient_quota", "enforced_spend_limit_reached"];
const QUOTA_MARKERS: &[&str] = &["exceeded your current quota", "spend limit"];

fn names_any(body: &ErrorBody, codes: &[&str], markers: &[&str]) -> bool {
    let message = body.message.to_lowercase();
    [&body.code, &body.kind, &body.detail_code].iter().any(|name| codes.contains(&name.as_str()))
        || markers.iter().any(|marker| message.contains(marker))
}

/// The provider classifier on a non-success reply: its reason, whether it is worth trying
/// again, and whether a 429 is an exhausted quota (never worth it).
pub(crate) fn classify_reply(provider: &str, status: u16, body: &[u8]) -> LlmError {
    let parsed = parse_error_body(body);
    let (reason, retryable, quota) = match status {
        429 if names_any(&parsed, QUOTA_CODES, QUOTA_MARKERS) => (ProviderReason::RateLimit, false, true),
        429 => (ProviderReason::RateLimit, true, false),
        401 => (ProviderReason::Auth, false, false),
        403 => (ProviderReason::Authz, false, false),
        408 => (ProviderReason::Timeout, true, false),
        // 409 is a conflict the providers ask to retry; 5xx (Anthropic's 529 overload too) as well.
        409 => (ProviderReason::Provider, true, false),
        400..=499 if status == 413 || names_any(&parsed, CONTEXT_CODES, CONTEXT_MARKERS) => {
            (ProviderReason::Context, false, false)
        }
        400..=499 if names_any(&parsed, POLICY_CODES, POLICY_MARKERS) => (ProviderReason::Policy, false, false),
        400..=499 => (ProviderReason::Invalid, false, false),
        500..=599 => (ProviderReason::Provider, true, false),
        _ => (ProviderReason::Unknown, false, false),
    };
    let name = [&parsed.code, &parsed.kind].into_iter().find(|name| !name.is_empty()).cloned().unwrap_or_default();
    let text: String = parsed.message.chars().take(MAX_PROVIDER_TEXT).collect();
    let mut error = LlmError::new(reason, retryable, format!("{provider}: HTTP {status} {name}: {text}"));
    error.quota_exhausted = quota;
    error.with_status(status)
}
