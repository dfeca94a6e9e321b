//! `runtime.json` round trips byte for byte for every file in the golden vectors, writes
//! the creation order by rank, drops unknown keys and loads anything unreadable as the
//! default.

use super::*;
use crate::test_support::vectors;

fn runtime_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("list vectors") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            runtime_files(&path, out);
        } else if path.ends_with(".scriptorium/runtime.json") {
            out.push(path);
        }
    }
}

#[test]
fn every_vector_runtime_file_round_trips_exactly() {
    let mut files = Vec::new();
    runtime_files(&vectors(), &mut files);
    assert!(files.len() >= 10, "found {}", files.len());
    for file in files {
        let bytes = std::fs::read(&file).expect("read");
        let state = RuntimeState::parse(&bytes);
        assert_eq!(
            String::from_utf8(state.to_bytes()).expect("utf8"),
            String::from_utf8(bytes).expect("utf8"),
            "{}",
            file.display()
        );
    }
}

#[test]
fn the_creation_order_is_written_by_rank_and_new_ids_come_last() {
    let mut state = RuntimeState::parse(b"{\"creation_order\": {\"zz\": 0, \"aa\": 1}, \"local_tokens\": 7}");
    assert_eq!(state.creation_order(), [("zz", 0), ("aa", 1)]);
    assert_eq!(state.local_tokens, 7);
    assert_eq!(state.next_rank(), 2);
    state.set_rank("mm", state.next_rank());
    state.set_rank("zz", 5);
    assert_eq!(state.rank("zz"), Some(5));
    state.last_global_at = Some("2024-03-15T10:00:00+00:00".into());
    let expected = "{\n  \"creation_order\": {\n    \"aa\": 1,\n    \"mm\": 2,\n    \"zz\": 5\n  },\n  \"write_commits_since_global\": 0,\n  \"local_batches\": 0,\n  \"local_tokens\": 7,\n  \"last_global_at\": \"2024-03-15T10:00:00+00:00\"\n}\n";
    assert_eq!(String::from_utf8(state.to_bytes()).expect("utf8"), expected);
}

#[test]
fn empty_and_default_states_render_like_python() {
    let expected = "{\n  \"creation_order\": {},\n  \"write_commits_since_global\": 0,\n  \"local_batches\": 0,\n  \"local_tokens\": 0,\n  \"last_global_at\": null\n}\n";
    assert_eq!(String::from_utf8(RuntimeState::default().to_bytes()).expect("utf8"), expected);
}

#[test]
fn unknown_keys_are_dropped_and_a_repeated_key_keeps_its_last_value() {
    let state = RuntimeState::parse(
        br#"{"cursors": {"s": {"message_id": "m", "ordinal": 3}}, "creation_order": {"a": 0, "b": 1, "a": 2}, "local_batches": 2.0}"#,
    );
    assert_eq!(state.creation_order(), [("b", 1), ("a", 2)]);
    assert_eq!(state.local_batches, 2);
    assert!(!String::from_utf8(state.to_bytes()).expect("utf8").contains("cursors"));
}

#[test]
fn unreadable_files_load_as_default() {
    for bad in [
        &b""[..],
        b"not json",
        b"[1, 2]",
        b"{\"creation_order\": [1]}",
        b"{\"creation_order\": {\"a\": \"x\"}}",
        b"{\"local_tokens\": \"many\"}",
        b"{\"local_batches\": 1} trailing",
        b"\xff\xfe",
    ] {
        assert_eq!(RuntimeState::parse(bad), RuntimeState::default(), "{:?}", String::from_utf8_lossy(bad));
    }
    // A non-string timestamp (an old float) is not an error, only unset.
    let state = RuntimeState::parse(b"{\"last_global_at\": 1700000000.5, \"local_batches\": 3}");
    assert_eq!((state.last_global_at, state.local_batches), (None, 3));
}

#[test]
fn strings_escape_like_python_json_dumps() {
    let mut state = RuntimeState::default();
    state.set_rank("é\"\\\n\u{1}\u{7f}\u{2028}", 0);
    let text = String::from_utf8(state.to_bytes()).expect("utf8");
    assert!(text.contains("\"é\\\"\\\\\\n\\u0001\u{7f}\u{2028}\": 0"), "{text}");
    assert_eq!(RuntimeState::parse(text.as_bytes()), state);
}

#[test]
fn seeding_ranks_committed_ids_only_when_there_is_no_order_yet() {
    let ids = ["b", "a", "b", "c"];
    let seeded = RuntimeState::seeded(None, ids).expect("an absent file is seeded");
    let state = RuntimeState::parse(&seeded);
    assert_eq!(state.creation_order(), [("b", 0), ("a", 1), ("c", 2)]);
    let counters = br#"{"creation_order": {}, "local_batches": 3}"#;
    let state = RuntimeState::parse(&RuntimeState::seeded(Some(counters), ids).expect("an empty order is seeded"));
    assert_eq!((state.local_batches, state.creation_order().len()), (3, 3));
    assert_eq!(RuntimeState::seeded(Some(br#"{"creation_order": {"z": 5}}"#), ids), None);
    assert_eq!(RuntimeState::seeded(None, []), None, "nothing to seed writes nothing");
}

#[test]
fn a_written_batch_round_trips_and_is_written_only_while_set() {
    let mut state = RuntimeState { local_batches: 1, ..RuntimeState::default() };
    let without = state.to_bytes();
    state.written_batch = Some(WrittenBatch::new("s\"1", vec!["n1".into(), "n/2".into()], 40));
    let with = state.to_bytes();
    let expected_tail = ",\n  \"written_batch\": {\n    \"session_id\": \"s\\\"1\",\n    \"node_ids\": [\n      \"n1\",\n      \"n/2\"\n    ],\n    \"tokens\": 40\n  }\n}\n";
    assert!(String::from_utf8(with.clone()).expect("utf8").ends_with(expected_tail));
    assert_eq!(RuntimeState::parse(&with), state);
    let parsed: serde_json::Value = serde_json::from_slice(&with).expect("valid JSON");
    assert_eq!(parsed["written_batch"]["node_ids"][1], "n/2");
    state.written_batch = None;
    assert_eq!(state.to_bytes(), without);
    // A malformed record reads as absent; the counters still load.
    let odd = RuntimeState::parse(br#"{"local_batches": 3, "written_batch": {"session_id": 7, "node_ids": []}}"#);
    assert_eq!((odd.local_batches, odd.written_batch), (3, None));
}
