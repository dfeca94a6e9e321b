//! The Chat Completions client against the scripted model server: requests as the API
//! documents them, text and (parallel) tool-call replies, usage, and every fault the brief
//! names, each ending in the spec 02 §2.9 code and verdict.

use std::sync::Arc;
use std::time::Duration;

use scriptorium_writer_runtime::llm::{
    ChatModel, ChatRequest, LlmClient, Message, StopReason, ToolArguments, ToolDefinition, ToolResult,
};
use scriptorium_writer_runtime::{AgentError, MemoryWriteFailureCode as Code, PassError, ProviderReason, classify};
use serde_json::json;

use crate::model_server::harness::{RecordingSleeper, client};
use crate::model_server::{ModelServer, Step, Wire, openai};
use crate::support::TestResult;

const KEY: &str = "sk-test-0123456789abcdefSECRET";

pub(crate) fn tools() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition {
            name: "Read".into(),
            description: "Read a file of the stage.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"file_path": {"type": "string"}},
                "required": ["file_path"],
                "additionalProperties": false,
            }),
        },
        ToolDefinition {
            name: "Write".into(),
            description: "Create or replace a file of the stage.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["file_path", "content"],
            }),
        },
    ]
}

pub(crate) fn request(user: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::System("You keep the memory.".into()), Message::User(user.into())],
        tools: tools(),
        max_output_tokens: None,
    }
}

fn start(script: Vec<Step>) -> (ModelServer, LlmClient, Arc<RecordingSleeper>) {
    let server = ModelServer::start(Wire::OpenAi, Some(KEY), script);
    let sleeper = Arc::new(RecordingSleeper::default());
    let client = client("openai/gpt-4.1-mini", &server.base_url(Wire::OpenAi), Some(KEY), &sleeper);
    (server, client, sleeper)
}

/// The code the write pass would report for this failure, through the crate's classifier.
pub(crate) fn pass_code(error: &scriptorium_writer_runtime::llm::LlmError) -> (Code, bool) {
    let failure = classify(&PassError::Agent(AgentError::from(error.clone())));
    (failure.reason_code, failure.retryable)
}

#[test]
fn a_text_reply_with_usage_from_a_faithful_request() -> TestResult {
    let (server, client, sleeper) = start(vec![Step::ok(openai::text("Nothing to record.", 1200, 7))]);
    let reply = client.complete(&request("hello"))?;
    assert_eq!(reply.text, "Nothing to record.");
    assert_eq!(reply.stop_reason, StopReason::EndTurn);
    assert_eq!(reply.provider_stop_reason.as_deref(), Some("stop"));
    assert_eq!((reply.usage.input_tokens, reply.usage.output_tokens), (1200, 7));
    assert_eq!(reply.model.as_deref(), Some("gpt-4.1-mini-2025-04-14"));
    assert!(reply.tool_calls.is_empty());
    assert!(sleeper.waits().is_empty());
    let received = server.finish();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].violations, Vec::<String>::new());
    let body = &received[0].body;
    assert_eq!(body["model"], "gpt-4.1-mini");
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You keep the memory."},
            {"role": "user", "content": "hello"},
        ])
    );
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][1]["function"]["parameters"]["required"], json!(["file_path", "content"]));
    // OpenAI's own API gets the current cap field; compatible servers get max_tokens.
    assert_eq!(body["max_completion_tokens"], 8192);
    assert!(body.get("max_tokens").is_none());
    Ok(())
}

