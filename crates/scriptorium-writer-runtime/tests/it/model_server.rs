//! A scripted model server on loopback, test code only: it stands in for the remote model,
//! which cannot run here. It speaks HTTP/1.1 over `std::net::TcpListener`, checks every
//! request against what the Chat Completions or Messages API documents (method, path,
//! headers, JSON body shape, the tool-call/tool-result pairing), and answers from a script:
//! replies, error bodies as each provider sends them, a stalled reply, a truncated body.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde_json::{Map, Value, json};

/// Which API the server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wire {
    /// Chat Completions at `/v1/chat/completions`, `Authorization: Bearer`.
    OpenAi,
    /// Messages at `/v1/messages`, `x-api-key` and `anthropic-version`.
    Anthropic,
}

/// What the server does with one request.
#[derive(Clone, Debug)]
pub(crate) enum Step {
    /// A complete reply.
    Reply { status: u16, headers: Vec<(String, String)>, body: String },
    /// Headers announcing `body` plus `missing` more bytes, then `body`, then the connection closes.
    Truncated { body: String, missing: usize },
    /// Read the request, answer nothing, and wait until the client gives up and closes.
    Stall,
}

impl Step {
    /// A 200 with a JSON body.
    pub(crate) fn ok(body: Value) -> Step {
        Step::Reply { status: 200, headers: Vec::new(), body: body.to_string() }
    }

    /// An error reply with a JSON body.
    pub(crate) fn error(status: u16, body: Value) -> Step {
        Step::Reply { status, headers: Vec::new(), body: body.to_string() }
    }

    /// The same reply with one more header.
    pub(crate) fn header(self, name: &str, value: &str) -> Step {
        match self {
            Step::Reply { status, mut headers, body } => {
                headers.push((name.to_owned(), value.to_owned()));
                Step::Reply { status, headers, body }
            }
            other => other,
        }
    }
}

/// One request as the server received it, with everything it found wrong.
#[derive(Clone, Debug)]
pub(crate) struct Received {
    /// Header names lowercased.
    pub(crate) headers: Vec<(String, String)>,
    /// The JSON body (`Null` if it did not parse).
    pub(crate) body: Value,
    /// Departures from the API's documented request shape; empty when the request is faithful.
    pub(crate) violations: Vec<String>,
}

impl Received {
    /// The value of header `name`, if sent.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }
}

/// The running server.
pub(crate) struct ModelServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    received: Arc<Mutex<Vec<Received>>>,
    thread: Option<JoinHandle<()>>,
}

impl ModelServer {
    /// Serve `script` for `wire`, expecting `key` in the auth header (`None`: no auth header at all).
    pub(crate) fn start(wire: Wire, key: Option<&str>, script: Vec<Step>) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("a bound listener has an address");
        let stop = Arc::new(AtomicBool::new(false));
        let received = Arc::new(Mutex::new(Vec::new()));
        let key = key.map(str::to_owned);
        let thread = {
            let (stop, received) = (Arc::clone(&stop), Arc::clone(&received));
            std::thread::spawn(move || serve(&listener, wire, key.as_deref(), script, &stop, &received))
        };
        ModelServer { addr, stop, received, thread: Some(thread) }
    }

    /// The base URL a client is configured with (OpenAI's includes `/v1`, Anthropic's does not).
    pub(crate) fn base_url(&self, wire: Wire) -> String {
        match wire {
            Wire::OpenAi => format!("http://{}/v1", self.addr),
            Wire::Anthropic => format!("http://{}", self.addr),
        }
    }

    /// Stop serving and return every request received, in order.
    pub(crate) fn finish(mut self) -> Vec<Received> {
        self.shutdown();
        std::mem::take(&mut *self.received.lock().expect("the server thread never panics holding the log"))
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake a blocked accept.
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            thread.join().expect("the model server thread ends cleanly");
        }
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn serve(
    listener: &TcpListener,
    wire: Wire,
    key: Option<&str>,
    script: Vec<Step>,
    stop: &AtomicBool,
    received: &Mutex<Vec<Received>>,
) {
    let mut script = script.into_iter();
    while let Ok((stream, _)) = listener.accept() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Some(request) = read_request(&stream) else { continue };
        let mut found = check(wire, key, &request);
        let step = script.next();
        if step.is_none() {
            found.violations.push("a request beyond the script".to_owned());
        }
        received.lock().expect("the log lock is never poisoned").push(found);
        match step {
            Some(step) => answer(stream, step),
            None => answer(stream, Step::error(500, json!({"error": {"message": "script exhausted"}}))),
        }
    }
}

