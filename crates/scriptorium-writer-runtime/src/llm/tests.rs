//! Unit tests of the model clients: specs, keys, base URLs, backoff, Retry-After, the reply
//! classifier and the wire mappings.

use std::time::Duration;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::config::is_loopback;
use super::error::classify_reply;
use super::retry::retry_after;
use super::*;
use crate::agent::{AgentError, AgentErrorKind, ProviderReason};
use crate::clock::Clock;
use crate::failure::{MemoryWriteFailureCode as Code, PassError, classify};

struct At(f64);

impl Clock for At {
    fn now(&self) -> f64 {
        self.0
    }
}

fn no_env(_: &str) -> Option<String> {
    None
}

#[test]
fn model_specs_parse_provider_and_model() {
    let spec = ModelSpec::parse(" openai/gpt-4.1-mini ").expect("valid");
    assert_eq!((spec.provider, spec.model.as_str()), (Provider::OpenAi, "gpt-4.1-mini"));
    let spec = ModelSpec::parse("anthropic/claude-sonnet-4-5").expect("valid");
    assert_eq!(spec.provider, Provider::Anthropic);
    // The model keeps every later slash (a Hugging Face id on a vLLM server).
    let spec = ModelSpec::parse("openai-compatible/meta-llama/Llama-3.1-8B-Instruct").expect("valid");
    assert_eq!((spec.provider, spec.model.as_str()), (Provider::OpenAiCompatible, "meta-llama/Llama-3.1-8B-Instruct"));
    assert_eq!(spec.to_string(), "openai-compatible/meta-llama/Llama-3.1-8B-Instruct");
    for bad in ["", "gpt-4", "openai/", "openai/ gpt", "google/gemini", "OpenAI/gpt-4", "/gpt", "openai/a\u{7}b"] {
        let error = ModelSpec::parse(bad).expect_err(bad);
        assert_eq!(error.code(), ConfigErrorCode::ModelSpecInvalid, "{bad}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|cases| cases.parse().ok()).unwrap_or(64),
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_spec_either_parses_back_to_itself_or_is_refused_with_the_code(spec in "[a-z-]{0,20}/?[ -~]{0,20}") {
        match ModelSpec::parse(&spec) {
            Ok(parsed) => prop_assert_eq!(parsed.to_string(), spec.trim()),
            Err(error) => prop_assert_eq!(error.code(), ConfigErrorCode::ModelSpecInvalid),
        }
    }

    #[test]
    fn backoff_stays_within_half_and_whole_of_the_capped_exponential(retry in 0u32..40, unit in 0.0f64..1.0) {
        let policy = RetryPolicy::default();
        let wait = policy.backoff(retry, unit);
        let capped = policy.initial_backoff.saturating_mul(2u32.saturating_pow(retry.min(30))).min(policy.max_backoff);
        prop_assert!(wait >= capped / 2 && wait <= capped);
        prop_assert!(policy.backoff(retry, unit) <= policy.backoff(retry + 1, unit) || capped == policy.max_backoff);
    }

    #[test]
    fn no_key_survives_into_an_error_message(key in "[A-Za-z0-9_-]{8,40}", status in 400u16..600) {
        let body = json!({"error": {"message": format!("bad key {key} for you"), "type": "x"}}).to_string();
        let api_key = ApiKey::new(&key).expect("a printable key");
        let error = classify_reply("openai", status, body.as_bytes()).redacted(Some(&api_key));
        prop_assert!(!error.to_string().contains(&key));
        let shown = format!("{:?} {}", api_key, api_key);
        prop_assert!(!shown.contains(&key));
    }
}

#[test]
fn keys_come_from_config_or_the_provider_variable_and_never_show() {
    let env = |name: &str| (name == OPENAI_API_KEY_ENV).then(|| "sk-from-env".to_owned());
    let spec = ModelSpec::parse("openai/gpt-4.1-mini").expect("valid");
    let config = ClientConfig::resolve(spec.clone(), None, None, &env).expect("key from env");
    assert_eq!(config.api_key.as_ref().map(ApiKey::expose), Some("sk-from-env"));
    assert_eq!(config.base_url, OPENAI_BASE_URL);
    let config = ClientConfig::resolve(spec.clone(), None, Some("sk-configured"), &env).expect("configured key");
    assert_eq!(config.api_key.as_ref().map(ApiKey::expose), Some("sk-configured"));
    for shown in [format!("{config:?}"), format!("{}", config.api_key.as_ref().expect("set"))] {
        assert!(!shown.contains("sk-configured"), "{shown}");
    }
    let error = ClientConfig::resolve(spec, None, None, &no_env).expect_err("no key");
    assert_eq!(error.code(), ConfigErrorCode::ApiKeyMissing);

    // Anthropic reads its own variable, not OpenAI's.
    let spec = ModelSpec::parse("anthropic/claude-sonnet-4-5").expect("valid");
    let error = ClientConfig::resolve(spec.clone(), None, None, &env).expect_err("OPENAI_API_KEY is not Anthropic's");
    assert_eq!(error.code(), ConfigErrorCode::ApiKeyMissing);
    let env = |name: &str| (name == ANTHROPIC_API_KEY_ENV).then(|| "sk-ant".to_owned());
    let config = ClientConfig::resolve(spec, None, None, &env).expect("anthropic key");
    assert_eq!(config.base_url, ANTHROPIC_BASE_URL);

    // A compatible server never receives OPENAI_API_KEY, and needs a base URL.
    let spec = ModelSpec::parse("openai-compatible/qwen").expect("valid");
    let env = |_: &str| Some("sk-leak".to_owned());
    let error = ClientConfig::resolve(spec.clone(), None, None, &env).expect_err("no base URL");
    assert_eq!(error.code(), ConfigErrorCode::BaseUrlMissing);
    let config = ClientConfig::resolve(spec, Some("http://127.0.0.1:8080/v1/"), None, &env).expect("keyless");
    assert_eq!((config.api_key, config.base_url.as_str()), (None, "http://127.0.0.1:8080/v1"));
}

#[test]
fn bad_keys_and_base_urls_are_refused_without_echoing_them() {
    let error = ApiKey::new("sk-abc\ndef").expect_err("a newline would split the header");
    assert_eq!(error.code(), ConfigErrorCode::ApiKeyInvalid);
    assert!(!error.to_string().contains("sk-abc"));
    assert_eq!(ApiKey::new("   ").expect_err("blank").code(), ConfigErrorCode::ApiKeyMissing);
    let spec = ModelSpec::parse("openai/gpt-4.1-mini").expect("valid");
    for bad in ["ftp://host/v1", "https://", "https://user:sk-pw@host/v1", "http://host/v1?x=1", "http://ho st/v1"] {
        let error = ClientConfig::resolve(spec.clone(), Some(bad), Some("k"), &no_env).expect_err(bad);
        assert_eq!(error.code(), ConfigErrorCode::BaseUrlInvalid, "{bad}");
        assert!(!error.to_string().contains("sk-pw"));
    }
}

#[test]
fn config_errors_are_writer_preconditions() {
    let error = ModelSpec::parse("nope").expect_err("invalid");
    let agent = AgentError::from(error);
    assert_eq!(agent.kind, AgentErrorKind::Precondition);
    assert_eq!(classify(&PassError::Agent(agent)).reason_code, Code::WriterPreconditionFailed);
    let codes: Vec<&str> = ConfigErrorCode::ALL.iter().map(|code| code.as_str()).collect();
    assert!(codes.iter().all(|code| code.starts_with("WRITER_MODEL_")));
}

#[test]
fn loopback_hosts_are_recognised() {
    for url in ["http://127.0.0.1:8080/v1", "http://localhost:11434/v1", "http://[::1]:8000/v1", "http://127.1.2.3"] {
        assert!(is_loopback(url), "{url}");
    }
    for url in ["https://api.openai.com/v1", "http://10.0.0.1:8080", "http://localhost.example.com"] {
        assert!(!is_loopback(url), "{url}");
    }
}

#[test]
fn retry_after_reads_milliseconds_seconds_and_dates() {
    let clock = At(784_111_777.0); // Sun, 06 Nov 1994 08:49:37 GMT
    assert_eq!(retry_after(Some("250"), Some("9"), &clock), Some(Duration::from_millis(250)));
    assert_eq!(retry_after(None, Some("9"), &clock), Some(Duration::from_secs(9)));
    assert_eq!(retry_after(None, Some("1.5"), &clock), Some(Duration::from_millis(1500)));
    assert_eq!(retry_after(None, Some("Sun, 06 Nov 1994 08:49:47 GMT"), &clock), Some(Duration::from_secs(10)));
    // A date already past means "now".
    assert_eq!(retry_after(None, Some("Sun, 06 Nov 1994 08:49:00 GMT"), &clock), Some(Duration::ZERO));
    for junk in ["-3", "soon", "NaN", "inf", "Sun, 06 Nov 1994 25:00:00 GMT", ""] {
        assert_eq!(retry_after(None, Some(junk), &clock), None, "{junk}");
    }
    assert_eq!(retry_after(None, None, &clock), None);
}

#[test]
fn the_jitter_is_uniform_enough_and_in_range() {
    let jitter = XorShiftJitter::new(42);
    let draws: Vec<f64> = (0..1000).map(|_| jitter.unit()).collect();
    assert!(draws.iter().all(|unit| (0.0..1.0).contains(unit)));
    let below_half = draws.iter().filter(|unit| **unit < 0.5).count();
    assert!((400..600).contains(&below_half), "{below_half}");
    assert_ne!(XorShiftJitter::new(0).unit(), 0.0);
}

#[test]
fn the_reply_classifier_follows_the_spec_table() {
    let cases: &[(u16, Value, ProviderReason, bool)] = &[
        (
            429,
            json!({"error": {"message": "slow", "type": "requests", "code": "rate_limit_exceeded"}}),
            ProviderReason::RateLimit,
            true,
        ),
        (
            429,
            json!({"error": {"message": "quota", "type": "insufficient_quota", "code": "insufficient_quota"}}),
            ProviderReason::RateLimit,
            false,
        ),
        (500, json!({"error": {"message": "boom"}}), ProviderReason::Provider, true),
        (
            529,
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            ProviderReason::Provider,
            true,
        ),
        (502, json!("<html>bad gateway</html>"), ProviderReason::Provider, true),
        (401, json!({"error": {"message": "bad key"}}), ProviderReason::Auth, false),
        (403, json!({"error": {"message": "no"}}), ProviderReason::Authz, false),
        (408, json!({}), ProviderReason::Timeout, true),
        (400, json!({"error": {"message": "Invalid 'tools'"}}), ProviderReason::Invalid, false),
        (400, json!({"error": {"message": "x", "code": "context_length_exceeded"}}), ProviderReason::Context, false),
        (
            400,
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 5 tokens > 4 maximum"}}),
            ProviderReason::Context,
            false,
        ),
        (
            413,
            json!({"type": "error", "error": {"type": "request_too_large", "message": "too big"}}),
            ProviderReason::Context,
            false,
        ),
        (400, json!({"error": {"message": "x", "code": "content_policy_violation"}}), ProviderReason::Policy, false),
        (404, json!({"error": {"message": "model not found"}}), ProviderReason::Invalid, false),
        (302, json!({}), ProviderReason::Unknown, false),
    ];
    for (status, body, reason, retryable) in cases {
        let error = classify_reply("test", *status, body.to_string().as_bytes());
        assert_eq!(
            (error.reason(), error.retryable(), error.http_status()),
            (*reason, *retryable, Some(*status)),
            "{status} {body}"
        );
        // Through the crate's classifier the explicit reason and verdict stand.
        let failure = classify(&PassError::Agent(AgentError::from(error.clone())));
        assert_eq!((failure.reason_code, failure.retryable), (error.code(), *retryable));
    }
    let long = "x".repeat(10_000);
    let error = classify_reply("test", 500, json!({"error": {"message": long}}).to_string().as_bytes());
    assert!(error.to_string().len() < 700);
}

fn conversation() -> ChatRequest {
    let call = |id: &str, arguments: ToolArguments| ToolCall { id: id.into(), name: "Edit".into(), arguments };
    ChatRequest {
        messages: vec![
            Message::System("contract".into()),
            Message::System("task rules".into()),
            Message::User("batch".into()),
            Message::Assistant(AssistantMessage {
                text: None,
                tool_calls: vec![
                    call("c1", ToolArguments::Parsed(json!({"file_path": "a"}))),
                    call("c2", ToolArguments::from_text("{oops")),
                ],
            }),
            Message::ToolResult(ToolResult { call_id: "c1".into(), content: "ok".into(), is_error: false }),
            Message::ToolResult(ToolResult { call_id: "c2".into(), content: "bad json".into(), is_error: true }),
        ],
        tools: Vec::new(),
        max_output_tokens: Some(100),
    }
}

#[test]
fn openai_bodies_keep_messages_in_place() {
    let body: Value =
        serde_json::from_slice(&super::openai::request_body("m", &conversation(), 8192, true)).expect("json");
    assert_eq!(body["messages"][1], json!({"role": "system", "content": "task rules"}));
    assert_eq!(body["messages"][3]["tool_calls"][1]["function"]["arguments"], "{oops");
    assert_eq!(body["messages"][5], json!({"role": "tool", "tool_call_id": "c2", "content": "bad json"}));
    assert_eq!(body["max_completion_tokens"], 100);
    assert!(body.get("tools").is_none(), "an empty tool list is left out");
    // An empty turn (no text, no calls) still has the string content the API requires.
    let empty = ChatRequest {
        messages: vec![Message::User("u".into()), Message::Assistant(AssistantMessage::default())],
        ..ChatRequest::default()
    };
    let body: Value = serde_json::from_slice(&super::openai::request_body("m", &empty, 10, false)).expect("json");
    assert_eq!(body["messages"][1], json!({"role": "assistant", "content": ""}));
    assert_eq!(body["max_tokens"], 10);
}

#[test]
fn anthropic_bodies_lift_system_and_merge_results() {
    let body: Value =
        serde_json::from_slice(&super::anthropic::request_body("m", &conversation(), 8192)).expect("json");
    assert_eq!(body["system"], "contract\n\ntask rules");
    assert_eq!(body["max_tokens"], 100);
    let messages = body["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 3);
    // Malformed arguments go back as an empty object: `input` must be one.
    assert_eq!(messages[1]["content"][1]["input"], json!({}));
    assert_eq!(
        messages[2]["content"][1],
        json!({"type": "tool_result", "tool_use_id": "c2", "content": "bad json", "is_error": true})
    );
}

#[test]
fn openai_replies_from_compatible_servers_are_read_leniently() {
    // Ollama-style: arguments as an object, finish_reason "stop" with tool calls, no id.
    let body = json!({"model": "llama3.1", "choices": [{"message": {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "Read", "arguments": {"file_path": "x"}}}
    ]}, "finish_reason": "stop"}]});
    let reply = super::openai::parse_reply(body.to_string().as_bytes()).expect("reply");
    assert_eq!(reply.stop_reason, StopReason::ToolUse);
    assert_eq!(reply.tool_calls[0].id, "call_0");
    assert_eq!(reply.tool_calls[0].arguments, ToolArguments::Parsed(json!({"file_path": "x"})));
    assert_eq!(reply.usage, crate::agent::Usage::default());
    // A refusal is the text, and a content-filter stop.
    let body = json!({"choices": [{"message": {"role": "assistant", "content": null, "refusal": "I can't."}, "finish_reason": "stop"}]});
    let reply = super::openai::parse_reply(body.to_string().as_bytes()).expect("reply");
    assert_eq!((reply.text.as_str(), reply.stop_reason.failure()), ("I can't.", Some(ProviderReason::Policy)));
    for junk in [json!({"choices": []}), json!({"object": "list"}), json!([1])] {
        assert!(super::openai::parse_reply(junk.to_string().as_bytes()).is_err(), "{junk}");
    }
    assert!(super::anthropic::parse_reply(br#"{"type":"error","content":[]}"#).is_err());
}
