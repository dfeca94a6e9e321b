//! Every error answer is JSON with a stable code. HTTP-layer refusals use the spec's route
//! guard shape `{"detail":{"code","message"}}`; a route whose spec row names another body
//! (`{error}`, a `TxError`) builds it with [`ApiError::body`], always with a `code`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// No or a wrong bearer token.
pub(crate) const UNAUTHORIZED: &str = "CLI_HTTP_UNAUTHORIZED";
/// The `Host` header names no address of this server.
pub(crate) const FORBIDDEN_HOST: &str = "CLI_HTTP_FORBIDDEN_HOST";
/// The `Origin` header names another site.
pub(crate) const FORBIDDEN_ORIGIN: &str = "CLI_HTTP_FORBIDDEN_ORIGIN";
/// The body is larger than `--max-body`.
pub(crate) const BODY_TOO_LARGE: &str = "CLI_HTTP_BODY_TOO_LARGE";
/// The body is not the JSON the route takes.
pub(crate) const BAD_JSON: &str = "CLI_HTTP_BAD_JSON";
/// No such route, file or tool.
pub(crate) const NOT_FOUND: &str = "CLI_HTTP_NOT_FOUND";
/// The route exists without that method.
pub(crate) const METHOD_NOT_ALLOWED: &str = "CLI_HTTP_METHOD_NOT_ALLOWED";
/// A query parameter is missing or malformed.
pub(crate) const BAD_QUERY: &str = "CLI_HTTP_BAD_QUERY";
/// A bug or an unexpected failure of the server itself.
pub(crate) const INTERNAL: &str = "CLI_HTTP_INTERNAL";

/// An error answer: a status and its JSON body.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    body: Value,
}

impl ApiError {
    /// `{"detail":{"code","message"}}` with `status`.
    pub(crate) fn detail(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        ApiError { status, body: json!({"detail": {"code": code, "message": message.into()}}) }
    }

    /// Any JSON body with `status` (the body carries its own `code`).
    pub(crate) fn body(status: StatusCode, body: Value) -> Self {
        ApiError { status, body }
    }

    /// 500 `CLI_HTTP_INTERNAL`.
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::detail(StatusCode::INTERNAL_SERVER_ERROR, INTERNAL, message)
    }

    /// 400 `CLI_HTTP_BAD_QUERY`.
    pub(crate) fn bad_query(message: impl Into<String>) -> Self {
        Self::detail(StatusCode::BAD_REQUEST, BAD_QUERY, message)
    }

    /// 404 `{"error":"not found","code":"CLI_HTTP_NOT_FOUND"}` (spec 02 §8.4's body).
    pub(crate) fn not_found() -> Self {
        Self::body(StatusCode::NOT_FOUND, json!({"error": "not found", "code": NOT_FOUND}))
    }

    /// 403 `{"error":"forbidden","code":…}` (spec 02 §8.4's body).
    pub(crate) fn forbidden(code: &str, message: impl Into<String>) -> Self {
        Self::body(StatusCode::FORBIDDEN, json!({"error": "forbidden", "code": code, "message": message.into()}))
    }

    /// The JSON body.
    pub(crate) fn into_body(self) -> Value {
        self.body
    }

    /// The status.
    #[cfg(test)]
    pub(crate) fn status(&self) -> StatusCode {
        self.status
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

/// The HTTP status of a contract error code (spec 02 §8.4's changes row, plus 403 for a
/// path the listing rule refuses and 5xx for the server's own faults).
pub(crate) fn status_of(code: &str) -> StatusCode {
    match code {
        "CONCURRENT_UPDATE" => StatusCode::CONFLICT,
        "MEMORY_NOT_FOUND" => StatusCode::NOT_FOUND,
        "GIT_UNAVAILABLE" | "MEMORY_DISABLED" => StatusCode::SERVICE_UNAVAILABLE,
        "GIT_COMMIT_FAILED" | "BACKEND_IO" | "BACKEND_INTERNAL" | "BACKEND_STATE_DAMAGED" => {
            StatusCode::INTERNAL_SERVER_ERROR
        }
        "PATH_OUTSIDE_WORKSPACE" | "PERMISSION_DENIED" => StatusCode::FORBIDDEN,
        _ => StatusCode::BAD_REQUEST,
    }
}

/// A backend error (a transaction's converts with `into()`) as the `TxError` body
/// `{ok:false, error:{code, message, path?, details?}}` with its status.
pub(crate) fn backend_error(error: &scriptorium_backend_api::Error) -> ApiError {
    let code = error.code().as_str();
    let mut inner = json!({"code": code, "message": error.message()});
    if let Some(path) = error.path() {
        inner["path"] = json!(path);
    }
    if let Some(details) = error.details() {
        inner["details"] = Value::Object(details.clone());
    }
    ApiError::body(status_of(code), json!({"ok": false, "error": inner}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contract_codes_map_to_the_spec_statuses() {
        assert_eq!(status_of("CONCURRENT_UPDATE"), StatusCode::CONFLICT);
        assert_eq!(status_of("MEMORY_NOT_FOUND"), StatusCode::NOT_FOUND);
        assert_eq!(status_of("GIT_UNAVAILABLE"), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(status_of("GIT_COMMIT_FAILED"), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(status_of("INVALID_TOPIC_FORMAT"), StatusCode::BAD_REQUEST);
        assert_eq!(ApiError::not_found().status(), StatusCode::NOT_FOUND);
    }
}
