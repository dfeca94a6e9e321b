//! The token check, on every route including the page and its assets.
//!
//! A client sends `Authorization: Bearer <token>`. A browser cannot, so the page is opened
//! once as `/?token=<token>` (the address `serve --print-token` prints): that answer sets
//! the token as an `HttpOnly; SameSite=Strict` cookie and redirects to `/`, so the token
//! leaves the address bar and no script can read it; after that the cookie is accepted in
//! place of the header. `SameSite=Strict` and the `Origin` guard keep other sites from
//! riding on the cookie.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{AUTHORIZATION, COOKIE, LOCATION, SET_COOKIE};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};

use super::error::{ApiError, UNAUTHORIZED};
use super::state;

/// The cookie that carries the token for the page.
pub(crate) const COOKIE_NAME: &str = "scriptorium_token";

/// The middleware.
pub(crate) async fn check(State(state): State<Arc<state::State>>, request: Request, next: Next) -> Response {
    let Some(token) = state.token.as_deref() else {
        // No token exists only when memory is disabled, and the disabled gate answered already.
        return next.run(request).await;
    };
    if request.uri().path() == "/"
        && let Some(given) = query_token(request.uri().query())
    {
        if !same(given.as_bytes(), token.as_bytes()) {
            return unauthorized("the token in the address is wrong");
        }
        let cookie = format!("{COOKIE_NAME}={token}; HttpOnly; SameSite=Strict; Path=/");
        let mut response = StatusCode::SEE_OTHER.into_response();
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            response.headers_mut().insert(SET_COOKIE, value);
        }
        response.headers_mut().insert(LOCATION, HeaderValue::from_static("/"));
        return response;
    }
    let headers = request.headers();
    let bearer = headers
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::trim);
    let cookie = headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE_NAME)
        .map(|(_, value)| value);
    match bearer.or(cookie) {
        Some(given) if same(given.as_bytes(), token.as_bytes()) => next.run(request).await,
        Some(_) => unauthorized("the token is wrong"),
        None => unauthorized(
            "a bearer token is required: Authorization: Bearer <token> (the token file's path is printed when the server starts)",
        ),
    }
}

fn unauthorized(message: &str) -> Response {
    let mut response = ApiError::detail(StatusCode::UNAUTHORIZED, UNAUTHORIZED, message).into_response();
    response.headers_mut().insert("www-authenticate", HeaderValue::from_static("Bearer"));
    response
}

/// The `token` query parameter, if any (a token is hex, so it needs no decoding).
fn query_token(query: Option<&str>) -> Option<&str> {
    query?.split('&').filter_map(|pair| pair.split_once('=')).find(|(name, _)| *name == "token").map(|(_, v)| v)
}

/// Compare without stopping at the first difference, so timing tells nothing.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"ab"));
        assert_eq!(query_token(Some("a=1&token=ff")), Some("ff"));
        assert_eq!(query_token(Some("tokens=ff")), None);
        assert_eq!(query_token(None), None);
    }
}
