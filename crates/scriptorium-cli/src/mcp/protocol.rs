//! One JSON-RPC request line in, at most one reply out: the MCP methods `scriptorium mcp`
//! answers (initialize, ping, tools/list, tools/call, resources/list, resources/read).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

use scriptorium_backend_api::{Caller, MemoryBackend, NullBackend};
use serde_json::{Map, Value, json};

/// JSON-RPC: the line is not JSON.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: JSON, but not a request object.
const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: no such method.
const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: bad parameters (an unknown tool, a missing name).
const INVALID_PARAMS: i64 = -32602;
/// MCP: the resource URI names nothing.
const RESOURCE_NOT_FOUND: i64 = -32002;

/// The protocol revisions this server speaks, newest first; an unknown request gets the newest.
const PROTOCOL_VERSIONS: &[&str] = &["2025-06-18", "2025-03-26", "2024-11-05"];
/// The rendered always-on memory.
const CORE_URI: &str = "memory://core";
/// Its last render report (JSON; `null` before the first render).
const REPORT_URI: &str = "memory://core/report";

/// The server state: the backend (being opened on its thread until first needed), the
/// workspace root and a call counter for origins.
pub(crate) struct Server {
    warming: Mutex<Option<JoinHandle<Arc<dyn MemoryBackend>>>>,
    backend: OnceLock<Arc<dyn MemoryBackend>>,
    root: PathBuf,
    calls: AtomicU64,
}

/// The parse-error reply (no id is known).
pub(crate) fn parse_error() -> Value {
    error_reply(&Value::Null, PARSE_ERROR, "parse error: the line is not JSON")
}

impl Server {
    /// A server over the backend `warming` opens, whose workspace is `root`.
    pub(crate) fn new(warming: JoinHandle<Arc<dyn MemoryBackend>>, root: PathBuf) -> Self {
        Server { warming: Mutex::new(Some(warming)), backend: OnceLock::new(), root, calls: AtomicU64::new(0) }
    }

    /// The backend, waiting for its thread the first time. A thread that died (a bug)
    /// leaves the disabled backend, so the server still answers.
    pub(crate) fn backend(&self) -> &Arc<dyn MemoryBackend> {
        self.backend.get_or_init(|| {
            let handle = self.warming.lock().ok().and_then(|mut slot| slot.take());
            match handle.map(JoinHandle::join) {
                Some(Ok(backend)) => backend,
                _ => {
                    eprintln!("scriptorium mcp: the backend could not be opened; serving no tools");
                    Arc::new(NullBackend)
                }
            }
        })
    }

    /// The reply to one line, or `None` for a notification (or a client's response).
    pub(crate) fn handle_line(&self, line: &str) -> Option<Value> {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            eprintln!("scriptorium mcp: parse error on an input line ({} bytes)", line.len());
            return Some(parse_error());
        };
        let Some(object) = message.as_object() else {
            return Some(error_reply(&Value::Null, INVALID_REQUEST, "a request is a JSON object"));
        };
        let id = object.get("id").cloned();
        let Some(method) = object.get("method").and_then(Value::as_str) else {
            // A response to something we never asked, or garbage: answer only if it has an id.
            return id.map(|id| error_reply(&id, INVALID_REQUEST, "a request needs a string method"));
        };
        let id = id?;
        let empty = Value::Object(Map::new());
        let params = object.get("params").unwrap_or(&empty);
        Some(match self.dispatch(method, params) {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => error_reply(&id, code, &message),
        })
    }

    fn dispatch(&self, method: &str, params: &Value) -> Result<Value, (i64, String)> {
        match method {
            "initialize" => Ok(initialize(params)),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(self.tools_list()),
            "tools/call" => self.tools_call(params),
            "resources/list" => Ok(self.resources_list()),
            "resources/read" => self.resources_read(params),
            "resources/templates/list" => Ok(json!({"resourceTemplates": []})),
            "prompts/list" => Ok(json!({"prompts": []})),
            _ => Err((METHOD_NOT_FOUND, format!("method not found: {method}"))),
        }
    }

    fn tools_list(&self) -> Value {
        let tools: Vec<Value> = self
            .backend()
            .tools()
            .iter()
            .map(|spec| {
                // The registry's schemas are fixed JSON text; a broken one still lists as an
                // open object rather than taking the list down.
                let schema = serde_json::from_str::<Value>(spec.input_schema)
                    .ok()
                    .filter(Value::is_object)
                    .unwrap_or_else(|| json!({"type": "object"}));
                json!({"name": spec.name, "description": spec.description, "inputSchema": schema})
            })
            .collect();
        json!({"tools": tools})
    }

    fn tools_call(&self, params: &Value) -> Result<Value, (i64, String)> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| (INVALID_PARAMS, "tools/call needs a string name".to_owned()))?;
        if !self.backend().tools().iter().any(|spec| spec.name == name) {
            return Err((INVALID_PARAMS, format!("unknown tool: {name}")));
        }
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(arguments) => arguments.clone(),
        };
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let answer = self.backend().call_tool(name, &arguments, &Caller::local_owner(format!("mcp/{n}")));
        let is_error = is_tx_error(&answer);
        Ok(json!({"content": [{"type": "text", "text": answer}], "isError": is_error}))
    }

    fn resources_list(&self) -> Value {
        if self.backend().tools().is_empty() {
            return json!({"resources": []});
        }
        json!({"resources": [{
            "uri": CORE_URI,
            "name": "core.md",
            "description": "The always-on memory (core.md) as last rendered.",
            "mimeType": "text/markdown",
        }, {
            "uri": REPORT_URI,
            "name": "core.md render report",
            "description": "How the last render of core.md spent its token budget: tokens used, the budget, \
        the blocks rendered and the blocks left out and why (JSON; null before the first render).",
            "mimeType": "application/json",
        }]})
    }

    fn resources_read(&self, params: &Value) -> Result<Value, (i64, String)> {
        let uri = params.get("uri").and_then(Value::as_str).unwrap_or_default();
        if (uri != CORE_URI && uri != REPORT_URI) || self.backend().tools().is_empty() {
            return Err((RESOURCE_NOT_FOUND, format!("resource not found: {uri}")));
        }
        if uri == REPORT_URI {
            let text = scriptorium_backend_api::inspect::core_report(&self.root).unwrap_or_else(|| "null".to_owned());
            return Ok(json!({"contents": [{"uri": REPORT_URI, "mimeType": "application/json", "text": text}]}));
        }
        // A workspace without a rendered core.md reads as empty text, not an error.
        let text = std::fs::read(self.root.join("core.md"))
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default();
        Ok(json!({"contents": [{"uri": CORE_URI, "mimeType": "text/markdown", "text": text}]}))
    }
}

/// The initialize result: the client's protocol revision when we speak it, else our newest.
fn initialize(params: &Value) -> Value {
    let asked = params.get("protocolVersion").and_then(Value::as_str);
    let version = asked.filter(|asked| PROTOCOL_VERSIONS.contains(asked)).unwrap_or("2025-06-18");
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}, "resources": {"listChanged": false}},
        "serverInfo": {"name": "scriptorium", "version": env!("CARGO_PKG_VERSION")},
    })
}

/// Whether a tool's answer is a `TxError` (`{"ok":false,...}`).
fn is_tx_error(answer: &str) -> bool {
    answer.trim_start().starts_with('{')
        && serde_json::from_str::<Value>(answer).ok().is_some_and(|value| value.get("ok") == Some(&Value::Bool(false)))
}

fn error_reply(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}
