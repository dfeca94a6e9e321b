//! The one place that speaks HTTP: a JSON POST over `ureq` (rustls, synchronous), turning
//! every transport outcome into a reply or a classified [`LlmError`]. No `ureq` type leaves
//! this file.

use crate::agent::ProviderReason;
use crate::llm::config::{Timeouts, is_loopback};
use crate::llm::error::LlmError;

/// The largest reply body read; a model reply is far smaller.
const MAX_BODY_BYTES: u64 = 32 * 1024 * 1024;

/// A reply with any status.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
    pub(crate) retry_after: Option<String>,
    pub(crate) retry_after_ms: Option<String>,
    /// The provider's `x-should-retry` verdict, when it sends one.
    pub(crate) should_retry: Option<bool>,
}

/// An HTTP client with the configured timeouts.
pub(crate) struct Transport {
    agent: ureq::Agent,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Transport")
    }
}

impl Transport {
    pub(crate) fn new(base_url: &str, timeouts: Timeouts) -> Self {
        let builder = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(timeouts.connect))
            .timeout_global(Some(timeouts.request))
            .max_redirects(0)
            .user_agent(concat!("scriptorium/", env!("CARGO_PKG_VERSION")));
        // A model server on this machine is never behind the environment's proxy.
        let builder = if is_loopback(base_url) { builder.proxy(None) } else { builder };
        Transport { agent: builder.build().into() }
    }

    /// POST `body` as JSON to `url` with `headers`.
    pub(crate) fn post_json(&self, url: &str, headers: &[(&str, &str)], body: &[u8]) -> Result<Reply, LlmError> {
        let mut request = self.agent.post(url).header("content-type", "application/json");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let mut response = request.send(body).map_err(transport_error)?;
        let header = |name: &str| response.headers().get(name).and_then(|value| value.to_str().ok()).map(str::to_owned);
        let retry_after = header("retry-after");
        let retry_after_ms = header("retry-after-ms");
        let should_retry = header("x-should-retry").and_then(|value| match value.trim() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        });
        let status = response.status().as_u16();
        let body = response.body_mut().with_config().limit(MAX_BODY_BYTES).read_to_vec().map_err(body_error)?;
        Ok(Reply { status, body, retry_after, retry_after_ms, should_retry })
    }
}

fn transport_error(error: ureq::Error) -> LlmError {
    use ureq::Timeout;
    match &error {
        // Connecting again may reach a healthy host: treat like a transport failure.
        ureq::Error::Timeout(Timeout::Connect | Timeout::Resolve) => {
            LlmError::new(ProviderReason::Transport, true, format!("model server unreachable: {error}"))
        }
        ureq::Error::Timeout(_) => {
            LlmError::new(ProviderReason::Timeout, true, format!("model call timed out: {error}"))
        }
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
            LlmError::new(ProviderReason::Timeout, true, format!("model call timed out: {error}"))
        }
        ureq::Error::BadUri(_) | ureq::Error::Http(_) | ureq::Error::RedirectFailed | ureq::Error::TooManyRedirects => {
            LlmError::new(ProviderReason::Invalid, false, format!("model request invalid: {error}"))
        }
        _ => LlmError::new(ProviderReason::Transport, true, format!("model transport failed: {error}")),
    }
}

fn body_error(error: ureq::Error) -> LlmError {
    match &error {
        ureq::Error::BodyExceedsLimit(_) => {
            LlmError::new(ProviderReason::Provider, false, format!("model reply too large: {error}"))
        }
        _ => match transport_error(error) {
            timeout if timeout.reason() == ProviderReason::Timeout => timeout,
            other => LlmError::new(ProviderReason::Transport, true, format!("model reply cut short: {other}")),
        },
    }
}
