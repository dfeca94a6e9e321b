//! Which model the writer talks to and how: the `provider/model` spec of
//! `memory.writer.model` (spec 02 §11), the base URL, the API key and the call limits.

use std::time::Duration;

use crate::llm::error::{ConfigError, ConfigErrorCode};
use crate::llm::retry::RetryPolicy;

/// The environment variable holding the OpenAI key.
pub const OPENAI_API_KEY_ENV: &str = "OPENAI_API_KEY";
/// The environment variable holding the Anthropic key.
pub const ANTHROPIC_API_KEY_ENV: &str = "ANTHROPIC_API_KEY";
/// OpenAI's API root; Chat Completions is `{base}/chat/completions`.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// Anthropic's API root; Messages is `{base}/v1/messages`.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header every Messages call sends.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// The reply cap sent when the request sets none; Anthropic requires one.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 8192;

/// Who serves the model, and so which wire format a call speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Provider {
    /// OpenAI's Chat Completions API.
    OpenAi,
    /// Anthropic's Messages API.
    Anthropic,
    /// Any server speaking Chat Completions (vLLM, llama.cpp, Ollama's `/v1`, DeepSeek, …);
    /// needs a base URL.
    OpenAiCompatible,
}

impl Provider {
    /// The provider's name as the spec spells it.
    pub const fn as_str(&self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
            Provider::OpenAiCompatible => "openai-compatible",
        }
    }

    /// The environment variable a key may come from, if the provider has one. A compatible
    /// server gets a key only from the configuration: sending `OPENAI_API_KEY` to an
    /// arbitrary base URL would hand the key to a third party.
    pub const fn key_env(&self) -> Option<&'static str> {
        match self {
            Provider::OpenAi => Some(OPENAI_API_KEY_ENV),
            Provider::Anthropic => Some(ANTHROPIC_API_KEY_ENV),
            Provider::OpenAiCompatible => None,
        }
    }
}

/// A parsed `provider/model` value, such as `openai/gpt-4.1-mini`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelSpec {
    /// Who serves it.
    pub provider: Provider,
    /// The model id sent to the provider (everything after the first `/`; it may hold more).
    pub model: String,
}

impl ModelSpec {
    /// Parse `provider/model` (trimmed); the provider is `openai`, `anthropic` or
    /// `openai-compatible`, and the model is not empty.
    pub fn parse(spec: &str) -> Result<ModelSpec, ConfigError> {
        let spec = spec.trim();
        let invalid = |why: &str| ConfigError::new(ConfigErrorCode::ModelSpecInvalid, format!("model `{spec}`: {why}"));
        let Some((provider, model)) = spec.split_once('/') else {
            return Err(invalid("expected provider/model"));
        };
        let provider = match provider {
            "openai" => Provider::OpenAi,
            "anthropic" => Provider::Anthropic,
            "openai-compatible" => Provider::OpenAiCompatible,
            _ => return Err(invalid("the provider is not openai, anthropic or openai-compatible")),
        };
        if model.trim().is_empty() || model.trim() != model {
            return Err(invalid("the model name is empty or padded"));
        }
        if model.chars().any(char::is_control) {
            return Err(invalid("the model name holds a control character"));
        }
        Ok(ModelSpec { provider, model: model.to_owned() })
    }
}

impl std::fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.provider.as_str(), self.model)
    }
}

/// An API key. Its `Debug` and `Display` never show it, and no error message holds it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// A key from its text (trimmed); refused when empty or not a valid header value.
    pub fn new(key: &str) -> Result<ApiKey, ConfigError> {
        let key = key.trim();
        if key.is_empty() {
            return Err(ConfigError::new(ConfigErrorCode::ApiKeyMissing, "the API key is empty"));
        }
        // Header values are visible ASCII and spaces; anything else could split the header.
        if !key.bytes().all(|byte| (0x20..0x7f).contains(&byte)) {
            return Err(ConfigError::new(
                ConfigErrorCode::ApiKeyInvalid,
                "the API key holds a character an HTTP header cannot carry",
            ));
        }
        Ok(ApiKey(key.to_owned()))
    }

    /// The key itself, for the one header that carries it and for the secrets
    /// [`crate::redact`] scrubs from `agent-history.jsonl`.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

