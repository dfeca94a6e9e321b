//! `memory.backend = none` (spec 02 §1.2): `serve` answers every route with 503
//! `MEMORY_DISABLED` in the spec's body, and the workspace never comes into existence.

use serde_json::json;

use crate::TempDir;
use crate::serve_client::{BoxError, Server};

#[test]
fn a_disabled_backend_answers_503_everywhere_and_creates_nothing() -> Result<(), BoxError> {
    let dir = TempDir::new()?;
    let config = dir.write("config.toml", b"[memory]\nbackend = \"none\"\n")?;
    let ws = dir.path().join("memory");
    let config_arg = config.display().to_string();
    let server = Server::start(&ws, &["--config", &config_arg], &[])?;
    assert!(server.token.is_empty(), "no token file either");
    let expected =
        json!({"detail": {"code": "MEMORY_DISABLED", "message": "memory is disabled by memory.backend=none"}});
    let host = server.host();
    for (method, target, body) in [
        ("GET", "/api/memory/status", None),
        ("GET", "/api/memory/status?settings=true", None),
        ("GET", "/api/memory/topics", None),
        ("GET", "/api/memory/topics/people/ada.md", None),
        ("PUT", "/api/memory/topics/people/ada.md", Some(json!({"content": "# Ada\n"}))),
        ("DELETE", "/api/memory/topics/people/ada.md", None),
        ("GET", "/api/memory/core", None),
        ("PUT", "/api/memory/core", Some(json!({"content": "# Core\n"}))),
        ("POST", "/api/memory/changes", Some(json!({}))),
        ("POST", "/api/memory/embedding/install", None),
        ("GET", "/api/memory/refs?q=a", None),
        ("GET", "/api/memory/timeline", None),
        ("GET", "/api/memory/recent", None),
        ("GET", "/api/memory/recall?q=tea", None),
        ("GET", "/api/memory/context", None),
        ("POST", "/api/memory/write", Some(json!({"session_id": "s"}))),
        ("POST", "/api/sessions/s/messages", Some(json!({"messages": [{"id": "1", "role": "user", "content": "hi"}]}))),
        ("POST", "/api/tools/memory_status", Some(json!({}))),
        ("GET", "/api/memory/history", None),
        ("GET", "/api/openapi.json", None),
        ("GET", "/", None),
        ("GET", "/api/unknown", None),
    ] {
        let text = body.map(|b| b.to_string());
        let reply = server.raw(method, target, &[("Host", &host)], text.as_deref().map(str::as_bytes))?;
        assert_eq!(reply.status, 503, "{method} {target}");
        assert_eq!(reply.json(), expected, "{method} {target}");
    }
    // The Host guard still runs first.
    let foreign = server.raw("GET", "/api/memory/status", &[("Host", "evil.example")], None)?;
    assert_eq!(foreign.status, 403);
    assert!(!ws.exists(), "memory.backend = none created the workspace");
    assert!(!dir.path().join("sessions.sqlite3").exists(), "nor the session store");
    Ok(())
}
