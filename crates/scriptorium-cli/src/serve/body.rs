//! The JSON request body: read within the size cap and parsed here, so an oversize body
//! is 413 `CLI_HTTP_BODY_TOO_LARGE` and malformed JSON is 400 `CLI_HTTP_BAD_JSON`, both
//! in the JSON error shape (axum's own rejections are plain text).

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use serde_json::{Map, Value};

use super::error::{ApiError, BAD_JSON, BODY_TOO_LARGE};

/// A request body that is one JSON value.
pub(crate) struct JsonBody(pub(crate) Value);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::detail(StatusCode::PAYLOAD_TOO_LARGE, BODY_TOO_LARGE, "the request body is too large")
            } else {
                ApiError::detail(
                    StatusCode::BAD_REQUEST,
                    BAD_JSON,
                    format!("cannot read the request body: {rejection}"),
                )
            }
        })?;
        serde_json::from_slice(&bytes)
            .map(JsonBody)
            .map_err(|err| ApiError::detail(StatusCode::BAD_REQUEST, BAD_JSON, format!("the body is not JSON: {err}")))
    }
}

impl JsonBody {
    /// The body as a JSON object, or 400 `INVALID_ARGUMENT` in the `TxError` shape.
    pub(crate) fn object(self) -> Result<Map<String, Value>, ApiError> {
        match self.0 {
            Value::Object(map) => Ok(map),
            _ => Err(invalid("the request body must be a JSON object")),
        }
    }
}

/// 400 `{ok:false, error:{code:"INVALID_ARGUMENT", message}}`.
pub(crate) fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::body(
        StatusCode::BAD_REQUEST,
        serde_json::json!({"ok": false, "error": {"code": "INVALID_ARGUMENT", "message": message.into()}}),
    )
}

/// The string field `key` of `body`, required.
pub(crate) fn required_text<'a>(body: &'a Map<String, Value>, key: &str) -> Result<&'a str, ApiError> {
    match body.get(key) {
        Some(Value::String(text)) => Ok(text),
        Some(_) => Err(invalid(format!("`{key}` must be a string"))),
        None => Err(invalid(format!("`{key}` is required"))),
    }
}
