//! Spec 02 §8.4's workspace-wide routes: status, embedding install, refs, changes,
//! recent and core (with the render report).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use scriptorium_backend_api::Caller;
use scriptorium_backend_api::layers::derived_views::{CORE_TOKEN_BUDGET, CoreReport, RECENT_LIMIT, count_o200k};
use scriptorium_backend_api::layers::topic_markdown::{Mode, SourceResolver, parse_tree};
use scriptorium_backend_api::layers::transaction::{
    CORE_REPORT_FILE, FileClass, Listing, RUNTIME_DIR, RealVfs, STAGED_EDIT_LOCK_TIMEOUT, Scope, Workspace,
    WorkspaceSources,
};
use serde_json::{Value, json};

use super::body::{JsonBody, required_text};
use super::error::{ApiError, backend_error, status_of};
use super::state::{State as Shared, blocking};

type AppState = State<Arc<Shared>>;

/// A route's query parameters.
pub(crate) type Params = Query<std::collections::HashMap<String, String>>;

/// `GET /api/memory/status`: settings only (no workspace touched), or the full status.
pub(crate) async fn status(State(state): AppState, Query(query): Params) -> Result<Response, ApiError> {
    let workspace_path = state.root.display().to_string();
    if matches!(query.get("settings").map(String::as_str), Some("true" | "1")) {
        return Ok(Json(json!({"workspace_path": workspace_path, "embedding_available": false})).into_response());
    }
    let answer = tool(&state, "memory_status", json!({})).await?;
    let mut value: Value = serde_json::from_str(&answer).map_err(|_| ApiError::internal("status is not JSON"))?;
    if let Some(error) = tx_failure(&value) {
        return Err(error);
    }
    if let Value::Object(map) = &mut value {
        map.insert("workspace_path".to_owned(), json!(workspace_path));
    }
    Ok(Json(value).into_response())
}

/// `POST /api/memory/embedding/install`: this build ships no embedding model and never
/// downloads one, so the install always fails as spec 02 §8.4 says a failed one answers.
pub(crate) async fn embedding_install() -> Response {
    (
        StatusCode::BAD_GATEWAY,
        Json(json!({
            "embedding_available": false,
            "code": "EMBEDDING_UNAVAILABLE",
            "error": "this build has no embedding model and downloads none: retrieval uses BM25",
        })),
    )
        .into_response()
}

/// `GET /api/memory/refs`: units whose id, topic path or content contains `q`.
pub(crate) async fn refs(State(state): AppState, Query(query): Params) -> Result<Response, ApiError> {
    let limit = match query.get("limit").map(String::as_str) {
        None | Some("") => 100,
        Some(text) => match text.parse::<i64>() {
            Ok(n) => n.clamp(1, 500) as usize,
            Err(_) => {
                return Ok((
                    StatusCode::BAD_REQUEST,
                    Json(json!({"error": "limit must be an integer", "code": "INVALID_ARGUMENT"})),
                )
                    .into_response());
            }
        },
    };
    let root = state.root.clone();
    let needle = query.get("q").map(|q| q.to_lowercase()).unwrap_or_default();
    let rows = blocking(move || -> Result<Vec<Value>, ApiError> {
        let workspace_id =
            Workspace::open(&root).map(|workspace| workspace.workspace_id().to_owned()).unwrap_or_default();
        let topics = read_topics(&root)?;
        let vfs = RealVfs::new(&root);
        let resolver = SourceResolver::new(WorkspaceSources::new(&vfs));
        let (_, units, _) =
            parse_tree(topics.iter().map(|(path, bytes)| (path, bytes)), &resolver, Mode::Lenient).into_parts();
        Ok(units
            .iter()
            .filter(|unit| {
                needle.is_empty()
                    || unit.memory_id.to_lowercase().contains(&needle)
                    || unit.topic_path().to_lowercase().contains(&needle)
                    || unit.content.to_lowercase().contains(&needle)
            })
            .take(limit)
            .map(|unit| {
                json!({
                    "workspace_id": workspace_id,
                    "memory_id": unit.memory_id,
                    "topic_path": unit.topic_path(),
                    "content": unit.content,
                    "when": unit.when,
                })
            })
            .collect())
    })
    .await??;
    Ok(Json(Value::Array(rows)).into_response())
}

/// Every `topics/**.md` file by the listing rule, path → bytes.
pub(crate) fn read_topics(root: &std::path::Path) -> Result<Vec<(String, Vec<u8>)>, ApiError> {
    let listing = Listing::read(root, Scope::Under(&["topics"]));
    let mut out = Vec::new();
    for file in &listing.files {
        if file.class() != FileClass::Topic {
            continue;
        }
        let Some(path) = file.path() else { continue };
        let bytes =
            std::fs::read(root.join(path)).map_err(|err| ApiError::internal(format!("cannot read {path}: {err}")))?;
        out.push((path.to_owned(), bytes));
    }
    Ok(out)
}

/// `POST /api/memory/changes`: a §4.2 changes request through the warm backend's
/// `memory_update` (the owner's authority); its `TxError` with spec 02 §8.4's status.
pub(crate) async fn changes(State(state): AppState, body: JsonBody) -> Result<Response, ApiError> {
    let body = Value::Object(body.object()?);
    let answer = tool(&state, "memory_update", body).await?;
    Ok(tool_response(&answer))
}

