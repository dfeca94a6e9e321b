//! The Messages client against the scripted model server: `x-api-key` and
//! `anthropic-version`, top-level `system`, `tool_use` / `tool_result` blocks (results first
//! in their user turn), `stop_reason`, usage, and the errors as Anthropic sends them.

use std::sync::Arc;
use std::time::Duration;

use scriptorium_writer_runtime::llm::{ChatModel, LlmClient, Message, StopReason, ToolArguments, ToolResult};
use scriptorium_writer_runtime::{MemoryWriteFailureCode as Code, ProviderReason};
use serde_json::json;

use crate::llm_openai::{pass_code, request};
use crate::model_server::harness::{RecordingSleeper, client};
use crate::model_server::{ModelServer, Step, Wire, anthropic};
use crate::support::TestResult;

const KEY: &str = "sk-ant-api03-test-SECRET-key";

fn start(script: Vec<Step>) -> (ModelServer, LlmClient, Arc<RecordingSleeper>) {
    let server = ModelServer::start(Wire::Anthropic, Some(KEY), script);
    let sleeper = Arc::new(RecordingSleeper::default());
    let client = client("anthropic/claude-sonnet-4-5", &server.base_url(Wire::Anthropic), Some(KEY), &sleeper);
    (server, client, sleeper)
}

#[test]
fn a_text_reply_from_a_faithful_request() -> TestResult {
    let mut reply = anthropic::message(json!([{"type": "text", "text": "Nothing new."}]), "end_turn", 2000, 12);
    reply["usage"]["cache_read_input_tokens"] = json!(300);
    reply["usage"]["cache_creation_input_tokens"] = json!(50);
    let (server, client, _) = start(vec![Step::ok(reply)]);
    let response = client.complete(&request("hello"))?;
    assert_eq!(response.text, "Nothing new.");
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    assert_eq!(response.provider_stop_reason.as_deref(), Some("end_turn"));
    // Cache reads and writes are input the call used.
    assert_eq!((response.usage.input_tokens, response.usage.output_tokens), (2350, 12));
    let received = server.finish();
    assert_eq!(received[0].violations, Vec::<String>::new());
    let body = &received[0].body;
    assert_eq!(body["system"], "You keep the memory.");
    assert_eq!(body["messages"], json!([{"role": "user", "content": [{"type": "text", "text": "hello"}]}]));
    assert_eq!(body["max_tokens"], 8192);
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(body["tools"][0]["name"], "Read");
    assert_eq!(body["tools"][0]["input_schema"]["required"], json!(["file_path"]));
    assert_eq!(received[0].header("content-type"), Some("application/json"));
    Ok(())
}

#[test]
fn parallel_tool_use_round_trips_with_results_first() -> TestResult {
    let first = anthropic::message(
        json!([
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"file_path": "topics/core.md"}},
            {"type": "tool_use", "id": "toolu_02", "name": "Glob", "input": {"pattern": "topics/**/*.md"}},
        ]),
        "tool_use",
        1500,
        60,
    );
    let done = anthropic::message(json!([{"type": "text", "text": "Filed."}]), "end_turn", 1700, 4);
    let (server, client, _) = start(vec![Step::ok(first), Step::ok(done)]);
    let mut conversation = request("the batch");
    let reply = client.complete(&conversation)?;
    assert_eq!(reply.stop_reason, StopReason::ToolUse);
    assert_eq!(reply.text, "Let me look.");
    let ids: Vec<&str> = reply.tool_calls.iter().map(|call| call.id.as_str()).collect();
    assert_eq!(ids, ["toolu_01", "toolu_02"]);
    assert_eq!(reply.tool_calls[1].arguments, ToolArguments::Parsed(json!({"pattern": "topics/**/*.md"})));
    conversation.messages.push(reply.to_message());
    conversation.messages.push(Message::ToolResult(ToolResult {
        call_id: "toolu_01".into(),
        content: "# Core".into(),
        is_error: false,
    }));
    conversation.messages.push(Message::ToolResult(ToolResult {
        call_id: "toolu_02".into(),
        content: "unknown tool Glob".into(),
        is_error: true,
    }));
    conversation.messages.push(Message::User("Keep going.".into()));
    assert_eq!(client.complete(&conversation)?.text, "Filed.");
    let received = server.finish();
    assert_eq!(received[1].violations, Vec::<String>::new());
    let messages = &received[1].body["messages"];
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["content"][0], json!({"type": "text", "text": "Let me look."}));
    assert_eq!(
        messages[1]["content"][1],
        json!({"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"file_path": "topics/core.md"}})
    );
    // Both results and the follow-up text share one user turn, results first.
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": "# Core"},
            {"type": "tool_result", "tool_use_id": "toolu_02", "content": "unknown tool Glob", "is_error": true},
            {"type": "text", "text": "Keep going."},
        ]})
    );
    assert_eq!(messages.as_array().map(Vec::len), Some(3));
    Ok(())
}

