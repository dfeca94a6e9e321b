//! The writer's model clients (issue 15): a provider-neutral conversation with tool calls
//! ([`ChatRequest`], [`ChatResponse`]), answered over HTTP by OpenAI's Chat Completions (and
//! every compatible server) or Anthropic's Messages API, synchronously, with retries inside
//! one call and failures classified as spec 02 §2.9 asks.
//!
//! ```no_run
//! use scriptorium_writer_runtime::llm::{ChatModel, ChatRequest, ClientConfig, LlmClient, Message, ModelSpec};
//!
//! let spec = ModelSpec::parse("openai/gpt-4.1-mini")?;
//! let config = ClientConfig::resolve(spec, None, None, &|name| std::env::var(name).ok())?;
//! let client = LlmClient::new(config);
//! let request = ChatRequest { messages: vec![Message::User("Hello".into())], ..ChatRequest::default() };
//! let reply = client.complete(&request)?;
//! println!("{} ({} tokens in)", reply.text, reply.usage.input_tokens);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Keys are an [`ApiKey`], whose `Debug` and `Display` never show it; error messages are
//! scrubbed of the key even when a provider echoes it.

mod anthropic;
mod client;
mod config;
mod error;
mod http;
mod openai;
mod retry;
mod types;

pub use self::client::{ChatModel, LlmClient};
pub use self::config::{
    ANTHROPIC_API_KEY_ENV, ANTHROPIC_BASE_URL, ANTHROPIC_VERSION, ApiKey, ClientConfig, DEFAULT_MAX_OUTPUT_TOKENS,
    ModelSpec, OPENAI_API_KEY_ENV, OPENAI_BASE_URL, Provider, Timeouts,
};
pub use self::error::{ConfigError, ConfigErrorCode, LlmError};
pub use self::retry::{Jitter, RetryPolicy, Sleeper, ThreadSleeper, XorShiftJitter};
pub use self::types::{
    AssistantMessage, ChatRequest, ChatResponse, Message, StopReason, ToolArguments, ToolCall, ToolDefinition,
    ToolResult,
};

#[cfg(test)]
mod tests;