/// `GET /api/memory/recent`: `recent_events.jsonl` newest first.
pub(crate) async fn recent(State(state): AppState) -> Result<Response, ApiError> {
    let root = state.root.clone();
    let rows = blocking(move || {
        let text = std::fs::read_to_string(root.join("recent_events.jsonl")).unwrap_or_default();
        let mut rows: Vec<Value> = text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
        rows.reverse();
        rows
    })
    .await?;
    let mut headers = HeaderMap::new();
    headers.insert("x-memory-recent-limit", HeaderValue::from(RECENT_LIMIT));
    Ok((headers, Json(Value::Array(rows))).into_response())
}

/// `GET /api/memory/core`: the master, the render, what is injected, and the render
/// report (budget, tokens used, blocks left out and why), read under the write lock
/// (5 s, spec 02 §8.4) so the master and its render come from one install.
pub(crate) async fn core(State(state): AppState) -> Result<Response, ApiError> {
    let root = state.root.clone();
    let inject = state.config.core_inject;
    let value = blocking(move || -> Result<Value, ApiError> {
        let _held = match &state.local {
            Some(local) => Some(local.lock(STAGED_EDIT_LOCK_TIMEOUT).map_err(|error| backend_error(&error))?),
            None => None,
        };
        let master = file_facts(&root.join("topics/core.md")).or_else(|| file_facts(&root.join("core.md")));
        let rendered = file_facts(&root.join("core.md"));
        let report = std::fs::read(root.join(RUNTIME_DIR).join(CORE_REPORT_FILE))
            .ok()
            .and_then(|bytes| CoreReport::from_bytes(&bytes))
            .map(|report| report.to_json());
        let rendered_text = rendered.as_ref().map(|facts| facts.0.clone()).unwrap_or_default();
        let has_body = rendered_text.lines().any(|line| !line.trim().is_empty() && !line.starts_with("# "));
        let injected = if inject && has_body { rendered_text.trim().to_owned() } else { String::new() };
        let budget = report.as_ref().and_then(|r| r["budget"].as_u64()).unwrap_or(CORE_TOKEN_BUDGET as u64);
        Ok(json!({
            "content": master.as_ref().map(|f| f.0.as_str()).unwrap_or(""),
            "size": master.as_ref().map_or(0, |f| f.1),
            "mtime": master.as_ref().map(|f| f.2),
            "rendered_content": rendered_text,
            "rendered_size": rendered.as_ref().map_or(0, |f| f.1),
            "rendered_mtime": rendered.as_ref().map(|f| f.2),
            "rendered_tokens": count_o200k(&rendered_text),
            "injection_enabled": inject,
            "injected_content": injected,
            "injected_tokens": count_o200k(&injected),
            "budget_tokens": budget,
            "report": report,
        }))
    })
    .await??;
    Ok(Json(value).into_response())
}

/// `PUT /api/memory/core`: a hand edit writing `topics/core.md`.
pub(crate) async fn put_core(State(state): AppState, body: JsonBody) -> Result<Response, ApiError> {
    let body = body.object()?;
    let content = required_text(&body, "content")?.to_owned();
    super::routes_topics::write(state, "topics/core.md".to_owned(), Some(content)).await
}

/// A file's text, size and mtime (seconds), if it is a regular file.
pub(crate) fn file_facts(path: &std::path::Path) -> Option<(String, u64, f64)> {
    let meta = std::fs::symlink_metadata(path).ok().filter(std::fs::Metadata::is_file)?;
    let text = String::from_utf8_lossy(&std::fs::read(path).ok()?).into_owned();
    Some((text, meta.len(), mtime(&meta)))
}

/// Seconds since the epoch, as the reference's `stat().st_mtime`.
pub(crate) fn mtime(meta: &std::fs::Metadata) -> f64 {
    meta.modified()
        .ok()
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0.0, |since| since.as_secs_f64())
}

/// Call a registry tool as the owner on the blocking pool.
pub(crate) async fn tool(state: &Arc<Shared>, name: &'static str, arguments: Value) -> Result<String, ApiError> {
    let state = Arc::clone(state);
    blocking(move || state.backend.call_tool(name, &arguments, &Caller::local_owner(state.origin()))).await
}

/// A tool's answer as a response: a `TxError` with the status of its code, pretty JSON
/// output as JSON, any other text as `{"output": text}`.
pub(crate) fn tool_response(answer: &str) -> Response {
    match serde_json::from_str::<Value>(answer) {
        Ok(value) if value.is_object() => match tx_failure(&value) {
            Some(error) => error.into_response(),
            None => Json(value).into_response(),
        },
        _ => Json(json!({"output": answer})).into_response(),
    }
}

/// The error response of a `TxError` value, if it is one.
pub(crate) fn tx_failure(value: &Value) -> Option<ApiError> {
    if value.get("ok") != Some(&Value::Bool(false)) {
        return None;
    }
    let code = value.pointer("/error/code").and_then(Value::as_str).unwrap_or("INVALID_ARGUMENT");
    Some(ApiError::body(status_of(code), value.clone()))
}
