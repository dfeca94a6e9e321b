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
    /// whatever is marked (with this or another workspace's id) or rewound; its ids alone
    /// and `get_nodes` of them give the same suffix.
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
            let ids = store.get_unmarked_suffix_ids("s", head, "memory_written_scriptorium", "w-0123abcd").expect("ids");
            proptest::prop_assert_eq!(&ids, &walked.iter().map(|m| m.id.clone()).collect::<Vec<_>>());
            proptest::prop_assert_eq!(&store.get_nodes("s", &ids).expect("nodes"), &walked);
            // Another marker key is read from the metadata and walks the same way.
            let other = store.get_unmarked_suffix_ids("s", head, "other_key", "w-0123abcd").expect("other");
            proptest::prop_assert_eq!(other.len(), branch.len());
        }
    }
}

/// The schema exactly as version 1 wrote it: a fixture of a past format, not derived from
/// the current migrations, so a change to them cannot hide a broken upgrade.
const SCHEMA_V1: &str = "
    CREATE TABLE sessions(sid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, head INTEGER, created_at REAL NOT NULL,
        updated_at REAL NOT NULL, archived INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE nodes(nid INTEGER PRIMARY KEY, sid INTEGER NOT NULL REFERENCES sessions(sid), id TEXT NOT NULL,
        predecessor TEXT, pred INTEGER, role TEXT NOT NULL, content_kind INTEGER NOT NULL, content TEXT NOT NULL,
        timestamp, rewound INTEGER NOT NULL DEFAULT 0, metadata TEXT NOT NULL DEFAULT '{}', UNIQUE(sid, id));
    CREATE INDEX nodes_by_predecessor ON nodes(sid, predecessor);
    CREATE TABLE tips(sid INTEGER NOT NULL, head INTEGER NOT NULL, archived INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY(sid, head)) WITHOUT ROWID;
    PRAGMA user_version = 1;
";

#[test]
fn a_version_1_file_is_migrated_in_place_and_its_marks_bound_the_suffix_walk() -> TestResult {
    let dir = TempDir::new("migrate");
    let path = dir.path().join("sessions.sqlite3");
    {
        let connection = rusqlite::Connection::open(&path)?;
        connection.execute_batch("PRAGMA journal_mode=WAL;")?;
        connection.execute_batch(SCHEMA_V1)?;
        connection.execute_batch(&format!("PRAGMA application_id = {APPLICATION_ID};"))?;
        connection
            .execute("INSERT INTO sessions(sid, id, head, created_at, updated_at) VALUES (1, 's1', 4, ?1, ?1)", [T0])?;
        // a0 ← a1 ← a2 ← a3: a1 carries this workspace's mark, a2 another workspace's,
        // a3 a non-string marker value (which marks nothing).
        let metadata = [
            "{}",
            r#"{"memory_written_scriptorium":"w-0123abcd","display":"x"}"#,
            r#"{"memory_written_scriptorium":"w-99999999"}"#,
            r#"{"memory_written_scriptorium":7}"#,
        ];
        for (index, metadata) in metadata.iter().enumerate() {
            let nid = i64::try_from(index)? + 1;
            connection.execute(
                "INSERT INTO nodes(nid, sid, id, predecessor, pred, role, content_kind, content, timestamp, metadata)
                 VALUES (?1, 1, ?2, ?3, ?4, 'user', 0, ?5, ?6, ?7)",
                rusqlite::params![
                    nid,
                    format!("a{index}"),
                    (index > 0).then(|| format!("a{}", index - 1)),
                    (index > 0).then_some(nid - 1),
                    format!("turn {index}"),
                    T0 + index as f64,
                    metadata
                ],
            )?;
        }
        connection.execute("INSERT INTO tips(sid, head) VALUES (1, 4)", [])?;
    }
    let store = SqliteStore::open(&path)?;
    let connection = rusqlite::Connection::open(&path)?;
    let version: i32 = connection.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    assert_eq!(version, SCHEMA_VERSION);
    let markers: Vec<Option<String>> = connection
        .prepare("SELECT marker FROM nodes ORDER BY nid")?
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    assert_eq!(markers, [None, Some("w-0123abcd".to_owned()), Some("w-99999999".to_owned()), None]);
    let ids = |rows: Vec<Message>| rows.into_iter().map(|m| m.id).collect::<Vec<_>>();
    assert_eq!(ids(store.get_branch("s1", None)?), ["a0", "a1", "a2", "a3"]);
    assert_eq!(store.get_unmarked_suffix_ids("s1", None, "memory_written_scriptorium", "w-0123abcd")?, ["a2", "a3"]);
    assert_eq!(store.get_unmarked_suffix_ids("s1", None, "memory_written_scriptorium", "w-99999999")?, ["a3"]);
    let kept = store.get_nodes("s1", &["a1".to_owned()])?;
    assert_eq!((kept[0].field("display"), kept[0].content.text()), (Some("x"), "turn 1".to_owned()));
    assert_eq!(store.get_session("s1")?.map(|s| (s.head_id, s.updated_at)), Some((Some("a3".to_owned()), T0)));
    // The migrated file keeps its marker column in step with later merges and appends.
    let mut unmark = Map::new();
    unmark.insert("memory_written_scriptorium".into(), serde_json::Value::Null);
    store.merge_node_metadata_batch("s1", &[("a1".to_owned(), unmark)].into())?;
    assert_eq!(store.get_unmarked_suffix_ids("s1", None, "memory_written_scriptorium", "w-0123abcd")?.len(), 4);
    drop(store);
    // Reopening a migrated file changes nothing.
    let before = std::fs::read(&path)?;
    drop(SqliteStore::open(&path)?);
    assert_eq!(std::fs::read(&path)?, before);
    Ok(())
}

#[test]
fn walks_longer_than_the_stepping_limit_read_the_session_in_one_scan_with_the_same_result() -> TestResult {
    let dir = TempDir::new("long-walk");
    let path = dir.path().join("sessions.sqlite3");
    let store = SqliteStore::open(&path)?;
    // Another session first, so this one's nids are not 1..n.
    store.append("other", &chain("o", None, 50, 0, T0), T0)?;
    store.append("s", &chain("a", None, 3000, 0, T0), T0)?;
    store.append("s", &chain("f", Some("a1500"), 10, 0, T0), T0 + 1.0)?;
    let mark = |id: &str, workspace: &str| -> Result<(), Box<dyn std::error::Error>> {
        let mut patch = Map::new();
        patch.insert("memory_written_scriptorium".into(), json!(workspace));
        Ok(store.merge_node_metadata_batch("s", &[(id.to_owned(), patch)].into())?)
    };
    mark("a200", "w-0123abcd")?;
    mark("a2500", "w-99999999")?;
    store.rewind("s", &["a2998"])?;
    let a = |range: std::ops::Range<usize>| range.map(|i| format!("a{i}")).collect::<Vec<_>>();
    let suffix =
        |head: Option<&str>| store.get_unmarked_suffix_ids("s", head, "memory_written_scriptorium", "w-0123abcd");
    let mut expected = a(201..1501);
    expected.extend((0..10).map(|i| format!("f{i}")));
    assert_eq!(suffix(None)?, expected, "the head branch through the fork");
    let mut expected = a(201..2998);
    expected.push("a2999".into());
    assert_eq!(suffix(Some("a2999"))?, expected, "past another workspace's mark and a rewound node");
    let branch: Vec<String> = store.get_branch("s", Some("a2999"))?.into_iter().map(|m| m.id).collect();
    assert_eq!((branch.len(), branch.first().map(String::as_str)), (2999, Some("a0")));
    // A predecessor cycle is reported, in a long store (the scan) and in a short one (the
    // stepping walk alone).
    let small = dir.path().join("small.sqlite3");
    SqliteStore::open(&small)?.append("s", &chain("a", None, 5, 0, T0), T0)?;
    for (file, from, to) in [(&path, "a300", "a2999"), (&small, "a1", "a4")] {
        let connection = rusqlite::Connection::open(file)?;
        connection.execute(
            "UPDATE nodes SET pred = (SELECT nid FROM nodes WHERE id = ?2 AND sid = nodes.sid)
             WHERE id = ?1 AND sid = (SELECT sid FROM sessions WHERE id = 's')",
            [from, to],
        )?;
        let store = SqliteStore::open(file)?;
        let walked = store.get_unmarked_suffix_ids("s", Some(to), "memory_written_scriptorium", "w-0123abcd");
        assert_eq!(walked.err().map(|e| e.code()), Some(ErrorCode::SessionStoreCorrupt), "{from}");
        assert_eq!(store.get_branch("s", Some(to)).err().map(|e| e.code()), Some(ErrorCode::SessionStoreCorrupt));
    }
    Ok(())
}