struct RawRequest {
    method: String,
    path: String,
    version: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    problems: Vec<String>,
}

fn read_request(stream: &TcpStream) -> Option<RawRequest> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.trim_end().splitn(3, ' ');
    let (method, path, version) = (parts.next()?.to_owned(), parts.next()?.to_owned(), parts.next()?.to_owned());
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 {
            return None;
        }
        let header = header.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let mut problems = Vec::new();
    let length = headers.iter().find(|(name, _)| name == "content-length").and_then(|(_, v)| v.parse::<usize>().ok());
    let mut body = Vec::new();
    match length {
        Some(length) => {
            body.resize(length, 0);
            reader.read_exact(&mut body).ok()?;
        }
        None => problems.push("no content-length on a JSON POST".to_owned()),
    }
    Some(RawRequest { method, path, version, headers, body, problems })
}

fn answer(mut stream: TcpStream, step: Step) {
    match step {
        Step::Reply { status, headers, body } => {
            let mut head = format!(
                "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                reason_phrase(status),
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body.as_bytes());
        }
        Step::Truncated { body, missing } => {
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len() + missing
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body.as_bytes());
        }
        Step::Stall => {
            // Blocks until the client closes its end after its timeout.
            let mut sink = Vec::new();
            let _ = stream.read_to_end(&mut sink);
        }
    }
    let _ = stream.flush();
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        529 => "Overloaded",
        _ => "Status",
    }
}

fn check(wire: Wire, key: Option<&str>, request: &RawRequest) -> Received {
    let mut violations = request.problems.clone();
    let header = |name: &str| request.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str());
    if request.method != "POST" {
        violations.push(format!("method {} is not POST", request.method));
    }
    if request.version != "HTTP/1.1" {
        violations.push(format!("version {} is not HTTP/1.1", request.version));
    }
    if header("content-type").is_none_or(|value| !value.starts_with("application/json")) {
        violations.push("content-type is not application/json".to_owned());
    }
    if header("host").is_none() {
        violations.push("no host header".to_owned());
    }
    let body: Value = match serde_json::from_slice(&request.body) {
        Ok(body) => body,
        Err(error) => {
            violations.push(format!("the body is not JSON: {error}"));
            Value::Null
        }
    };
    let mut found = Vec::new();
    match wire {
        Wire::OpenAi => {
            expect(&mut found, request.path == "/v1/chat/completions", || format!("path {}", request.path));
            match key {
                Some(key) => expect(&mut found, header("authorization") == Some(&format!("Bearer {key}")), || {
                    "authorization is not `Bearer <key>`".to_owned()
                }),
                None => expect(&mut found, header("authorization").is_none(), || "an unexpected authorization".into()),
            }
            check_openai_body(&body, &mut found);
        }
        Wire::Anthropic => {
            expect(&mut found, request.path == "/v1/messages", || format!("path {}", request.path));
            expect(&mut found, header("x-api-key") == key, || "x-api-key is not the key".to_owned());
            expect(&mut found, header("anthropic-version") == Some("2023-06-01"), || {
                "anthropic-version is not 2023-06-01".to_owned()
            });
            expect(&mut found, header("authorization").is_none(), || "Anthropic takes no authorization header".into());
            check_anthropic_body(&body, &mut found);
        }
    }
    violations.extend(found);
    Received { headers: request.headers.clone(), body, violations }
}

