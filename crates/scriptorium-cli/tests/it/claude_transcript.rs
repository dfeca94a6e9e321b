//! Claude Code transcript lines as the research notes document them (uuid/parentUuid tree,
//! `message.content` a string for the person and text blocks for the assistant), for the
//! hook and watch tests.

use serde_json::json;

/// One user line.
pub(crate) fn user(session: &str, uuid: &str, parent: Option<&str>, at: &str, text: &str) -> String {
    json!({
        "type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": session, "timestamp": at,
        "cwd": "/home/owner/project", "gitBranch": "", "version": "2.1.37", "isSidechain": false,
        "userType": "external", "message": {"role": "user", "content": text},
    })
    .to_string()
        + "\n"
}

/// One assistant line (one text block).
pub(crate) fn assistant(session: &str, uuid: &str, parent: &str, at: &str, text: &str) -> String {
    json!({
        "type": "assistant", "uuid": uuid, "parentUuid": parent, "sessionId": session, "timestamp": at,
        "cwd": "/home/owner/project", "isSidechain": false, "requestId": format!("req_{uuid}"),
        "message": {"id": format!("msg_{uuid}"), "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn"},
    })
    .to_string()
        + "\n"
}