#[test]
fn parallel_tool_calls_round_trip_with_their_results() -> TestResult {
    let first = openai::tool_calls(
        &[
            ("call_a", "Read", r#"{"file_path":"topics/people/ada.md"}"#),
            ("call_b", "Write", r#"{"file_path":"topics/core.md","content":"Ada likes tea."}"#),
        ],
        900,
        40,
    );
    let (server, client, _) = start(vec![Step::ok(first), Step::ok(openai::text("Done.", 1000, 3))]);
    let mut conversation = request("the batch");
    let reply = client.complete(&conversation)?;
    assert_eq!(reply.stop_reason, StopReason::ToolUse);
    assert_eq!(reply.tool_calls.len(), 2);
    assert_eq!(reply.tool_calls[0].id, "call_a");
    assert_eq!(reply.tool_calls[0].name, "Read");
    assert_eq!(reply.tool_calls[0].arguments, ToolArguments::Parsed(json!({"file_path": "topics/people/ada.md"})));
    assert_eq!(
        reply.tool_calls[1].arguments,
        ToolArguments::Parsed(json!({"file_path": "topics/core.md", "content": "Ada likes tea."}))
    );
    conversation.messages.push(reply.to_message());
    conversation.messages.push(Message::ToolResult(ToolResult {
        call_id: "call_a".into(),
        content: "file not found".into(),
        is_error: true,
    }));
    conversation.messages.push(Message::ToolResult(ToolResult {
        call_id: "call_b".into(),
        content: "written".into(),
        is_error: false,
    }));
    let done = client.complete(&conversation)?;
    assert_eq!(done.text, "Done.");
    let received = server.finish();
    assert_eq!(received.len(), 2);
    for request in &received {
        assert_eq!(request.violations, Vec::<String>::new());
    }
    let messages = &received[1].body["messages"];
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(messages[2]["content"], json!(null));
    assert_eq!(messages[2]["tool_calls"][0]["function"]["name"], "Read");
    let sent: serde_json::Value =
        serde_json::from_str(messages[2]["tool_calls"][1]["function"]["arguments"].as_str().unwrap_or(""))?;
    assert_eq!(sent, json!({"file_path": "topics/core.md", "content": "Ada likes tea."}));
    assert_eq!(messages[3], json!({"role": "tool", "tool_call_id": "call_a", "content": "file not found"}));
    assert_eq!(messages[4], json!({"role": "tool", "tool_call_id": "call_b", "content": "written"}));
    Ok(())
}

#[test]
fn malformed_tool_arguments_are_surfaced_not_fatal() -> TestResult {
    let reply = openai::tool_calls(
        &[("call_1", "Write", r#"{"file_path": "topics/a.md", "content": "unterminated"#), ("call_2", "Read", "[1]")],
        10,
        5,
    );
    let (server, client, _) = start(vec![Step::ok(reply), Step::ok(openai::text("ok", 1, 1))]);
    let mut conversation = request("x");
    let response = client.complete(&conversation)?;
    match &response.tool_calls[0].arguments {
        ToolArguments::Malformed { raw, .. } => {
            assert_eq!(raw, r#"{"file_path": "topics/a.md", "content": "unterminated"#)
        }
        other => panic!("expected malformed arguments, got {other:?}"),
    }
    assert!(matches!(&response.tool_calls[1].arguments, ToolArguments::Malformed { raw, .. } if raw == "[1]"));
    // The malformed call goes back to the model verbatim, answered by a tool error.
    conversation.messages.push(response.to_message());
    for call in &response.tool_calls {
        let result = ToolResult { call_id: call.id.clone(), content: "invalid arguments".into(), is_error: true };
        conversation.messages.push(Message::ToolResult(result));
    }
    client.complete(&conversation)?;
    let received = server.finish();
    assert_eq!(received[1].violations, Vec::<String>::new());
    assert_eq!(
        received[1].body["messages"][2]["tool_calls"][0]["function"]["arguments"],
        r#"{"file_path": "topics/a.md", "content": "unterminated"#
    );
    Ok(())
}

#[test]
fn a_429_is_retried_after_the_retry_after_it_names() -> TestResult {
    let limited =
        Step::error(429, openai::error("Rate limit reached for requests", "requests", Some("rate_limit_exceeded")))
            .header("retry-after", "2");
    let (server, client, sleeper) = start(vec![limited, Step::ok(openai::text("ok", 5, 1))]);
    let reply = client.complete(&request("x"))?;
    assert_eq!(reply.text, "ok");
    assert_eq!(sleeper.waits(), vec![Duration::from_secs(2)]);
    assert_eq!(server.finish().len(), 2);
    Ok(())
}

#[test]
fn retry_after_ms_wins_and_backoff_fills_in_without_a_header() -> TestResult {
    let limited = |ms: Option<&str>| {
        let step = Step::error(429, openai::error("slow down", "requests", Some("rate_limit_exceeded")));
        match ms {
            Some(ms) => step.header("retry-after-ms", ms).header("retry-after", "30"),
            None => step,
        }
    };
    let (server, client, sleeper) =
        start(vec![limited(Some("1500")), limited(None), Step::ok(openai::text("ok", 1, 1))]);
    client.complete(&request("x"))?;
    // Backoff with the jitter fixed at 0.5: the second retry waits 3/4 of 2 × 500 ms.
    assert_eq!(sleeper.waits(), vec![Duration::from_millis(1500), Duration::from_millis(750)]);
    assert_eq!(server.finish().len(), 3);
    Ok(())
}

#[test]
fn a_persistent_500_is_retried_then_classified_provider_internal() -> TestResult {
    let internal = || {
        Step::error(500, openai::error("The server had an error while processing your request.", "server_error", None))
    };
    let (server, client, sleeper) = start(vec![internal(), internal(), internal(), internal()]);
    let error = client.complete(&request("x")).expect_err("four 500s fail the call");
    assert_eq!(error.reason(), ProviderReason::Provider);
    assert_eq!(error.http_status(), Some(500));
    assert_eq!(error.attempts(), 4);
    assert!(error.retryable());
    assert_eq!(pass_code(&error), (Code::ModelProviderInternal, true));
    assert_eq!(error.code(), Code::ModelProviderInternal);
    assert_eq!(
        sleeper.waits(),
        vec![Duration::from_millis(375), Duration::from_millis(750), Duration::from_millis(1500)]
    );
    assert_eq!(server.finish().len(), 4);
    Ok(())
}

#[test]
fn x_should_retry_false_stops_the_retries() -> TestResult {
    let step = Step::error(503, openai::error("unavailable", "server_error", None)).header("x-should-retry", "false");
    let (server, client, sleeper) = start(vec![step]);
    let error = client.complete(&request("x")).expect_err("503 fails");
    assert_eq!((error.attempts(), error.retryable()), (1, true));
    assert!(sleeper.waits().is_empty());
    assert_eq!(server.finish().len(), 1);
    Ok(())
}

#[test]
fn a_401_is_not_retried_and_never_shows_the_key() -> TestResult {
    // OpenAI echoes a masked key; a careless proxy might echo it whole.
    let body =
        openai::error(&format!("Incorrect API key provided: {KEY}."), "invalid_request_error", Some("invalid_api_key"));
    let (server, client, sleeper) = start(vec![Step::error(401, body)]);
    let error = client.complete(&request("x")).expect_err("401 fails");
    assert_eq!(error.reason(), ProviderReason::Auth);
    assert_eq!((error.attempts(), error.retryable()), (1, false));
    assert_eq!(pass_code(&error), (Code::ModelAuthentication, false));
    assert!(sleeper.waits().is_empty());
    let agent = AgentError::from(error.clone());
    let failure = classify(&PassError::Agent(agent.clone()));
    for text in [
        error.to_string(),
        format!("{error:?}"),
        agent.to_string(),
        format!("{agent:?}"),
        failure.reason,
        format!("{client:?}"),
    ] {
        assert!(!text.contains(KEY), "the key leaked into {text}");
        assert!(!text.contains("SECRET"), "part of the key leaked into {text}");
    }
    assert_eq!(server.finish().len(), 1);
    Ok(())
}

#[test]
fn a_403_is_authorization_and_an_exhausted_quota_is_not_retried() -> TestResult {
    let quota = openai::error(
        "You exceeded your current quota, please check your plan and billing details.",
        "insufficient_quota",
        Some("insufficient_quota"),
    );
    let denied = openai::error("You are not allowed to sample from this model", "invalid_request_error", None);
    let (server, client, sleeper) = start(vec![Step::error(429, quota), Step::error(403, denied)]);
    let error = client.complete(&request("x")).expect_err("quota fails");
    assert_eq!(pass_code(&error), (Code::ModelRateLimit, false));
    assert_eq!(error.attempts(), 1);
    let error = client.complete(&request("x")).expect_err("403 fails");
    assert_eq!(pass_code(&error), (Code::ModelAuthorization, false));
    assert!(sleeper.waits().is_empty());
    assert_eq!(server.finish().len(), 2);
    Ok(())
}

#[test]
fn context_length_errors_as_openai_and_compatible_servers_send_them() -> TestResult {
    let bodies = [
        // OpenAI.
        openai::error(
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 411525 tokens.",
            "invalid_request_error",
            Some("context_length_exceeded"),
        ),
        // llama.cpp's server.
        json!({"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 9000, "n_ctx": 4096}}),
        // vLLM.
        json!({"object": "error", "message": "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens.", "type": "BadRequestError", "param": null, "code": 400}),
    ];
    for body in bodies {
        let server = ModelServer::start(Wire::OpenAi, None, vec![Step::error(400, body.clone())]);
        let sleeper = Arc::new(RecordingSleeper::default());
        let client = client("openai-compatible/qwen2.5-7b-instruct", &server.base_url(Wire::OpenAi), None, &sleeper);
        let error = client.complete(&request("x")).expect_err("context errors fail");
        assert_eq!(error.reason(), ProviderReason::Context, "{body}");
        assert_eq!(pass_code(&error), (Code::ModelContextLength, false));
        assert_eq!(error.attempts(), 1);
        let received = server.finish();
        assert_eq!(received[0].violations, Vec::<String>::new());
        // A compatible server: no key sent, and the cap under the name such servers know.
        assert_eq!(received[0].header("authorization"), None);
        assert_eq!(received[0].body["max_tokens"], 8192);
        assert_eq!(received[0].body["model"], "qwen2.5-7b-instruct");
    }
    Ok(())
}

#[test]
fn other_4xx_is_an_invalid_request_and_content_policy_is_its_own() -> TestResult {
    let invalid = openai::error("Invalid value for 'model'", "invalid_request_error", Some("model_not_found"));
    let policy = openai::error(
        "Your request was rejected as a result of our safety system.",
        "invalid_request_error",
        Some("content_policy_violation"),
    );
    let (server, client, _) = start(vec![Step::error(404, invalid), Step::error(400, policy)]);
    assert_eq!(pass_code(&client.complete(&request("x")).expect_err("404")), (Code::ModelInvalidRequest, false));
    assert_eq!(pass_code(&client.complete(&request("x")).expect_err("policy")), (Code::ModelContentPolicy, false));
    server.finish();
    Ok(())
}

#[test]
fn a_stalled_reply_times_out_as_model_timeout() -> TestResult {
    let server = ModelServer::start(Wire::OpenAi, Some(KEY), vec![Step::Stall]);
    let spec = scriptorium_writer_runtime::llm::ModelSpec::parse("openai/gpt-4.1-mini")?;
    let mut config = scriptorium_writer_runtime::llm::ClientConfig::resolve(
        spec,
        Some(&server.base_url(Wire::OpenAi)),
        Some(KEY),
        &|_| None,
    )?;
    config.timeouts.request = Duration::from_millis(300);
    let sleeper = Arc::new(RecordingSleeper::default());
    let client =
        LlmClient::new(config).with_sleeper(Arc::clone(&sleeper) as Arc<dyn scriptorium_writer_runtime::llm::Sleeper>);
    let error = client.complete(&request("x")).expect_err("a stalled server times out");
    assert_eq!(error.reason(), ProviderReason::Timeout);
    // The model may have worked the whole time: the pass retries later, not this call.
    assert_eq!((error.attempts(), error.retryable()), (1, true));
    assert_eq!(pass_code(&error), (Code::ModelTimeout, true));
    assert!(sleeper.waits().is_empty());
    assert_eq!(server.finish().len(), 1);
    Ok(())
}

#[test]
fn a_truncated_body_is_retried_as_transport() -> TestResult {
    let whole = openai::text("ok", 3, 1).to_string();
    let cut = Step::Truncated { body: whole[..whole.len() / 2].to_owned(), missing: whole.len() - whole.len() / 2 };
    let (server, client, sleeper) = start(vec![cut.clone(), Step::ok(openai::text("ok", 3, 1))]);
    assert_eq!(client.complete(&request("x"))?.text, "ok");
    assert_eq!(sleeper.waits().len(), 1);
    assert_eq!(server.finish().len(), 2);

    let (server, client, _) = start(vec![cut.clone(), cut.clone(), cut.clone(), cut]);
    let error = client.complete(&request("x")).expect_err("always truncated");
    assert_eq!(error.reason(), ProviderReason::Transport);
    assert_eq!(pass_code(&error), (Code::ModelTransport, true));
    assert_eq!(error.attempts(), 4);
    server.finish();
    Ok(())
}

#[test]
fn a_200_that_is_not_a_completion_is_a_provider_fault() -> TestResult {
    let junk = || Step::Reply { status: 200, headers: Vec::new(), body: "<html>gateway</html>".into() };
    let (server, client, _) = start(vec![junk(), junk(), junk(), junk()]);
    let error = client.complete(&request("x")).expect_err("junk fails");
    assert_eq!(pass_code(&error), (Code::ModelProviderInternal, true));
    server.finish();
    Ok(())
}

#[test]
fn a_refused_connection_is_transport_after_the_retries() -> TestResult {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let sleeper = Arc::new(RecordingSleeper::default());
    let client = client("openai/gpt-4.1-mini", &format!("http://127.0.0.1:{port}/v1"), Some(KEY), &sleeper);
    let error = client.complete(&request("x")).expect_err("nobody listens");
    assert_eq!(error.reason(), ProviderReason::Transport);
    assert_eq!((error.attempts(), error.retryable()), (4, true));
    assert_eq!(pass_code(&error), (Code::ModelTransport, true));
    assert_eq!(sleeper.waits().len(), 3);
    Ok(())
}

#[test]
fn a_retry_after_beyond_the_cap_ends_the_call_at_once() -> TestResult {
    let step = Step::error(429, openai::error("slow down", "requests", Some("rate_limit_exceeded")))
        .header("retry-after", "3600");
    let (server, client, sleeper) = start(vec![step]);
    let error = client.complete(&request("x")).expect_err("an hour is too long to wait");
    assert_eq!(pass_code(&error), (Code::ModelRateLimit, true));
    assert_eq!(error.attempts(), 1);
    assert!(sleeper.waits().is_empty());
    server.finish();
    Ok(())
}

#[test]
fn a_retry_after_date_is_measured_against_the_injected_clock() -> TestResult {
    struct At(f64);
    impl scriptorium_writer_runtime::Clock for At {
        fn now(&self) -> f64 {
            self.0
        }
    }
    // 2026-12-02T00:00:05Z is 1_796_169_605.
    let step = Step::error(429, openai::error("slow down", "requests", Some("rate_limit_exceeded")))
        .header("retry-after", "Wed, 02 Dec 2026 00:00:05 GMT");
    let (server, client, sleeper) = start(vec![step, Step::ok(openai::text("ok", 1, 1))]);
    let client = client.with_clock(Arc::new(At(1_796_169_600.0)));
    client.complete(&request("x"))?;
    assert_eq!(sleeper.waits(), vec![Duration::from_secs(5)]);
    server.finish();
    Ok(())
}