fn expect(found: &mut Vec<String>, ok: bool, what: impl FnOnce() -> String) {
    if !ok {
        found.push(what());
    }
}

fn keys_within(object: &Map<String, Value>, allowed: &[&str], at: &str, found: &mut Vec<String>) {
    for key in object.keys() {
        if !allowed.contains(&key.as_str()) {
            found.push(format!("{at}: unknown field `{key}`"));
        }
    }
}

fn is_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn check_schema(schema: Option<&Value>, at: &str, found: &mut Vec<String>) {
    match schema {
        Some(Value::Object(schema)) if schema.get("type") == Some(&json!("object")) => {}
        _ => found.push(format!("{at}: the parameters are not a JSON Schema of type object")),
    }
}

fn positive_int(value: Option<&Value>) -> bool {
    value.and_then(Value::as_u64).is_some_and(|n| n > 0)
}

/// Chat Completions request body (platform.openai.com/docs/api-reference/chat/create).
fn check_openai_body(body: &Value, found: &mut Vec<String>) {
    let Some(object) = body.as_object() else { return found.push("the body is not an object".to_owned()) };
    keys_within(
        object,
        &["model", "messages", "tools", "tool_choice", "parallel_tool_calls", "max_tokens", "max_completion_tokens"],
        "request",
        found,
    );
    expect(found, object.get("model").and_then(Value::as_str).is_some_and(|m| !m.is_empty()), || "no model".into());
    for cap in ["max_tokens", "max_completion_tokens"] {
        if object.contains_key(cap) {
            expect(found, positive_int(object.get(cap)), || format!("{cap} is not a positive integer"));
        }
    }
    if let Some(tools) = object.get("tools") {
        let tools = tools.as_array().map(Vec::as_slice).unwrap_or_default();
        expect(found, !tools.is_empty(), || "tools is present but not a non-empty array".into());
        for (i, tool) in tools.iter().enumerate() {
            let at = format!("tools[{i}]");
            expect(found, tool.get("type") == Some(&json!("function")), || format!("{at}: type is not function"));
            let function = tool.get("function").and_then(Value::as_object);
            let Some(function) = function else {
                found.push(format!("{at}: no function"));
                continue;
            };
            keys_within(function, &["name", "description", "parameters", "strict"], &at, found);
            let name = function.get("name").and_then(Value::as_str).unwrap_or_default();
            expect(found, is_tool_name(name), || format!("{at}: bad name `{name}`"));
            check_schema(function.get("parameters"), &at, found);
        }
    }
    let Some(messages) = object.get("messages").and_then(Value::as_array).filter(|m| !m.is_empty()) else {
        return found.push("messages is not a non-empty array".to_owned());
    };
    // Tool calls of the last assistant turn that no tool message answered yet.
    let mut open: Vec<String> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let at = format!("messages[{i}]");
        let Some(message) = message.as_object() else {
            found.push(format!("{at}: not an object"));
            continue;
        };
        let role = message.get("role").and_then(Value::as_str).unwrap_or_default();
        if role != "tool" && !open.is_empty() {
            found.push(format!("{at}: tool calls {open:?} were not answered before this message"));
            open.clear();
        }
        let content = message.get("content");
        match role {
            "system" | "user" => {
                keys_within(message, &["role", "content", "name"], &at, found);
                expect(found, content.is_some_and(Value::is_string), || format!("{at}: content is not a string"));
            }
            "assistant" => {
                keys_within(message, &["role", "content", "tool_calls", "name", "refusal"], &at, found);
                let calls = message.get("tool_calls").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
                if message.contains_key("tool_calls") {
                    expect(found, !calls.is_empty(), || format!("{at}: tool_calls is present but empty"));
                }
                let text_ok =
                    content.is_some_and(Value::is_string) || (content.is_none_or(Value::is_null) && !calls.is_empty());
                expect(found, text_ok, || format!("{at}: content is neither a string nor null with tool calls"));
                for (j, call) in calls.iter().enumerate() {
                    let at = format!("{at}.tool_calls[{j}]");
                    let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
                    expect(found, !id.is_empty(), || format!("{at}: no id"));
                    expect(found, call.get("type") == Some(&json!("function")), || format!("{at}: type"));
                    let function = call.get("function");
                    let name = function.and_then(|f| f.get("name")).and_then(Value::as_str).unwrap_or_default();
                    expect(found, is_tool_name(name), || format!("{at}: bad name"));
                    let arguments = function.and_then(|f| f.get("arguments"));
                    expect(found, arguments.is_some_and(Value::is_string), || format!("{at}: arguments not a string"));
                    open.push(id.to_owned());
                }
            }
            "tool" => {
                keys_within(message, &["role", "content", "tool_call_id"], &at, found);
                expect(found, content.is_some_and(Value::is_string), || format!("{at}: content is not a string"));
                let id = message.get("tool_call_id").and_then(Value::as_str).unwrap_or_default();
                match open.iter().position(|open| open == id) {
                    Some(index) => {
                        open.remove(index);
                    }
                    None => found.push(format!("{at}: tool_call_id `{id}` answers no open tool call")),
                }
            }
            other => found.push(format!("{at}: role `{other}`")),
        }
    }
}

