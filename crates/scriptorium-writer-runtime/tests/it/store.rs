//! The SQLite session store on real files: appends, branches and tips, metadata merges
//! that keep `updated_at`, durability across reopening, and the refusal of corrupt,
//! foreign and newer files without touching them.

use scriptorium_writer_runtime::{
    APPLICATION_ID, Content, ErrorCode, Message, SCHEMA_VERSION, SessionStore, SqliteStore, Timestamp,
};
use serde_json::{Map, json};

use crate::support::{T0, TempDir, TestResult, chain};

#[test]
fn appends_are_idempotent_by_node_id_and_branches_follow_predecessors() -> TestResult {
    let dir = TempDir::new("store");
    let path = dir.path().join("sessions.sqlite3");
    let store = SqliteStore::open(&path)?;
    assert_eq!(store.append("s1", &chain("a", None, 4, 0, T0), T0)?, 4);
    assert_eq!(store.append("s1", &chain("a", None, 4, 0, T0), T0 + 50.0)?, 0);
    assert_eq!(store.get_session("s1")?.map(|s| s.updated_at), Some(T0), "a repeated append changes nothing");
    store.append("s1", &chain("f", Some("a1"), 2, 0, T0), T0 + 1.0)?;
    let head = store.get_session("s1")?.ok_or("no session")?;
    assert_eq!((head.head_id.as_deref(), head.updated_at), (Some("f1"), T0 + 1.0));
    let ids = |rows: Vec<Message>| rows.into_iter().map(|m| m.id).collect::<Vec<_>>();
    assert_eq!(ids(store.get_branch("s1", None)?), ["a0", "a1", "f0", "f1"]);
    assert_eq!(ids(store.get_branch("s1", Some("a3"))?), ["a0", "a1", "a2", "a3"]);
    let tips: Vec<String> = store.list_branches("s1")?.into_iter().map(|t| t.head_msg_id).collect();
    assert_eq!(tips, ["a3", "f1"]);
    store.rewind("s1", &["f1"])?;
    assert_eq!(ids(store.get_branch("s1", Some("f1"))?), ["a0", "a1", "f0"]);
    assert_eq!(store.get_messages("s1")?.len(), 5);
    assert!(store.get_branch("nope", None)?.is_empty());
    let errors = [
        store.append("", &chain("x", None, 1, 0, T0), T0).err(),
        store.append("s1", &[Message::text("", "user", "x")], T0).err(),
    ];
    for error in errors {
        assert_eq!(error.map(|e| e.code()), Some(ErrorCode::InvalidNode));
    }
    Ok(())
}

#[test]
fn a_child_stored_before_its_predecessor_joins_the_branch_when_it_arrives() -> TestResult {
    let dir = TempDir::new("late");
    let store = SqliteStore::open(&dir.path().join("sessions.sqlite3"))?;
    let nodes = chain("a", None, 3, 0, T0);
    store.append("s1", &[nodes[2].clone()], T0)?;
    store.append("s1", &[nodes[0].clone(), nodes[1].clone()], T0)?;
    let ids: Vec<String> = store.get_branch("s1", Some("a2"))?.into_iter().map(|m| m.id).collect();
    assert_eq!(ids, ["a0", "a1", "a2"]);
    let tips: Vec<String> = store.list_branches("s1")?.into_iter().map(|t| t.head_msg_id).collect();
    assert_eq!(tips, ["a2"], "a1 has a child, so it is not a tip");
    Ok(())
}

#[test]
fn contents_timestamps_and_metadata_survive_reopening_and_merges_keep_updated_at() -> TestResult {
    let dir = TempDir::new("reopen");
    let path = dir.path().join("sessions.sqlite3");
    let parts =
        vec![json!({"type": "text", "text": "one"}), json!({"type": "image"}), json!({"type": "text", "text": "two"})];
    let mut rich = Message::text("p", "user", "");
    rich.content = Content::Parts(parts.clone());
    rich.timestamp = Timestamp::Text(" yesterday ".into());
    rich.metadata.insert("display".into(), json!("x"));
    {
        let store = SqliteStore::open(&path)?;
        store.append("s1", &[rich.clone()], T0)?;
        let mut patch = Map::new();
        patch.insert("memory_written_scriptorium".into(), json!("w-0123abcd"));
        store.merge_node_metadata_batch("s1", &[("p".to_owned(), patch), ("missing".to_owned(), Map::new())].into())?;
    }
    let store = SqliteStore::open(&path)?;
    let back = store.get_messages("s1")?.pop().ok_or("no message")?;
    assert_eq!(back.content, Content::Parts(parts));
    assert_eq!(back.content.text(), "one\ntwo");
    assert_eq!(back.timestamp, Timestamp::Text(" yesterday ".into()));
    assert_eq!(back.field("display"), Some("x"));
    assert_eq!(back.field("memory_written_scriptorium"), Some("w-0123abcd"));
    assert_eq!(store.get_session("s1")?.map(|s| s.updated_at), Some(T0));
    let mode: String = rusqlite_mode(&path)?;
    assert_eq!(mode, "wal");
    Ok(())
}

