//! The Anthropic Messages wire format (`POST {base}/v1/messages`): request and reply types
//! with `tool_use` / `tool_result` content blocks, and their mapping to the
//! provider-neutral conversation.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::agent::Usage;
use crate::llm::types::{ChatRequest, ChatResponse, Message, StopReason, ToolArguments, ToolCall};

#[derive(Serialize)]
struct Request<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<String>,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: Vec<Block<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text {
        text: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Value,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

#[derive(Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
}

/// Append `block` to the last message if it has `role`, else start a message: the API
/// wants user and assistant turns to alternate, and several tool results in one turn.
fn push<'a>(messages: &mut Vec<WireMessage<'a>>, role: &'static str, block: Block<'a>) {
    match messages.last_mut() {
        Some(last) if last.role == role => last.content.push(block),
        _ => messages.push(WireMessage { role, content: vec![block] }),
    }
}

/// The request body for `request`.
pub(crate) fn request_body(model: &str, request: &ChatRequest, max_tokens: u32) -> Vec<u8> {
    let mut system = Vec::new();
    let mut messages = Vec::new();
    for message in &request.messages {
        match message {
            Message::System(text) => system.push(text.as_str()),
            // Empty text blocks are refused by the API.
            Message::User(text) if text.is_empty() => {}
            Message::User(text) => push(&mut messages, "user", Block::Text { text }),
            Message::Assistant(turn) => {
                if let Some(text) = turn.text.as_deref().filter(|text| !text.is_empty()) {
                    push(&mut messages, "assistant", Block::Text { text });
                }
                for call in &turn.tool_calls {
                    let input = match &call.arguments {
                        ToolArguments::Parsed(value) => value.clone(),
                        // `input` must be an object; the model sees the tool error in the result.
                        ToolArguments::Malformed { .. } => Value::Object(Map::new()),
                    };
                    push(&mut messages, "assistant", Block::ToolUse { id: &call.id, name: &call.name, input });
                }
            }
            Message::ToolResult(result) => push(
                &mut messages,
                "user",
                Block::ToolResult { tool_use_id: &result.call_id, content: &result.content, is_error: result.is_error },
            ),
        }
    }
    // A user turn that answers tool calls must begin with the tool_result blocks.
    for message in &mut messages {
        message.content.sort_by_key(|block| !matches!(block, Block::ToolResult { .. }));
    }
    let tools = request
        .tools
        .iter()
        .map(|tool| WireTool { name: &tool.name, description: &tool.description, input_schema: &tool.parameters })
        .collect();
    let body = Request {
        model,
        max_tokens: request.max_output_tokens.unwrap_or(max_tokens),
        system: (!system.is_empty()).then(|| system.join("\n\n")),
        messages,
        tools,
    };
    serde_json::to_vec(&body).expect("a request of strings and JSON values serializes because every key is a string")
}

#[derive(Deserialize)]
struct Reply {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    model: Option<String>,
    content: Vec<Value>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

/// The neutral reply from a 2xx body, or why the body is not a Messages reply.
pub(crate) fn parse_reply(body: &[u8]) -> Result<ChatResponse, String> {
    let reply: Reply = serde_json::from_slice(body).map_err(|error| format!("not a message: {error}"))?;
    if reply.kind != "message" {
        return Err(format!("a reply of type `{}`, not `message`", reply.kind));
    }
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    // Other block types (thinking is off; server tools are not offered) carry nothing for the writer.
    for block in reply.content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(block.get("text").and_then(Value::as_str).unwrap_or_default()),
            Some("tool_use") => tool_calls.push(ToolCall {
                id: block.get("id").and_then(Value::as_str).unwrap_or_default().to_owned(),
                name: block.get("name").and_then(Value::as_str).unwrap_or_default().to_owned(),
                arguments: ToolArguments::from_value(block.get("input").cloned().unwrap_or(Value::Null)),
            }),
            _ => {}
        }
    }
    let stop_reason = match reply.stop_reason.as_deref() {
        Some("end_turn") => StopReason::EndTurn,
        Some("tool_use") => StopReason::ToolUse,
        Some("max_tokens") => StopReason::MaxTokens,
        Some("stop_sequence") => StopReason::StopSequence,
        Some("pause_turn") => StopReason::PauseTurn,
        Some("refusal") => StopReason::ContentFilter,
        Some("model_context_window_exceeded") => StopReason::ContextWindowExceeded,
        _ => StopReason::Other,
    };
    let usage = reply.usage.map_or(Usage::default(), |usage| Usage {
        input_tokens: usage.input_tokens
            + usage.cache_creation_input_tokens.unwrap_or(0)
            + usage.cache_read_input_tokens.unwrap_or(0),
        output_tokens: usage.output_tokens,
    });
    Ok(ChatResponse {
        text,
        tool_calls,
        stop_reason,
        provider_stop_reason: reply.stop_reason,
        usage,
        model: reply.model,
    })
}