/// Messages request body (docs.claude.com/en/api/messages, tool use).
fn check_anthropic_body(body: &Value, found: &mut Vec<String>) {
    let Some(object) = body.as_object() else { return found.push("the body is not an object".to_owned()) };
    keys_within(object, &["model", "max_tokens", "system", "messages", "tools", "tool_choice"], "request", found);
    expect(found, object.get("model").and_then(Value::as_str).is_some_and(|m| !m.is_empty()), || "no model".into());
    expect(found, positive_int(object.get("max_tokens")), || "max_tokens (required) is not a positive integer".into());
    if let Some(system) = object.get("system") {
        expect(found, system.is_string() || system.is_array(), || "system is not a string or blocks".into());
    }
    if let Some(tools) = object.get("tools") {
        for (i, tool) in tools.as_array().map(Vec::as_slice).unwrap_or_default().iter().enumerate() {
            let at = format!("tools[{i}]");
            let Some(tool) = tool.as_object() else {
                found.push(format!("{at}: not an object"));
                continue;
            };
            keys_within(tool, &["name", "description", "input_schema"], &at, found);
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            expect(found, is_tool_name(name), || format!("{at}: bad name `{name}`"));
            check_schema(tool.get("input_schema"), &at, found);
        }
    }
    let Some(messages) = object.get("messages").and_then(Value::as_array).filter(|m| !m.is_empty()) else {
        return found.push("messages is not a non-empty array".to_owned());
    };
    let mut open: Vec<String> = Vec::new();
    let mut previous = "";
    for (i, message) in messages.iter().enumerate() {
        let at = format!("messages[{i}]");
        let role = message.get("role").and_then(Value::as_str).unwrap_or_default();
        expect(found, matches!(role, "user" | "assistant"), || format!("{at}: role `{role}`"));
        expect(found, i > 0 || role == "user", || "the first message is not the user's".into());
        expect(found, role != previous, || format!("{at}: two `{role}` turns in a row"));
        previous = if role == "user" { "user" } else { "assistant" };
        let blocks: Vec<Value> = match message.get("content") {
            Some(Value::String(text)) => vec![json!({"type": "text", "text": text})],
            Some(Value::Array(blocks)) if !blocks.is_empty() => blocks.clone(),
            _ => {
                found.push(format!("{at}: content is not a string or a non-empty block list"));
                Vec::new()
            }
        };
        if role == "user" && !open.is_empty() {
            let leading: Vec<&str> = blocks
                .iter()
                .take_while(|block| block.get("type") == Some(&json!("tool_result")))
                .filter_map(|block| block.get("tool_use_id").and_then(Value::as_str))
                .collect();
            let mut expected = open.clone();
            expected.sort();
            let mut got: Vec<String> = leading.iter().map(|id| (*id).to_owned()).collect();
            got.sort();
            expect(found, got == expected, || {
                format!("{at}: does not begin with one tool_result per tool_use {open:?}")
            });
            open.clear();
        } else if role == "assistant" && !open.is_empty() {
            found.push(format!("{at}: tool_use {open:?} never answered"));
            open.clear();
        }
        for (j, block) in blocks.iter().enumerate() {
            let at = format!("{at}.content[{j}]");
            match block.get("type").and_then(Value::as_str).unwrap_or_default() {
                "text" => {
                    expect(found, block.get("text").and_then(Value::as_str).is_some_and(|t| !t.is_empty()), || {
                        format!("{at}: text blocks must be non-empty")
                    })
                }
                "tool_use" => {
                    expect(found, role == "assistant", || format!("{at}: tool_use outside an assistant turn"));
                    let id = block.get("id").and_then(Value::as_str).unwrap_or_default();
                    expect(found, !id.is_empty(), || format!("{at}: no id"));
                    let name = block.get("name").and_then(Value::as_str).unwrap_or_default();
                    expect(found, is_tool_name(name), || format!("{at}: bad name"));
                    expect(found, block.get("input").is_some_and(Value::is_object), || format!("{at}: input"));
                    open.push(id.to_owned());
                }
                "tool_result" => {
                    expect(found, role == "user", || format!("{at}: tool_result outside a user turn"));
                    let content = block.get("content");
                    expect(found, content.is_none_or(|c| c.is_string() || c.is_array()), || format!("{at}: content"));
                    let flag = block.get("is_error");
                    expect(found, flag.is_none_or(Value::is_boolean), || format!("{at}: is_error not a boolean"));
                }
                other => found.push(format!("{at}: block type `{other}`")),
            }
        }
    }
    // A final assistant turn is a documented prefill, but not one with unanswered tool calls.
    expect(found, open.is_empty(), || format!("tool_use {open:?} never answered"));
}

