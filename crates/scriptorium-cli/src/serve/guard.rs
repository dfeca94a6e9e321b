//! DNS-rebinding and cross-site guard: the `Host` header must name this server by a
//! loopback name or address with its bound port, and an `Origin` header, when sent,
//! must be `http://` plus such a host. A page elsewhere (even one whose name resolves
//! to 127.0.0.1) is refused before anything else runs.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::http::header::{HOST, ORIGIN};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};

use super::error::{ApiError, FORBIDDEN_HOST, FORBIDDEN_ORIGIN};
use super::state;

/// The middleware.
pub(crate) async fn check(State(state): State<Arc<state::State>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers.get(HOST).and_then(|value| value.to_str().ok());
    if !host.is_some_and(|host| allowed_host(host, state.bound)) {
        return ApiError::detail(StatusCode::FORBIDDEN, FORBIDDEN_HOST, "the Host header does not name this server")
            .into_response();
    }
    if let Some(origin) = headers.get(ORIGIN) {
        let allowed = origin
            .to_str()
            .ok()
            .and_then(|origin| origin.strip_prefix("http://"))
            .is_some_and(|host| allowed_host(host, state.bound));
        if !allowed {
            return ApiError::detail(StatusCode::FORBIDDEN, FORBIDDEN_ORIGIN, "requests from another site are refused")
                .into_response();
        }
    }
    next.run(request).await
}

/// Whether `host` (`name[:port]`) names the server bound at `bound`: a loopback name or
/// address, or the bound address itself, with the bound port (omitted only for port 80).
pub(crate) fn allowed_host(host: &str, bound: SocketAddr) -> bool {
    let host = host.to_ascii_lowercase();
    let (name, port) = match host.rsplit_once(':') {
        // `[::1]` without a port has its colons inside the brackets.
        Some((name, port)) if !port.contains(']') => (name, port.parse::<u16>().ok()),
        _ => (host.as_str(), Some(80)),
    };
    if port != Some(bound.port()) {
        return false;
    }
    let bound_ip = bound.ip().to_string();
    let bound_name = if bound.is_ipv6() { format!("[{bound_ip}]") } else { bound_ip };
    matches!(name, "localhost" | "127.0.0.1" | "[::1]") || name == bound_name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_servers_loopback_names_pass() {
        let bound: SocketAddr = "127.0.0.1:8080".parse().expect("address");
        for good in ["127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080", "[::1]:8080"] {
            assert!(allowed_host(good, bound), "{good}");
        }
        for bad in [
            "127.0.0.1",
            "127.0.0.1:8081",
            "evil.example:8080",
            "localhost.evil.example:8080",
            "127.0.0.2:8080",
            "",
            "[::1]",
            "localhost:8080:8080",
        ] {
            assert!(!allowed_host(bad, bound), "{bad}");
        }
        let wide: SocketAddr = "192.168.1.5:80".parse().expect("address");
        assert!(allowed_host("192.168.1.5", wide));
        assert!(allowed_host("localhost:80", wide));
        assert!(!allowed_host("192.168.1.6", wide));
    }
}
