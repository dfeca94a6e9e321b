//! Spec 02 §8.4's topic and timeline routes. Path parameters are read from the raw URI
//! (before axum decodes them) and resolved by `paths`; edits are owner hand edits.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use scriptorium_backend_api::HandEdit;
use scriptorium_backend_api::layers::transaction::{FileClass, Listing, Scope};
use serde_json::{Value, json};

use super::body::{JsonBody, required_text};
use super::error::ApiError;
use super::routes_memory::{file_facts, mtime};
use super::state::{State as Shared, blocking};
use super::{hand_edit, paths};

type AppState = State<Arc<Shared>>;

const TOPICS_PREFIX: &str = "/api/memory/topics/";
const TIMELINE_PREFIX: &str = "/api/memory/timeline/";

/// `GET /api/memory/topics`: every topic file but `topics/core.md`.
pub(crate) async fn list(State(state): AppState) -> Result<Response, ApiError> {
    let root = state.root.clone();
    let rows = blocking(move || {
        let listing = Listing::read(&root, Scope::Under(&["topics"]));
        listing
            .files
            .iter()
            .filter(|file| file.class() == FileClass::Topic)
            .filter_map(|file| file.path().map(|path| (path.to_owned(), &file.meta)))
            .filter(|(path, _)| path != "topics/core.md")
            .map(|(path, meta)| {
                let relative = path.trim_start_matches("topics/").to_owned();
                let text = std::fs::read_to_string(root.join(&path)).unwrap_or_default();
                let stem = relative.rsplit('/').next().unwrap_or(&relative).trim_end_matches(".md").to_owned();
                let title = text
                    .lines()
                    .find_map(|line| line.strip_prefix("# "))
                    .map(|title| title.trim().to_owned())
                    .unwrap_or(stem);
                let kind = relative.split_once('/').map(|(first, _)| first.to_owned()).unwrap_or_default();
                json!({"path": relative, "title": title, "type": kind, "size": meta.len(), "mtime": mtime(meta)})
            })
            .collect::<Vec<Value>>()
    })
    .await?;
    Ok(Json(Value::Array(rows)).into_response())
}

/// The raw (undecoded) path parameter after `prefix`.
fn raw_param<'a>(uri: &'a Uri, prefix: &str) -> &'a str {
    uri.path().strip_prefix(prefix).unwrap_or("")
}

/// `GET /api/memory/topics/{path}`.
pub(crate) async fn get(State(state): AppState, uri: Uri) -> Result<Response, ApiError> {
    let path = paths::topic(raw_param(&uri, TOPICS_PREFIX))?;
    let root = state.root.clone();
    let value = blocking(move || -> Result<Value, ApiError> {
        let file = paths::on_disk(&root, &path)?.ok_or_else(ApiError::not_found)?;
        let (content, _, _) = file_facts(&file).ok_or_else(ApiError::not_found)?;
        Ok(json!({"path": path.trim_start_matches("topics/"), "content": content}))
    })
    .await??;
    Ok(Json(value).into_response())
}

/// `PUT /api/memory/topics/{path}` with `{content}`.
pub(crate) async fn put(State(state): AppState, uri: Uri, body: JsonBody) -> Result<Response, ApiError> {
    let path = paths::topic(raw_param(&uri, TOPICS_PREFIX))?;
    let body = body.object()?;
    let content = required_text(&body, "content")?.to_owned();
    write(state, path, Some(content)).await
}

/// `DELETE /api/memory/topics/{path}`.
pub(crate) async fn delete(State(state): AppState, uri: Uri) -> Result<Response, ApiError> {
    let path = paths::topic(raw_param(&uri, TOPICS_PREFIX))?;
    let root = state.root.clone();
    let probe = path.clone();
    if blocking(move || paths::on_disk(&root, &probe)).await??.is_none() {
        return Err(ApiError::not_found());
    }
    write(state, path, None).await
}