#[test]
fn a_tool_use_input_that_is_not_an_object_is_surfaced() -> TestResult {
    let reply = anthropic::message(
        json!([{"type": "tool_use", "id": "toolu_9", "name": "Write", "input": "topics/a.md"}]),
        "tool_use",
        1,
        1,
    );
    let (server, client, _) = start(vec![Step::ok(reply)]);
    let response = client.complete(&request("x"))?;
    assert!(
        matches!(&response.tool_calls[0].arguments, ToolArguments::Malformed { raw, .. } if raw == "\"topics/a.md\"")
    );
    server.finish();
    Ok(())
}

#[test]
fn an_overloaded_529_and_a_rate_limit_are_retried() -> TestResult {
    let overloaded = Step::error(529, anthropic::error("overloaded_error", "Overloaded"));
    let limited = Step::error(
        429,
        anthropic::error("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
    )
    .header("retry-after", "7");
    let ok = Step::ok(anthropic::message(json!([{"type": "text", "text": "ok"}]), "end_turn", 1, 1));
    let (server, client, sleeper) = start(vec![overloaded, limited, ok]);
    assert_eq!(client.complete(&request("x"))?.text, "ok");
    assert_eq!(sleeper.waits(), vec![Duration::from_millis(375), Duration::from_secs(7)]);
    let received = server.finish();
    assert_eq!(received.len(), 3);
    assert!(received.iter().all(|request| request.violations.is_empty()));
    Ok(())
}

#[test]
fn a_spend_limit_429_is_not_retried() -> TestResult {
    let mut body = anthropic::error("rate_limit_error", "You have reached your specified API usage limits.");
    body["error"]["details"] = json!({"error_code": "enforced_spend_limit_reached"});
    let (server, client, sleeper) = start(vec![Step::error(429, body)]);
    let error = client.complete(&request("x")).expect_err("spend limit");
    assert_eq!(pass_code(&error), (Code::ModelRateLimit, false));
    assert!(sleeper.waits().is_empty());
    server.finish();
    Ok(())
}

#[test]
fn authentication_and_permission_errors_are_final() -> TestResult {
    let auth = Step::error(401, anthropic::error("authentication_error", &format!("invalid x-api-key {KEY}")));
    let denied = Step::error(
        403,
        anthropic::error("permission_error", "Your API key does not have permission to use the specified resource."),
    );
    let (server, client, sleeper) = start(vec![auth, denied]);
    let error = client.complete(&request("x")).expect_err("401");
    assert_eq!(error.reason(), ProviderReason::Auth);
    assert_eq!(pass_code(&error), (Code::ModelAuthentication, false));
    assert_eq!(error.attempts(), 1);
    assert!(!error.to_string().contains(KEY) && !format!("{error:?}").contains("SECRET"));
    let error = client.complete(&request("x")).expect_err("403");
    assert_eq!(pass_code(&error), (Code::ModelAuthorization, false));
    assert!(sleeper.waits().is_empty());
    assert_eq!(server.finish().len(), 2);
    Ok(())
}

#[test]
fn context_errors_as_anthropic_sends_them() -> TestResult {
    let too_long = Step::error(
        400,
        anthropic::error("invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum"),
    );
    let too_large =
        Step::error(413, anthropic::error("request_too_large", "Request exceeds the maximum allowed number of bytes."));
    let window = Step::ok(anthropic::message(
        json!([{"type": "text", "text": "partial"}]),
        "model_context_window_exceeded",
        199_000,
        1000,
    ));
    let (server, client, sleeper) = start(vec![too_long, too_large, window]);
    let error = client.complete(&request("x")).expect_err("prompt too long");
    assert_eq!(pass_code(&error), (Code::ModelContextLength, false));
    let error = client.complete(&request("x")).expect_err("request too large");
    assert_eq!(pass_code(&error), (Code::ModelContextLength, false));
    // A reply that ran out of window is a reply; its stop reason says what the run fails with.
    let reply = client.complete(&request("x"))?;
    assert_eq!(reply.stop_reason, StopReason::ContextWindowExceeded);
    assert_eq!(reply.stop_reason.failure(), Some(ProviderReason::Context));
    assert!(sleeper.waits().is_empty());
    server.finish();
    Ok(())
}

#[test]
fn an_invalid_request_is_not_retried() -> TestResult {
    let (server, client, _) =
        start(vec![Step::error(400, anthropic::error("invalid_request_error", "messages: roles must alternate"))]);
    let error = client.complete(&request("x")).expect_err("400");
    assert_eq!(pass_code(&error), (Code::ModelInvalidRequest, false));
    assert_eq!(error.attempts(), 1);
    server.finish();
    Ok(())
}

#[test]
fn a_truncated_body_then_a_whole_one() -> TestResult {
    let whole = anthropic::message(json!([{"type": "text", "text": "ok"}]), "end_turn", 1, 1).to_string();
    let cut = Step::Truncated { body: whole[..20].to_owned(), missing: whole.len() - 20 };
    let (server, client, sleeper) = start(vec![cut, Step::Reply { status: 200, headers: Vec::new(), body: whole }]);
    assert_eq!(client.complete(&request("x"))?.text, "ok");
    assert_eq!(sleeper.waits().len(), 1);
    assert_eq!(server.finish().len(), 2);
    Ok(())
}
