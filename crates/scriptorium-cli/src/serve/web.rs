//! The web page: `GET /` and `GET /assets/<name>`, embedded from `assets/web/` at build
//! time (no Node toolchain, no files needed at run time), and the security headers every
//! answer carries.
//!
//! The page renders untrusted memory text, so its policy allows only its own scripts and
//! styles (no inline script, nothing from elsewhere) and it may not be framed.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Request};
use axum::http::HeaderValue;
use axum::http::header::{
    CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::error::ApiError;
use super::state::State;

/// The page's policy: its own origin only, no inline script or style, no framing.
pub(crate) const CONTENT_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// Every asset under `/assets/`: name, content type, bytes.
pub(crate) const ASSETS: &[(&str, &str, &str)] = &[
    ("style.css", CSS, include_str!("../../assets/web/style.css")),
    ("app.js", JS, include_str!("../../assets/web/app.js")),
    ("api.js", JS, include_str!("../../assets/web/api.js")),
    ("dom.js", JS, include_str!("../../assets/web/dom.js")),
    ("markdown.js", JS, include_str!("../../assets/web/markdown.js")),
    ("frame.js", JS, include_str!("../../assets/web/frame.js")),
    ("topics.js", JS, include_str!("../../assets/web/topics.js")),
    ("search.js", JS, include_str!("../../assets/web/search.js")),
    ("core.js", JS, include_str!("../../assets/web/core.js")),
    ("timeline.js", JS, include_str!("../../assets/web/timeline.js")),
    ("history.js", JS, include_str!("../../assets/web/history.js")),
    ("edit.js", JS, include_str!("../../assets/web/edit.js")),
];

const INDEX: &str = include_str!("../../assets/web/index.html");

/// The page's routes.
pub(crate) fn routes() -> Router<Arc<State>> {
    Router::new()
        .route("/", get(|| async { ([(CONTENT_TYPE, HTML)], INDEX).into_response() }))
        .route("/assets/{name}", get(asset))
}

async fn asset(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|(known, _, _)| *known == name) {
        Some((_, kind, body)) => ([(CONTENT_TYPE, *kind)], *body).into_response(),
        // A missing file, not a missing route: the `{error:"not found"}` shape.
        None => ApiError::not_found().into_response(),
    }
}

/// The middleware: the security headers on every answer, the refusals included (a JSON
/// answer opened as a page must not be sniffed into HTML or framed either).
pub(crate) async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_POLICY));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}
