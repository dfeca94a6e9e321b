//! The model client: one synchronous call (`complete`) that speaks the configured
//! provider's wire format, retries what is worth retrying within the call, and classifies
//! the failure that remains.

use std::sync::Arc;
use std::time::Duration;

use crate::agent::ProviderReason;
use crate::clock::{Clock, SystemClock};
use crate::llm::config::{ANTHROPIC_VERSION, ClientConfig, Provider};
use crate::llm::error::{LlmError, classify_reply};
use crate::llm::http::Transport;
use crate::llm::retry::{Jitter, Sleeper, ThreadSleeper, XorShiftJitter, retry_after};
use crate::llm::types::{ChatRequest, ChatResponse};
use crate::llm::{anthropic, openai};

/// A model that answers a conversation: what the writer agent's loop calls.
pub trait ChatModel: Send + Sync {
    /// One model turn for `request`: text, tool calls, stop reason and usage.
    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError>;
}

/// A failed attempt: its error, the wait the reply asked for, and whether the provider
/// allows another try (`x-should-retry: false` forbids it).
struct Failed {
    error: LlmError,
    wait: Option<Duration>,
    may_retry: bool,
}

impl Failed {
    fn plain(error: LlmError) -> Self {
        Failed { error, wait: None, may_retry: true }
    }
}

/// The HTTP client for the configured provider. [`ChatModel::complete`] makes up to
/// [`RetryPolicy::max_attempts`](crate::llm::RetryPolicy) attempts: 429 (unless the quota
/// is exhausted), 5xx, 408/409, transport failures and truncated bodies are retried after
/// the reply's `Retry-After` or a jittered backoff; everything else, and a request timeout,
/// ends the call with its classified [`LlmError`], the key scrubbed from its message.
pub struct LlmClient {
    config: ClientConfig,
    transport: Transport,
    sleeper: Arc<dyn Sleeper>,
    jitter: Arc<dyn Jitter>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmClient").field("config", &self.config).finish_non_exhaustive()
    }
}

impl LlmClient {
    /// A client for `config`, sleeping for real between retries.
    pub fn new(config: ClientConfig) -> Self {
        let transport = Transport::new(&config.base_url, config.timeouts);
        LlmClient {
            config,
            transport,
            sleeper: Arc::new(ThreadSleeper),
            jitter: Arc::new(XorShiftJitter::from_entropy()),
            clock: Arc::new(SystemClock),
        }
    }

    /// Wait between retries with `sleeper` instead of the thread's sleep.
    pub fn with_sleeper(mut self, sleeper: Arc<dyn Sleeper>) -> Self {
        self.sleeper = sleeper;
        self
    }

    /// Draw the backoff jitter from `jitter`.
    pub fn with_jitter(mut self, jitter: Arc<dyn Jitter>) -> Self {
        self.jitter = jitter;
        self
    }

    /// Read "now" from `clock` (for a `Retry-After` given as a date).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The configuration.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    fn endpoint(&self) -> String {
        match self.config.spec.provider {
            Provider::Anthropic => format!("{}/v1/messages", self.config.base_url),
            Provider::OpenAi | Provider::OpenAiCompatible => format!("{}/chat/completions", self.config.base_url),
        }
    }

    fn body(&self, request: &ChatRequest) -> Vec<u8> {
        let (model, cap) = (self.config.spec.model.as_str(), self.config.max_output_tokens);
        match self.config.spec.provider {
            Provider::Anthropic => anthropic::request_body(model, request, cap),
            Provider::OpenAi => openai::request_body(model, request, cap, true),
            Provider::OpenAiCompatible => openai::request_body(model, request, cap, false),
        }
    }

    fn parse(&self, body: &[u8]) -> Result<ChatResponse, String> {
        match self.config.spec.provider {
            Provider::Anthropic => anthropic::parse_reply(body),
            Provider::OpenAi | Provider::OpenAiCompatible => openai::parse_reply(body),
        }
    }

    /// One attempt; a failure says what the reply asked of the next one.
    fn attempt(&self, url: &str, body: &[u8]) -> Result<ChatResponse, Failed> {
        let provider = self.config.spec.provider.as_str();
        let bearer;
        let mut headers: Vec<(&str, &str)> = Vec::new();
        match (&self.config.spec.provider, &self.config.api_key) {
            (Provider::Anthropic, key) => {
                if let Some(key) = key {
                    headers.push(("x-api-key", key.expose()));
                }
                headers.push(("anthropic-version", ANTHROPIC_VERSION));
            }
            (_, Some(key)) => {
                bearer = format!("Bearer {}", key.expose());
                headers.push(("authorization", &bearer));
            }
            (_, None) => {}
        }
        let reply = self.transport.post_json(url, &headers, body).map_err(Failed::plain)?;
        if (200..300).contains(&reply.status) {
            return self.parse(&reply.body).map_err(|why| {
                let error =
                    LlmError::new(ProviderReason::Provider, true, format!("{provider}: malformed reply: {why}"));
                Failed::plain(error.with_status(reply.status))
            });
        }
        let wait = retry_after(reply.retry_after_ms.as_deref(), reply.retry_after.as_deref(), self.clock.as_ref());
        let error = classify_reply(provider, reply.status, &reply.body);
        Err(Failed { error, wait, may_retry: reply.should_retry != Some(false) })
    }
}

impl ChatModel for LlmClient {
    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let url = self.endpoint();
        let body = self.body(request);
        let policy = self.config.retry;
        let mut attempt = 1;
        loop {
            let Failed { error, wait: asked, may_retry } = match self.attempt(&url, &body) {
                Ok(response) => return Ok(response),
                Err(failed) => failed,
            };
            // A timed-out call may have run the model to the end: the pass retries it, not the call.
            let worth_it = error.retryable() && error.reason() != ProviderReason::Timeout && may_retry;
            let wait = match asked {
                Some(wait) if wait > policy.max_retry_after => None,
                Some(wait) => Some(wait),
                None => Some(policy.backoff(attempt - 1, self.jitter.unit())),
            };
            match wait.filter(|_| worth_it && attempt < policy.max_attempts) {
                Some(wait) => self.sleeper.sleep(wait),
                None => return Err(error.with_attempts(attempt).redacted(self.config.api_key.as_ref())),
            }
            attempt += 1;
        }
    }
}
