//! The Chat Completions wire format (`POST {base}/chat/completions`), spoken by OpenAI and
//! by every compatible server: request and reply types and their mapping to the
//! provider-neutral conversation.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agent::Usage;
use crate::llm::types::{ChatRequest, ChatResponse, Message, StopReason, ToolArguments, ToolCall};

#[derive(Serialize)]
struct Request<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    /// OpenAI's current name for the cap (its reasoning models refuse `max_tokens`).
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    /// The name compatible servers know.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    Assistant {
        /// `null` when the turn only called tools.
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireCallOut<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

#[derive(Serialize)]
struct WireCallOut<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionOut<'a>,
}

#[derive(Serialize)]
struct WireFunctionOut<'a> {
    name: &'a str,
    /// A JSON text, as the API sends and expects it.
    arguments: String,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionDef<'a>,
}

#[derive(Serialize)]
struct WireFunctionDef<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

/// The request body for `request`; `official` picks OpenAI's cap field over the compatible one.
pub(crate) fn request_body(model: &str, request: &ChatRequest, max_tokens: u32, official: bool) -> Vec<u8> {
    let messages = request
        .messages
        .iter()
        .map(|message| match message {
            Message::System(text) => WireMessage::System { content: text },
            Message::User(text) => WireMessage::User { content: text },
            Message::Assistant(turn) => WireMessage::Assistant {
                // `null` content is valid only beside tool calls.
                content: turn.text.as_deref().or(turn.tool_calls.is_empty().then_some("")),
                tool_calls: turn
                    .tool_calls
                    .iter()
                    .map(|call| WireCallOut {
                        id: &call.id,
                        kind: "function",
                        function: WireFunctionOut { name: &call.name, arguments: call.arguments.to_text() },
                    })
                    .collect(),
            },
            Message::ToolResult(result) => {
                WireMessage::Tool { tool_call_id: &result.call_id, content: &result.content }
            }
        })
        .collect();
    let tools = request
        .tools
        .iter()
        .map(|tool| WireTool {
            kind: "function",
            function: WireFunctionDef {
                name: &tool.name,
                description: &tool.description,
                parameters: &tool.parameters,
            },
        })
        .collect();
    let cap = request.max_output_tokens.unwrap_or(max_tokens);
    let body = Request {
        model,
        messages,
        tools,
        max_completion_tokens: official.then_some(cap),
        max_tokens: (!official).then_some(cap),
    };
    serde_json::to_vec(&body).expect("a request of strings and JSON values serializes because every key is a string")
}

#[derive(Deserialize)]
struct Reply {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Choice {
    message: ReplyMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ReplyMessage {
    /// A string, `null`, or (some compatible servers) a list of `{type, text}` parts.
    #[serde(default)]
    content: Value,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ReplyCall>,
}

#[derive(Deserialize)]
struct ReplyCall {
    #[serde(default)]
    id: Option<String>,
    function: ReplyFunction,
}

#[derive(Deserialize)]
struct ReplyFunction {
    name: String,
    /// A JSON text per the API; some compatible servers send the object itself.
    #[serde(default)]
    arguments: Value,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|part| part.get("text").and_then(Value::as_str)).collect(),
        _ => String::new(),
    }
}

/// The neutral reply from a 2xx body, or why the body is not a Chat Completions reply.
pub(crate) fn parse_reply(body: &[u8]) -> Result<ChatResponse, String> {
    let reply: Reply = serde_json::from_slice(body).map_err(|error| format!("not a chat completion: {error}"))?;
    let Some(choice) = reply.choices.into_iter().next() else {
        return Err("a chat completion without choices".to_owned());
    };
    let mut text = content_text(&choice.message.content);
    let refused = text.is_empty() && choice.message.refusal.is_some();
    if refused {
        text = choice.message.refusal.unwrap_or_default();
    }
    let tool_calls = choice
        .message
        .tool_calls
        .into_iter()
        .enumerate()
        .map(|(index, call)| ToolCall {
            // llama.cpp and others have sent calls without ids; the result still needs one.
            id: call.id.filter(|id| !id.is_empty()).unwrap_or_else(|| format!("call_{index}")),
            name: call.function.name,
            arguments: match call.function.arguments {
                Value::String(raw) => ToolArguments::from_text(&raw),
                Value::Null => ToolArguments::from_text(""),
                other => ToolArguments::from_value(other),
            },
        })
        .collect::<Vec<_>>();
    let stop_reason = match choice.finish_reason.as_deref() {
        _ if refused => StopReason::ContentFilter,
        Some("stop") if !tool_calls.is_empty() => StopReason::ToolUse,
        Some("stop") => StopReason::EndTurn,
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        Some("length") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::ContentFilter,
        _ => StopReason::Other,
    };
    let usage = reply.usage.map_or(Usage::default(), |usage| Usage {
        input_tokens: usage.prompt_tokens,
        output_tokens: usage.completion_tokens,
    });
    Ok(ChatResponse {
        text,
        tool_calls,
        stop_reason,
        provider_stop_reason: choice.finish_reason,
        usage,
        model: reply.model,
    })
}
