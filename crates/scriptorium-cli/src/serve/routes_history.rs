//! History for the page: the revisions of one file, the diff a revision made to it, and
//! restoring a file to a revision (one validated owner transaction, as `restore` does).

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use scriptorium_backend_api::HandEdit;
use scriptorium_backend_api::layers::transaction::{Error, ErrorCode, History, HistoryEntry};
use serde_json::{Value, json};

use super::body::{JsonBody, required_text};
use super::error::{ApiError, backend_error};
use super::routes_memory::Params;
use super::state::{State as Shared, blocking};
use super::{hand_edit, paths};

type AppState = State<Arc<Shared>>;

/// How far back the history routes walk.
const HISTORY_WALK: usize = 10_000;
/// The default and largest `limit` of `GET /api/memory/history`.
const DEFAULT_LIMIT: usize = 50;
const MAX_LIMIT: usize = HISTORY_WALK;

/// `GET /api/memory/history?path=P&limit=N`: the commits that changed `P` (every commit
/// without `path`), newest first: `[{commit, time, iso_time, message, changed}]`.
pub(crate) async fn history(State(state): AppState, Query(query): Params) -> Result<Response, ApiError> {
    let path = query.get("path").map(|raw| paths::relative(raw)).transpose()?;
    let limit = match query.get("limit") {
        None => DEFAULT_LIMIT,
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_LIMIT).contains(n))
            .ok_or_else(|| ApiError::bad_query(format!("limit must be 1 to {MAX_LIMIT}")))?,
    };
    let root = state.root.clone();
    let rows = blocking(move || -> Result<Vec<Value>, Error> {
        let entries = entries(&root)?;
        Ok(entries
            .iter()
            .filter(|entry| path.as_ref().is_none_or(|path| entry.changed.iter().any(|changed| changed == path)))
            .take(limit)
            .map(|entry| {
                json!({
                    "commit": entry.id,
                    "time": entry.time,
                    "iso_time": entry.iso_time(),
                    "message": entry.message,
                    "changed": entry.changed,
                })
            })
            .collect())
    })
    .await?
    .map_err(|error| backend_error(&error.into()))?;
    Ok(Json(Value::Array(rows)).into_response())
}

fn entries(root: &std::path::Path) -> Result<Vec<HistoryEntry>, Error> {
    match History::open_existing(root)? {
        Some(history) => history.list(HISTORY_WALK),
        None => Ok(Vec::new()),
    }
}

/// `GET /api/memory/diff?path=P&commit=C`: the unified diff commit `C` made to `P`
/// (against its first parent; every line added for the first commit).
pub(crate) async fn diff(State(state): AppState, Query(query): Params) -> Result<Response, ApiError> {
    let path = paths::relative(query.get("path").ok_or_else(|| ApiError::bad_query("path is required"))?)?;
    let commit = query.get("commit").ok_or_else(|| ApiError::bad_query("commit is required"))?.clone();
    let root = state.root.clone();
    let value = blocking(move || -> Result<Value, Error> {
        let history = History::open_existing(&root)?
            .ok_or_else(|| Error::new(ErrorCode::MemoryNotFound, "the workspace has no history yet"))?;
        let list = history.list(HISTORY_WALK)?;
        let at = list
            .iter()
            .position(|entry| entry.id == commit || (commit.len() >= 7 && entry.id.starts_with(&commit)))
            .ok_or_else(|| Error::new(ErrorCode::MemoryNotFound, format!("no commit {commit} in the history")))?;
        let entry = &list[at];
        let parent = list.get(at + 1);
        let new = history.files_at(&entry.id, &[path.as_str()])?.remove(&path).unwrap_or_default();
        let old = match parent {
            Some(parent) => history.files_at(&parent.id, &[path.as_str()])?.remove(&path).unwrap_or_default(),
            None => Vec::new(),
        };
        let old = String::from_utf8_lossy(&old);
        let new = String::from_utf8_lossy(&new);
        let text = similar::TextDiff::from_lines(old.as_ref(), new.as_ref())
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{path}"), &format!("b/{path}"))
            .to_string();
        Ok(json!({
            "path": path,
            "commit": entry.id,
            "parent": parent.map(|p| p.id.clone()),
            "message": entry.message,
            "iso_time": entry.iso_time(),
            "diff": text,
        }))
    })
    .await?
    .map_err(|error| backend_error(&error.into()))?;
    Ok(Json(value).into_response())
}

/// `POST /api/memory/restore {path, commit}`: bring one topic file back to its bytes at
/// `commit` (deleted when it did not exist then), validated like any edit.
pub(crate) async fn restore(State(state): AppState, body: JsonBody) -> Result<Response, ApiError> {
    let body = body.object()?;
    let raw = required_text(&body, "path")?;
    let path = paths::relative(raw)?;
    if !path.starts_with("topics/") || !path.ends_with(".md") {
        return Err(ApiError::forbidden(paths::OUTSIDE, "only topics/**.md files can be restored"));
    }
    if paths::crosses_link(&state.root, &path) {
        return Err(ApiError::forbidden(paths::OUTSIDE, "the path goes through a symbolic link"));
    }
    let commit = required_text(&body, "commit")?.to_owned();
    let outcome = blocking(move || -> Result<Option<Value>, scriptorium_backend_api::Error> {
        let history = History::open_existing(&state.root)?
            .ok_or_else(|| Error::new(ErrorCode::MemoryNotFound, "the workspace has no history yet"))?;
        let then = history.files_at(&commit, &[path.as_str()])?;
        let now = std::fs::read(state.root.join(&path)).ok();
        let content = match (then.get(&path), now) {
            (Some(bytes), Some(current)) if *bytes == current => return Ok(None),
            (None, None) => return Ok(None),
            (Some(bytes), _) => Some(
                String::from_utf8(bytes.clone())
                    .map_err(|_| Error::new(ErrorCode::InvalidTopicFormat, "not UTF-8").with_path(&path))?,
            ),
            (None, Some(_)) => None,
        };
        let mut edit = HandEdit::one(path.clone(), content, format!("memory: restore {commit} {path}"));
        // Restored paragraphs keep the block ids they had, so links to them work again.
        edit.known_ids_from = then.into_iter().collect::<BTreeMap<_, _>>();
        let result = hand_edit::install(&state, &edit)?;
        Ok(Some(
            json!({"ok": true, "restored": true, "revision": result.revision, "changed_files": result.changed_files}),
        ))
    })
    .await?
    .map_err(|error| backend_error(&error))?;
    Ok(Json(outcome.unwrap_or_else(|| json!({"ok": true, "restored": false, "message": "the file already matches"})))
        .into_response())
}
