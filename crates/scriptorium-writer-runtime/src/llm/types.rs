//! The provider-neutral conversation the writer agent holds with a model: messages, tool
//! definitions, tool calls and the model's reply, independent of any wire format.

use serde_json::Value;

use crate::agent::{ProviderReason, Usage};

/// One message of a conversation, in the order the model sees them.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// Instructions for the model. Anthropic takes them as one top-level `system` field, so
    /// its client joins every system message with a blank line; OpenAI keeps them in place.
    System(String),
    /// A user turn (for the writer: the task and the batch).
    User(String),
    /// A model turn, sent back unchanged so the model sees its own tool calls.
    Assistant(AssistantMessage),
    /// The result of one tool call, answering the [`ToolCall`] with the same id.
    ToolResult(ToolResult),
}

/// A model turn: optional text and the tool calls it made.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AssistantMessage {
    /// The visible text, if any.
    pub text: Option<String>,
    /// The tool calls, in the order the model made them.
    pub tool_calls: Vec<ToolCall>,
}

/// What the runtime answers to one tool call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolResult {
    /// The id of the call this answers ([`ToolCall::id`]).
    pub call_id: String,
    /// The tool's output, or the error and its hint.
    pub content: String,
    /// Whether the call failed. Anthropic carries it as `is_error`; Chat Completions has
    /// no such field, so there the content itself must say so.
    pub is_error: bool,
}

/// A tool the model may call, its parameters described by a JSON Schema object.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDefinition {
    /// The name the model calls it by.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// A JSON Schema of type `object` for its arguments.
    pub parameters: Value,
}

/// The arguments of a tool call.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolArguments {
    /// A JSON object.
    Parsed(Value),
    /// Not a JSON object: the raw text and why it was refused, so the agent can answer the
    /// model with a tool error instead of failing the run.
    Malformed {
        /// The arguments exactly as the provider sent them.
        raw: String,
        /// What is wrong with them.
        error: String,
    },
}

impl ToolArguments {
    /// Read arguments sent as a JSON text (Chat Completions sends a string).
    pub fn from_text(raw: &str) -> ToolArguments {
        match serde_json::from_str::<Value>(raw) {
            Ok(value) => ToolArguments::from_value(value),
            Err(error) => ToolArguments::Malformed { raw: raw.to_owned(), error: error.to_string() },
        }
    }

    /// Read arguments sent as a JSON value; anything but an object is malformed.
    pub fn from_value(value: Value) -> ToolArguments {
        if value.is_object() {
            ToolArguments::Parsed(value)
        } else {
            ToolArguments::Malformed {
                raw: value.to_string(),
                error: "tool arguments are not a JSON object".to_owned(),
            }
        }
    }

    /// The arguments as JSON text, as they would be sent back to the provider.
    pub fn to_text(&self) -> String {
        match self {
            ToolArguments::Parsed(value) => value.to_string(),
            ToolArguments::Malformed { raw, .. } => raw.clone(),
        }
    }
}

/// One tool call the model made.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The provider's call id (`call_…`, `toolu_…`); a result answers it.
    pub id: String,
    /// The tool's name, as the model wrote it (it may name no defined tool).
    pub name: String,
    /// The arguments.
    pub arguments: ToolArguments,
}

/// What the runtime asks of the model in one call.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChatRequest {
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools offered (may be empty).
    pub tools: Vec<ToolDefinition>,
    /// A cap on the reply's tokens; `None` uses the client's configured default.
    pub max_output_tokens: Option<u32>,
}

/// Why the model stopped, in the provider-neutral set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The model finished its turn (`stop`, `end_turn`).
    EndTurn,
    /// The model wants tool results (`tool_calls`, `tool_use`).
    ToolUse,
    /// The reply hit the token cap (`length`, `max_tokens`).
    MaxTokens,
    /// A stop sequence matched.
    StopSequence,
    /// The provider filtered or refused the reply (`content_filter`, `refusal`).
    ContentFilter,
    /// The conversation no longer fits the model's context window.
    ContextWindowExceeded,
    /// The provider paused a long turn; sending the reply back continues it.
    PauseTurn,
    /// Any other value, or none.
    Other,
}

impl StopReason {
    /// The provider reason a run ending here fails with, if this stop is a failure.
    pub fn failure(&self) -> Option<ProviderReason> {
        match self {
            StopReason::ContentFilter => Some(ProviderReason::Policy),
            StopReason::ContextWindowExceeded => Some(ProviderReason::Context),
            _ => None,
        }
    }
}

/// The model's reply to one call.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatResponse {
    /// The reply's text, blocks joined in order (empty when it only called tools).
    pub text: String,
    /// The tool calls, in order (several for parallel calls).
    pub tool_calls: Vec<ToolCall>,
    /// Why the model stopped.
    pub stop_reason: StopReason,
    /// The stop reason exactly as the provider wrote it, for the run's trajectory.
    pub provider_stop_reason: Option<String>,
    /// Tokens this call used (Anthropic's cache reads and writes count as input).
    pub usage: Usage,
    /// The model that answered, as the provider names it.
    pub model: Option<String>,
}

impl ChatResponse {
    /// The reply as the assistant message to append before the tool results.
    pub fn to_message(&self) -> Message {
        let text = (!self.text.is_empty()).then(|| self.text.clone());
        Message::Assistant(AssistantMessage { text, tool_calls: self.tool_calls.clone() })
    }
}
