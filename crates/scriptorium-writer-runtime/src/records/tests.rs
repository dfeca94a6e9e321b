//! Turn → record rules of spec 02 §2.2: which rows are records, authority, speakers,
//! timestamps and token counts.

use serde_json::json;

use super::*;
use crate::store::{Content, Message, Timestamp};

fn with(mut message: Message, fields: serde_json::Value) -> Message {
    if let serde_json::Value::Object(map) = fields {
        message.metadata.extend(map);
    }
    message
}

fn owner(id: &str, role: &str, text: &str) -> Message {
    with(
        Message::text(id, role, text),
        json!({"authority_schema": 1, "speaker_kind": "owner", "speaker_id": "owner/local", "speaker_display": "Owner",
               "principal_id": "owner", "authority_tier": "owner", "interaction": "interactive"}),
    )
}

#[test]
fn only_user_and_assistant_text_turns_that_are_not_runtime_scheduled_are_records() {
    let mut parts = Message::text("p", "user", "");
    parts.content = Content::Parts(vec![
        json!({"type":"text","text":"a"}),
        json!({"type":"image"}),
        json!({"type":"text","text":"b"}),
    ]);
    let rows = vec![
        owner("u1", "user", "hello"),
        Message::text("t1", "tool", "result"),
        with(owner("r1", "assistant", "notice"), json!({"display": "runtime"})),
        with(owner("j1", "user", "job"), json!({"source": "job_followup"})),
        with(owner("m1", "assistant", "merge"), json!({"source": "merge_turn"})),
        owner("b1", "assistant", "  \n\t "),
        parts,
        owner("a1", "assistant", "hi"),
    ];
    let out = records("s", &rows, 0).expect("records");
    let ids: Vec<&str> = out.iter().map(Record::node_id).collect();
    assert_eq!(ids, ["u1", "p", "a1"]);
    assert_eq!(out[1].source.content, "a\nb");
    // Ordinals are list indexes, not record positions.
    assert_eq!(out.iter().map(|r| r.source.ordinal).collect::<Vec<_>>(), [0, 6, 7]);
    assert_eq!(out[0].speaker, "Owner (owner/local)");
    assert_eq!(out[0].source.authority_tier.as_deref(), Some("owner"));
    assert_eq!(out[1].speaker, "user", "an unstamped legacy turn falls back to the role");
    assert_eq!((out[1].source.principal_id.as_str(), out[1].source.speaker_kind.as_str()), ("unknown", "unknown"));
}

#[test]
fn missing_ids_and_stamped_turns_without_authority_are_errors_and_mcp_browser_is_dropped() {
    let mut nameless = owner("", "user", "x");
    nameless.id.clear();
    assert_eq!(
        records("s", &[Message::text("a", "user", "ok"), nameless], 0),
        Err(RecordError::MissingNodeId { index: 1 })
    );
    let stamped = with(Message::text("n", "user", "x"), json!({"authority_schema": 1}));
    assert_eq!(records("s", &[stamped], 0), Err(RecordError::RequiresAuthority { node_id: "n".into() }));
    let bad_tier = with(owner("n", "user", "x"), json!({"authority_tier": "root"}));
    assert_eq!(records("s", &[bad_tier], 0), Err(RecordError::RequiresAuthority { node_id: "n".into() }));
    let browser = with(owner("n", "user", "x"), json!({"authority_tier": "mcp_browser"}));
    assert_eq!(records("s", &[browser], 0), Ok(Vec::new()));
    // A tool row without an id is not a record, so it is no error.
    assert_eq!(records("s", &[Message::text("", "tool", "x")], 0), Ok(Vec::new()));
}

#[test]
fn timestamps_and_tokens_follow_the_node() {
    let mut numeric = owner("a", "user", "hello world <|endoftext|>");
    numeric.timestamp = Timestamp::Unix(1_714_557_600.0);
    let mut text = owner("b", "user", "x");
    text.timestamp = Timestamp::Text("  2024-05-01T12:00:00+02:00 ".into());
    let out = records("s", &[numeric, text], 3600).expect("records");
    assert_eq!(out[0].source.timestamp.as_deref(), Some("2024-05-01T11:00:00+01:00"));
    assert_eq!(out[0].epoch, Some(1_714_557_600.0));
    assert_eq!(out[1].source.timestamp.as_deref(), Some("2024-05-01T12:00:00+02:00"));
    assert_eq!(out[1].epoch, Some(1_714_557_600.0));
    // Special-token strings count as plain text (decision Q3).
    assert_eq!(out[0].tokens(), scriptorium_derived_views::count_o200k("hello world <|endoftext|>"));
    assert!(out[0].tokens() > 3);
}