impl std::fmt::Display for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

/// How long one HTTP exchange may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// Connecting (DNS, TCP, TLS); a connect timeout is retried like a transport failure.
    pub connect: Duration,
    /// The whole exchange, request to last body byte; not retried within the call, since
    /// the model may have worked (and billed) the whole time.
    pub request: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts { connect: Duration::from_secs(10), request: Duration::from_secs(300) }
    }
}

/// Everything a client needs: model, endpoint, key and limits.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientConfig {
    /// The model.
    pub spec: ModelSpec,
    /// The API root (no trailing `/`): OpenAI's includes `/v1`, Anthropic's does not.
    pub base_url: String,
    /// The key, if any (a compatible server may need none).
    pub api_key: Option<ApiKey>,
    /// Time limits of one HTTP exchange.
    pub timeouts: Timeouts,
    /// Retries within one call.
    pub retry: RetryPolicy,
    /// The reply cap when a request sets none.
    pub max_output_tokens: u32,
}

impl ClientConfig {
    /// Resolve a client configuration from the model spec, an optional base-URL override and
    /// an optional configured key, reading the provider's key variable through `env` when no
    /// key is configured (inject `|name| std::env::var(name).ok()` in production).
    pub fn resolve(
        spec: ModelSpec,
        base_url: Option<&str>,
        api_key: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ClientConfig, ConfigError> {
        let base_url = match (base_url.map(str::trim).filter(|url| !url.is_empty()), &spec.provider) {
            (Some(url), _) => normalize_base_url(url)?,
            (None, Provider::OpenAi) => OPENAI_BASE_URL.to_owned(),
            (None, Provider::Anthropic) => ANTHROPIC_BASE_URL.to_owned(),
            (None, Provider::OpenAiCompatible) => {
                return Err(ConfigError::new(
                    ConfigErrorCode::BaseUrlMissing,
                    format!(
                        "model `{spec}` needs a base URL (the server's API root, such as http://127.0.0.1:8080/v1)"
                    ),
                ));
            }
        };
        let configured = api_key.map(str::trim).filter(|key| !key.is_empty());
        let from_env = || spec.provider.key_env().and_then(env).filter(|key| !key.trim().is_empty());
        let api_key = match configured.map(str::to_owned).or_else(from_env) {
            Some(key) => Some(ApiKey::new(&key)?),
            None if spec.provider == Provider::OpenAiCompatible => None,
            None => {
                let var = spec.provider.key_env().unwrap_or_default();
                return Err(ConfigError::new(
                    ConfigErrorCode::ApiKeyMissing,
                    format!("model `{spec}` needs an API key: set {var} or configure one"),
                ));
            }
        };
        Ok(ClientConfig {
            spec,
            base_url,
            api_key,
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
        })
    }
}

/// Check a base URL: `http://` or `https://`, a host, no credentials, query or fragment;
/// the trailing `/` is dropped.
fn normalize_base_url(url: &str) -> Result<String, ConfigError> {
    let invalid = |why: &str| ConfigError::new(ConfigErrorCode::BaseUrlInvalid, format!("base URL: {why}"));
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"));
    let Some(rest) = rest else { return Err(invalid("it does not start with http:// or https://")) };
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() {
        return Err(invalid("it names no host"));
    }
    // Credentials in the URL would end up in error messages; keys go in the key setting.
    if authority.contains('@') {
        return Err(invalid("it holds credentials; configure the API key instead"));
    }
    if rest.contains(['?', '#']) || url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid("it holds a query, a fragment or whitespace"));
    }
    Ok(url.trim_end_matches('/').to_owned())
}

/// Whether `base_url` names this machine, where no proxy from the environment applies.
pub(crate) fn is_loopback(base_url: &str) -> bool {
    let rest = base_url.strip_prefix("https://").or_else(|| base_url.strip_prefix("http://")).unwrap_or(base_url);
    let authority = rest.split('/').next().unwrap_or_default();
    let host = if let Some(bracketed) = authority.strip_prefix('[') {
        bracketed.split(']').next().unwrap_or_default()
    } else {
        authority.rsplit_once(':').map_or(authority, |(host, _)| host)
    };
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|address| address.is_loopback())
}
