//! The backend contract for agent runtimes in any language (spec 02 §1): append turns
//! to the session store, the system-prompt memory, per-turn recall, the write hook, and
//! any registry tool. The HTTP caller holds the token, so it is the owner tier.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use scriptorium_backend_api::layers::writer_runtime::SessionStore as _;
use scriptorium_backend_api::{Content, Message, Tier, Timestamp};
use serde_json::{Map, Value, json};

use super::body::{JsonBody, invalid};
use super::error::{ApiError, NOT_FOUND};
use super::routes_memory::{Params, tool_response};
use super::state::{State as Shared, blocking};

type AppState = State<Arc<Shared>>;

/// The most messages one append takes.
const MAX_MESSAGES: usize = 10_000;

/// The message keys the store keeps in their own columns; every other key is metadata
/// (authority fields, `display`, `source`, …), as the reference flattens them.
const COLUMNS: &[&str] = &["id", "predecessor", "role", "content", "timestamp", "metadata"];

/// `POST /api/sessions/{id}/messages {messages:[{id, role, content, timestamp?,
/// predecessor?, metadata?, …authority fields}]}`: append, idempotent by id. A message
/// without `predecessor` follows the one before it in the list, the first one the
/// session's head; `"predecessor": null` starts a new root.
pub(crate) async fn append(
    State(state): AppState,
    Path(session_id): Path<String>,
    body: JsonBody,
) -> Result<Response, ApiError> {
    let body = body.object()?;
    let list = match body.get("messages") {
        Some(Value::Array(list)) => list.clone(),
        _ => return Err(invalid("`messages` must be a list of message objects")),
    };
    if list.len() > MAX_MESSAGES {
        return Err(invalid(format!("at most {MAX_MESSAGES} messages per request")));
    }
    let outcome = blocking(move || -> Result<Value, ApiError> {
        let store = state.store()?;
        let head =
            store.get_session(&session_id).map_err(|error| invalid(error.message()))?.and_then(|info| info.head_id);
        let messages = messages(&list, head)?;
        let now =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |since| since.as_secs_f64());
        let added = store.append(&session_id, &messages, now).map_err(|error| {
            ApiError::body(
                StatusCode::BAD_REQUEST,
                json!({"ok": false, "error": {"code": error.code().as_str(), "message": error.message()}}),
            )
        })?;
        Ok(json!({"ok": true, "session_id": session_id, "received": messages.len(), "appended": added}))
    })
    .await??;
    Ok(Json(outcome).into_response())
}

/// The store's messages from the request's objects.
fn messages(list: &[Value], head: Option<String>) -> Result<Vec<Message>, ApiError> {
    let mut previous = head;
    let mut out = Vec::with_capacity(list.len());
    for (n, item) in list.iter().enumerate() {
        let Value::Object(item) = item else { return Err(invalid(format!("messages[{n}] is not an object"))) };
        let text = |key: &str| match item.get(key) {
            Some(Value::String(text)) if !text.is_empty() => Ok(text.clone()),
            _ => Err(invalid(format!("messages[{n}].{key} must be a non-empty string"))),
        };
        let id = text("id")?;
        let role = text("role")?;
        let content = match item.get("content") {
            Some(Value::String(text)) => Content::Text(text.clone()),
            Some(Value::Array(parts)) => Content::Parts(parts.clone()),
            Some(other) => Content::Other(other.clone()),
            None => Content::Text(String::new()),
        };
        let timestamp = match item.get("timestamp") {
            Some(Value::Number(number)) => Timestamp::Unix(number.as_f64().unwrap_or(0.0)),
            Some(Value::String(text)) => Timestamp::Text(text.clone()),
            Some(Value::Null) | None => Timestamp::None,
            Some(_) => return Err(invalid(format!("messages[{n}].timestamp must be a number or a string"))),
        };
        let predecessor = match item.get("predecessor") {
            None => previous.clone(),
            Some(Value::Null) => None,
            Some(Value::String(id)) => Some(id.clone()),
            Some(_) => return Err(invalid(format!("messages[{n}].predecessor must be a string or null"))),
        };
        let mut metadata: Map<String, Value> = match item.get("metadata") {
            Some(Value::Object(map)) => map.clone(),
            None | Some(Value::Null) => Map::new(),
            Some(_) => return Err(invalid(format!("messages[{n}].metadata must be an object"))),
        };
        for (key, value) in item.iter().filter(|(key, _)| !COLUMNS.contains(&key.as_str())) {
            metadata.insert(key.clone(), value.clone());
        }
        previous = Some(id.clone());
        out.push(Message { id, predecessor, role, content, timestamp, metadata });
    }
    Ok(out)
}

/// `GET /api/memory/context`: `{system_prompt}`, already fenced (or `""`).
pub(crate) async fn context(State(state): AppState) -> Result<Response, ApiError> {
    let prompt = blocking(move || state.backend.system_prompt(None)).await?;
    Ok(Json(json!({"system_prompt": prompt})).into_response())
}

/// `GET /api/memory/recall?q=…&session_id=…`: `{recall}`, the per-turn recall already
/// fenced (or `""`).
pub(crate) async fn recall(State(state): AppState, Query(query): Params) -> Result<Response, ApiError> {
    let q = query.get("q").cloned().ok_or_else(|| ApiError::bad_query("q is required"))?;
    let session = query.get("session_id").cloned().unwrap_or_default();
    let recall = blocking(move || state.backend.search(&q, &session, Some(Tier::Owner))).await?;
    Ok(Json(json!({"recall": recall})).into_response())
}

/// `POST /api/memory/write {session_id, force?}`: the write hook. `{written:true}` when
/// nothing is owed, else `{written:false, failure:{code, retryable, reason}}`.
pub(crate) async fn write(State(state): AppState, body: JsonBody) -> Result<Response, ApiError> {
    let body = body.object()?;
    let session = match body.get("session_id") {
        Some(Value::String(id)) => id.clone(),
        None => String::new(),
        Some(_) => return Err(invalid("`session_id` must be a string")),
    };
    let force = match body.get("force") {
        Some(Value::Bool(force)) => *force,
        None => false,
        Some(_) => return Err(invalid("`force` must be a boolean")),
    };
    let failure = blocking(move || state.backend.write(None, &session, force)).await?;
    let value = match failure {
        None => json!({"written": true}),
        Some(failure) => json!({
            "written": false,
            "failure": {
                "code": failure.reason_code.as_str(),
                "retryable": failure.retryable,
                "reason": failure.reason,
            },
        }),
    };
    Ok(Json(value).into_response())
}

/// `POST /api/tools/{name}` with the arguments object: the tool's answer (JSON output as
/// JSON, text as `{output}`, a `TxError` with its status); 404 for an unknown tool.
pub(crate) async fn tool(
    State(state): AppState,
    Path(name): Path<String>,
    body: JsonBody,
) -> Result<Response, ApiError> {
    let Some(spec) = state.backend.tools().iter().find(|spec| spec.name == name) else {
        return Err(ApiError::detail(StatusCode::NOT_FOUND, NOT_FOUND, format!("no tool named {name:?}")));
    };
    let arguments = Value::Object(body.object()?);
    let answer = super::routes_memory::tool(&state, spec.name, arguments).await?;
    Ok(tool_response(&answer))
}
