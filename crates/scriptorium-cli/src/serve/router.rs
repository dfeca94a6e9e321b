//! The route table, one route per line (the OpenAPI test reads these lines), and the
//! layers around it: outermost the security headers (on every answer), then the
//! `Host`/`Origin` guard, then the disabled gate, then the token, then the body cap.

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::response::{IntoResponse as _, Response};
use axum::routing::{get, post};

use super::error::{ApiError, METHOD_NOT_ALLOWED, NOT_FOUND};
use super::state::State;
use super::{
    auth, disabled, guard, openapi, routes_contract, routes_evidence, routes_history, routes_memory, routes_search,
    routes_topics, web,
};

/// The whole application.
pub(crate) fn app(state: Arc<State>, max_body: usize) -> Router {
    #[rustfmt::skip]
    let routes = Router::new()
        .route("/api/memory/status", get(routes_memory::status))
        .route("/api/memory/embedding/install", post(routes_memory::embedding_install))
        .route("/api/memory/refs", get(routes_memory::refs))
        .route("/api/memory/changes", post(routes_memory::changes))
        .route("/api/memory/topics", get(routes_topics::list))
        // axum's `{*path}` never matches an empty path: the topics directory itself is 403 here.
        .route("/api/memory/topics/", get(routes_topics::get).put(routes_topics::put).delete(routes_topics::delete))
        .route("/api/memory/topics/{*path}", get(routes_topics::get).put(routes_topics::put).delete(routes_topics::delete))
        .route("/api/memory/timeline", get(routes_topics::timeline))
        .route("/api/memory/timeline/{date}", get(routes_topics::timeline_day))
        .route("/api/memory/recent", get(routes_memory::recent))
        .route("/api/memory/core", get(routes_memory::core).put(routes_memory::put_core))
        .route("/api/memory/history", get(routes_history::history))
        .route("/api/memory/diff", get(routes_history::diff))
        .route("/api/memory/restore", post(routes_history::restore))
        .route("/api/memory/search", get(routes_search::search))
        .route("/api/memory/source", get(routes_evidence::source))
        .route("/api/memory/validate", post(routes_evidence::validate))
        .route("/api/memory/context", get(routes_contract::context))
        .route("/api/memory/recall", get(routes_contract::recall))
        .route("/api/memory/write", post(routes_contract::write))
        .route("/api/sessions/{id}/messages", post(routes_contract::append))
        .route("/api/tools/{name}", post(routes_contract::tool))
        .route("/api/openapi.json", get(openapi::document));
    routes
        .merge(web::routes())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(max_body))
        .layer(from_fn_with_state(Arc::clone(&state), auth::check))
        .layer(from_fn_with_state(Arc::clone(&state), disabled::check))
        .layer(from_fn_with_state(Arc::clone(&state), guard::check))
        .layer(from_fn(web::security_headers))
        .with_state(state)
}

async fn not_found() -> Response {
    ApiError::detail(StatusCode::NOT_FOUND, NOT_FOUND, "no such route: /api/openapi.json lists them").into_response()
}

async fn method_not_allowed() -> Response {
    ApiError::detail(StatusCode::METHOD_NOT_ALLOWED, METHOD_NOT_ALLOWED, "the route does not take this method")
        .into_response()
}