fn rusqlite_mode(path: &std::path::Path) -> Result<String, Box<dyn std::error::Error>> {
    let connection = rusqlite::Connection::open(path)?;
    Ok(connection.query_row("PRAGMA journal_mode", [], |row| row.get(0))?)
}

#[test]
fn corrupt_foreign_and_newer_files_are_refused_and_left_byte_for_byte() -> TestResult {
    let dir = TempDir::new("refuse");
    let garbage = dir.path().join("garbage.sqlite3");
    std::fs::write(&garbage, b"this is not a database at all, just some bytes of text padding it out".repeat(80))?;
    let foreign = dir.path().join("foreign.sqlite3");
    rusqlite::Connection::open(&foreign)?
        .execute_batch("CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES ('x');")?;
    let other_app = dir.path().join("other-app.sqlite3");
    rusqlite::Connection::open(&other_app)?.execute_batch("PRAGMA application_id = 42; PRAGMA user_version = 1;")?;
    let newer = dir.path().join("newer.sqlite3");
    drop(SqliteStore::open(&newer)?);
    rusqlite::Connection::open(&newer)?.execute_batch(&format!("PRAGMA user_version = {};", SCHEMA_VERSION + 1))?;
    let cases = [
        (&garbage, ErrorCode::SessionStoreCorrupt),
        (&foreign, ErrorCode::SessionStoreForeign),
        (&other_app, ErrorCode::SessionStoreForeign),
        (&newer, ErrorCode::SessionStoreTooNew),
    ];
    for (path, code) in cases {
        let before = std::fs::read(path)?;
        assert_eq!(SqliteStore::open(path).err().map(|e| e.code()), Some(code), "{}", path.display());
        assert_eq!(std::fs::read(path)?, before, "{}", path.display());
    }
    // A fresh store carries our application id and version.
    let connection = rusqlite::Connection::open(&newer)?;
    let id: i32 = connection.query_row("PRAGMA application_id", [], |row| row.get(0))?;
    assert_eq!(id, APPLICATION_ID);
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(24)
    ))]

    /// The store's own suffix walk equals `get_branch` cut after the newest marked node,
    /// whatever is marked (with this or another workspace's id) or rewound.
    #[test]
    fn the_unmarked_suffix_walk_equals_the_branch_cut_at_the_newest_mark(
        parents in proptest::collection::vec(proptest::prelude::any::<usize>(), 1..30),
        marks in proptest::collection::vec((proptest::prelude::any::<usize>(), proptest::prelude::any::<bool>()), 0..8),
        rewound in proptest::collection::vec(proptest::prelude::any::<usize>(), 0..3),
    ) {
        let dir = TempDir::new("suffix");
        let store = SqliteStore::open(&dir.path().join("sessions.sqlite3")).expect("open");
        let nodes: Vec<Message> = parents
            .iter()
            .enumerate()
            .map(|(i, parent)| {
                let mut node = Message::text(format!("n{i}"), "user", format!("t{i}"));
                node.predecessor = (i > 0).then(|| format!("n{}", parent % i));
                node
            })
            .collect();
        store.append("s", &nodes, T0).expect("append");
        for (node, ours) in &marks {
            let mut patch = Map::new();
            patch.insert("memory_written_scriptorium".into(), json!(if *ours { "w-0123abcd" } else { "w-99999999" }));
            store.merge_node_metadata_batch("s", &[(format!("n{}", node % nodes.len()), patch)].into()).expect("mark");
        }
        let rewind: Vec<String> = rewound.iter().map(|i| format!("n{}", i % nodes.len())).collect();
        store.rewind("s", &rewind.iter().map(String::as_str).collect::<Vec<_>>()).expect("rewind");
        for head in nodes.iter().map(|n| Some(n.id.as_str())).chain([None]) {
            let branch = store.get_branch("s", head).expect("branch");
            let start = branch
                .iter()
                .rposition(|m| m.field("memory_written_scriptorium") == Some("w-0123abcd"))
                .map_or(0, |i| i + 1);
            let walked = store.get_unmarked_suffix("s", head, "memory_written_scriptorium", "w-0123abcd").expect("suffix");
            proptest::prop_assert_eq!(&walked, &branch[start..].to_vec(), "head {:?}", head);
        }
    }
}
