//! The web page: `GET /` and `GET /assets/*`, embedded from `assets/web/` at build time
//! (no Node toolchain, no files needed at run time).

use std::sync::Arc;

use axum::Router;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;

use super::state::State;

const INDEX: &str = include_str!("../../assets/web/index.html");
const STYLE: &str = include_str!("../../assets/web/style.css");

/// The page's routes.
pub(crate) fn routes() -> Router<Arc<State>> {
    Router::new()
        .route("/", get(|| async { ([(CONTENT_TYPE, "text/html; charset=utf-8")], INDEX).into_response() }))
        .route(
            "/assets/style.css",
            get(|| async { ([(CONTENT_TYPE, "text/css; charset=utf-8")], STYLE).into_response() }),
        )
}
