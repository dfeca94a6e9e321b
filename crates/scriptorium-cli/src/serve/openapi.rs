//! `GET /api/openapi.json`: the hand-written OpenAPI 3.1 document (`openapi.json` beside
//! this file). A test holds it equal to the route table, route by route and method by method.

use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};

/// The document.
pub(crate) const DOCUMENT: &str = include_str!("openapi.json");

/// The handler.
pub(crate) async fn document() -> Response {
    ([(CONTENT_TYPE, "application/json")], DOCUMENT).into_response()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::DOCUMENT;

    /// `(METHOD, path)` of every `.route("…", get(…).put(…))` call of a route table's
    /// source, however rustfmt wraps it.
    fn routes_in(source: &str) -> BTreeSet<(String, String)> {
        let mut found = BTreeSet::new();
        for chunk in source.split(".route(").skip(1) {
            let Some(rest) = chunk.trim_start().strip_prefix('"') else { continue };
            let Some((path, handlers)) = rest.split_once('"') else { continue };
            // axum's catch-all `{*path}` is OpenAPI's `{path}`.
            let path = path.replace("{*", "{");
            for method in ["get", "post", "put", "delete", "patch"] {
                let call = format!("{method}(");
                let named = handlers
                    .match_indices(&call)
                    .any(|(at, _)| handlers[..at].ends_with(|c: char| c == '.' || c == ',' || c.is_whitespace()));
                if named {
                    found.insert((method.to_uppercase(), path.clone()));
                }
            }
        }
        found
    }

    #[test]
    fn every_route_is_documented_and_every_documented_route_exists() {
        let mut routed = routes_in(include_str!("router.rs"));
        routed.extend(routes_in(include_str!("web.rs")));
        assert!(routed.len() > 20, "the route table was read: {routed:?}");
        let doc: serde_json::Value = serde_json::from_str(DOCUMENT).expect("openapi.json is JSON");
        assert_eq!(doc["openapi"], "3.1.0");
        let mut documented = BTreeSet::new();
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for method in item.as_object().expect("path item").keys() {
                documented.insert((method.to_uppercase(), path.clone()));
            }
        }
        let missing: Vec<_> = routed.difference(&documented).collect();
        let stale: Vec<_> = documented.difference(&routed).collect();
        assert!(missing.is_empty(), "routes missing from openapi.json: {missing:?}");
        assert!(stale.is_empty(), "openapi.json documents routes that do not exist: {stale:?}");
    }

    #[test]
    fn the_reader_sees_methods_only_as_calls() {
        let table = r#"
            .route("/a/{*path}", get(x::get).put(x::put).delete(x::delete))
            .route("/b", post(y::target))
            .route(
                "/c",
                get(|| async { forget(1) }),
            )
        "#;
        let found: Vec<_> = routes_in(table).into_iter().collect();
        assert_eq!(
            found,
            [
                ("DELETE".to_owned(), "/a/{path}".to_owned()),
                ("GET".to_owned(), "/a/{path}".to_owned()),
                ("GET".to_owned(), "/c".to_owned()),
                ("POST".to_owned(), "/b".to_owned()),
                ("PUT".to_owned(), "/a/{path}".to_owned()),
            ]
        );
    }
}
