//! `GET /api/memory/search`: ranked BM25 hits as structured rows (the `search --json`
//! rows), with the speaker, path and date filters, for the page. The index is the
//! persistent one, kept open by the server and refreshed from the files per call.

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use scriptorium_backend_api::layers::retrieval::{self, Bm25Options, Filters, INDEX_TOP_K_MAX, Index};
use serde_json::json;

use super::error::ApiError;
use super::routes_memory::Params;
use super::state::{State as Shared, blocking};

type AppState = State<Arc<Shared>>;

/// The server's own search index, opened on first use.
#[derive(Default)]
pub(crate) struct SearchIndex(Mutex<Option<Index>>);

/// `GET /api/memory/search?q=…&top_k=8&path_prefix=…&speaker=…&date_from=…&date_to=…`:
/// `{query, results:[{path, anchor, line, headings, date, content, speaker_*, trust_state, …}]}`.
pub(crate) async fn search(State(state): AppState, Query(query): Params) -> Result<Response, ApiError> {
    let q =
        query.get("q").cloned().filter(|q| !q.trim().is_empty()).ok_or_else(|| ApiError::bad_query("q is required"))?;
    let top_k = match query.get("top_k") {
        None => 8,
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|k| (1..=INDEX_TOP_K_MAX).contains(k))
            .ok_or_else(|| ApiError::bad_query(format!("top_k must be 1 to {INDEX_TOP_K_MAX}")))?,
    };
    let text = |key: &str| query.get(key).filter(|v| !v.is_empty()).cloned();
    let options = Bm25Options {
        top_k,
        rerank: true,
        filters: Filters {
            path_prefix: text("path_prefix"),
            date_from: text("date_from"),
            date_to: text("date_to"),
            speaker: text("speaker"),
            include_sources: true,
        },
    };
    let outcome = blocking(move || -> Result<Vec<serde_json::Value>, retrieval::Error> {
        let mut slot = state.search.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match slot.as_mut() {
            Some(index) => {
                index.refresh(&state.root)?;
            }
            None => *slot = Some(Index::open(&state.root)?),
        }
        let Some(index) = slot.as_ref() else { return Ok(Vec::new()) };
        let hits = index.search(&q, &options)?;
        Ok(hits.iter().map(crate::search::hit_json).collect())
    })
    .await?;
    match outcome {
        Ok(results) => Ok(Json(json!({"query": query.get("q"), "results": results})).into_response()),
        Err(error) => {
            let status = if error.code().as_str().contains("READ") || error.code().as_str().contains("IO") {
                StatusCode::INTERNAL_SERVER_ERROR
            } else {
                StatusCode::BAD_REQUEST
            };
            Err(ApiError::detail(status, error.code().as_str(), error.message()))
        }
    }
}