/// Chat Completions replies, as OpenAI sends them.
pub(crate) mod openai {
    use serde_json::{Value, json};

    /// A text reply.
    pub(crate) fn text(content: &str, prompt_tokens: u64, completion_tokens: u64) -> Value {
        reply(
            json!({"role": "assistant", "content": content, "refusal": null}),
            "stop",
            prompt_tokens,
            completion_tokens,
        )
    }

    /// A reply of tool calls `(id, name, arguments text)`, with `content: null`.
    pub(crate) fn tool_calls(calls: &[(&str, &str, &str)], prompt_tokens: u64, completion_tokens: u64) -> Value {
        let calls: Vec<Value> = calls
            .iter()
            .map(|(id, name, arguments)| {
                json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
            })
            .collect();
        reply(
            json!({"role": "assistant", "content": null, "tool_calls": calls}),
            "tool_calls",
            prompt_tokens,
            completion_tokens,
        )
    }

    fn reply(message: Value, finish_reason: &str, prompt_tokens: u64, completion_tokens: u64) -> Value {
        json!({
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 1_764_633_600,
            "model": "gpt-4.1-mini-2025-04-14",
            "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
            "system_fingerprint": "fp_test",
        })
    }

    /// An error body: `{"error": {message, type, param, code}}`.
    pub(crate) fn error(message: &str, kind: &str, code: Option<&str>) -> Value {
        json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
    }
}

/// Messages replies, as Anthropic sends them.
pub(crate) mod anthropic {
    use serde_json::{Value, json};

