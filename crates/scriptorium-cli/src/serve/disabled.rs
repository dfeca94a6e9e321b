//! `memory.backend = none` (spec 02 §1.2): every route answers 503 `MEMORY_DISABLED`
//! before anything could create the workspace.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use scriptorium_backend_api::DISABLED_MESSAGE;

use super::error::ApiError;
use super::state;

/// The middleware.
pub(crate) async fn check(State(state): State<Arc<state::State>>, request: Request, next: Next) -> Response {
    if state.local.is_none() {
        return ApiError::detail(StatusCode::SERVICE_UNAVAILABLE, "MEMORY_DISABLED", DISABLED_MESSAGE).into_response();
    }
    next.run(request).await
}