/// One hand edit of `path` (write or delete): 200 `{ok:true[, warning], revision}`,
/// 400 `{error, code, details}` on rejection, 403 for a path through a link.
pub(crate) async fn write(state: Arc<Shared>, path: String, content: Option<String>) -> Result<Response, ApiError> {
    if paths::crosses_link(&state.root, &path) {
        return Err(ApiError::forbidden(paths::OUTSIDE, "the path goes through a symbolic link"));
    }
    let verb = if content.is_some() { "edit" } else { "delete" };
    let edit = HandEdit::one(path.clone(), content, format!("memory: hand {verb} {path}"));
    let outcome = blocking(move || hand_edit::install(&state, &edit)).await?;
    match outcome {
        Ok(result) => {
            let mut value = json!({"ok": true, "revision": result.revision, "changed_files": result.changed_files});
            if result.memory_committed && !result.git_committed {
                value["warning"] = json!("installed, but the history commit failed");
            }
            Ok(Json(value).into_response())
        }
        Err(error) => {
            let code = error.code().as_str();
            let status = match code {
                "CONCURRENT_UPDATE" => StatusCode::CONFLICT,
                "PATH_OUTSIDE_WORKSPACE" | "READ_ONLY_PATH" => StatusCode::FORBIDDEN,
                "GIT_UNAVAILABLE" | "MEMORY_DISABLED" => StatusCode::SERVICE_UNAVAILABLE,
                "BACKEND_IO" | "GIT_COMMIT_FAILED" | "BACKEND_INTERNAL" => StatusCode::INTERNAL_SERVER_ERROR,
                _ => StatusCode::BAD_REQUEST,
            };
            let mut body = json!({"error": error.message(), "code": code});
            if let Some(details) = error.details() {
                body["details"] = Value::Object(details.clone());
            }
            Err(ApiError::body(status, body))
        }
    }
}

/// `GET /api/memory/timeline`: every timeline file, newest first.
pub(crate) async fn timeline(State(state): AppState) -> Result<Response, ApiError> {
    let root = state.root.clone();
    let rows = blocking(move || {
        let listing = Listing::read(&root, Scope::Under(&["timeline"]));
        let mut rows: Vec<(String, Value)> = listing
            .files
            .iter()
            .filter(|file| file.class() == FileClass::Visible)
            .filter_map(|file| {
                let path = file.path()?;
                let date = path.strip_prefix("timeline/")?.strip_suffix(".md")?.replace('/', "-");
                valid_date(&date)
                    .then(|| (date.clone(), json!({"date": date, "size": file.meta.len(), "mtime": mtime(&file.meta)})))
            })
            .collect();
        rows.sort_by(|a, b| b.0.cmp(&a.0));
        rows.into_iter().map(|(_, row)| row).collect::<Vec<Value>>()
    })
    .await?;
    Ok(Json(Value::Array(rows)).into_response())
}

/// `GET /api/memory/timeline/{date}`: an invalid temporal value is 403.
pub(crate) async fn timeline_day(State(state): AppState, uri: Uri) -> Result<Response, ApiError> {
    let date = paths::percent_decode(raw_param(&uri, TIMELINE_PREFIX));
    if !valid_date(&date) {
        return Err(ApiError::forbidden("INVALID_ARGUMENT", "not a date of the form YYYY, YYYY-MM or YYYY-MM-DD"));
    }
    let root = state.root.clone();
    let relative = format!("timeline/{}.md", date.replace('-', "/"));
    let value = blocking(move || -> Result<Value, ApiError> {
        let content = match paths::on_disk(&root, &relative)? {
            Some(file) => file_facts(&file).map(|facts| facts.0).unwrap_or_default(),
            None => String::new(),
        };
        Ok(json!({"date": date, "content": content}))
    })
    .await??;
    Ok(Json(value).into_response())
}

/// `YYYY`, `YYYY-MM` or `YYYY-MM-DD` with a month 1..12 and a day 1..31.
fn valid_date(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let digits = |part: &str, len: usize| part.len() == len && part.bytes().all(|b| b.is_ascii_digit());
    let in_range = |part: &str, high: u32| part.parse::<u32>().is_ok_and(|n| (1..=high).contains(&n));
    match parts.as_slice() {
        [year] => digits(year, 4),
        [year, month] => digits(year, 4) && digits(month, 2) && in_range(month, 12),
        [year, month, day] => {
            digits(year, 4) && digits(month, 2) && in_range(month, 12) && digits(day, 2) && in_range(day, 31)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::valid_date;

    #[test]
    fn dates_are_checked() {
        for good in ["2026", "2026-03", "2026-03-14"] {
            assert!(valid_date(good), "{good}");
        }
        for bad in ["", "26", "2026-13", "2026-00", "2026-03-32", "2026-3-1", "../x", "2026-03-14-1", "abcd"] {
            assert!(!valid_date(bad), "{bad}");
        }
    }
}