    /// A reply of `content` blocks.
    pub(crate) fn message(content: Value, stop_reason: &str, input_tokens: u64, output_tokens: u64) -> Value {
        json!({
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": null,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        })
    }

    /// An error body: `{"type": "error", "error": {type, message}, "request_id"}`.
    pub(crate) fn error(kind: &str, message: &str) -> Value {
        json!({"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_test"})
    }
}

/// The client side of these tests: a sleeper that records instead of waiting, a fixed
/// jitter, and a client pointed at a server.
pub(crate) mod harness {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use scriptorium_writer_runtime::llm::{ClientConfig, Jitter, LlmClient, ModelSpec, Sleeper};

    /// Records every wait; never sleeps.
    #[derive(Default)]
    pub(crate) struct RecordingSleeper(Mutex<Vec<Duration>>);

    impl RecordingSleeper {
        pub(crate) fn waits(&self) -> Vec<Duration> {
            self.0.lock().expect("never poisoned").clone()
        }
    }

    impl Sleeper for RecordingSleeper {
        fn sleep(&self, duration: Duration) {
            self.0.lock().expect("never poisoned").push(duration);
        }
    }

    /// Always the same jitter draw.
    pub(crate) struct FixedJitter(pub(crate) f64);

    impl Jitter for FixedJitter {
        fn unit(&self) -> f64 {
            self.0
        }
    }

    /// A client for `spec` at `base_url` with `key`, its waits recorded by `sleeper`.
    pub(crate) fn client(spec: &str, base_url: &str, key: Option<&str>, sleeper: &Arc<RecordingSleeper>) -> LlmClient {
        let spec = ModelSpec::parse(spec).expect("the test's model spec parses");
        let mut config = ClientConfig::resolve(spec, Some(base_url), key, &|_| None).expect("the test config resolves");
        config.timeouts.request = Duration::from_secs(20);
        LlmClient::new(config)
            .with_sleeper(Arc::clone(sleeper) as Arc<dyn Sleeper>)
            .with_jitter(Arc::new(FixedJitter(0.5)))
    }
}

/// Send `body` raw to `server` at `path` with `headers`, bypassing the clients.
fn send_raw(server: &ModelServer, path: &str, headers: &[(&str, &str)], body: &Value) {
    let body = body.to_string();
    let mut stream = TcpStream::connect(server.addr).expect("connect to the model server");
    let mut head = format!("POST {path} HTTP/1.1\r\nhost: {}\r\ncontent-length: {}\r\n", server.addr, body.len());
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("send the head");
    stream.write_all(body.as_bytes()).expect("send the body");
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply);
}

/// The checker is only worth its silence if it speaks up: unfaithful requests are caught.
#[test]
fn the_server_flags_requests_the_apis_would_reject() {
    let json = ("content-type", "application/json");
    let server = ModelServer::start(Wire::OpenAi, Some("k"), vec![Step::ok(openai::text("a", 1, 1)); 3]);
    let faithful = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    send_raw(&server, "/v1/chat/completions", &[json, ("authorization", "Bearer k")], &faithful);
    send_raw(&server, "/chat/completions", &[json], &faithful);
    let unanswered = json!({"model": "m", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "Read", "arguments": {}}}]},
        {"role": "tool", "tool_call_id": "c2", "content": "x"},
        {"role": "user", "content": "again"},
    ]});
    send_raw(&server, "/v1/chat/completions", &[json, ("authorization", "Bearer k")], &unanswered);
    let received = server.finish();
    assert_eq!(received[0].violations, Vec::<String>::new());
    assert_eq!(received[1].violations.len(), 2, "{:?}", received[1].violations);
    // Arguments not a string, a result for no call, and the call left unanswered.
    assert_eq!(received[2].violations.len(), 3, "{:?}", received[2].violations);

    let server = ModelServer::start(Wire::Anthropic, Some("k"), vec![Step::ok(openai::text("a", 1, 1)); 2]);
    let results_last = json!({"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "text", "text": "and"}, {"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
    ]});
    send_raw(&server, "/v1/messages", &[json, ("x-api-key", "k"), ("anthropic-version", "2023-06-01")], &results_last);
    let no_cap = json!({"model": "m", "system": "s", "messages": [{"role": "user", "content": ""}]});
    send_raw(&server, "/v1/messages", &[json, ("x-api-key", "k")], &no_cap);
    let received = server.finish();
    assert_eq!(received[0].violations.len(), 1, "{:?}", received[0].violations);
    // No anthropic-version, no max_tokens, an empty text block.
    assert_eq!(received[1].violations.len(), 3, "{:?}", received[1].violations);
}
