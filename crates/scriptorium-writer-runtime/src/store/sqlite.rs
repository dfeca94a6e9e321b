//! [`SqliteStore`]: the session store as one SQLite file (`sessions.sqlite3`, WAL), the
//! project's own format with an application id and a schema version (decision "session
//! store").
//!
//! Schema (version 2), sized for a million nodes:
//! - `sessions(sid, id UNIQUE, head, created_at, updated_at, archived)`;
//! - `nodes(nid, sid, id, predecessor, pred, role, content_kind, content, timestamp,
//!   rewound, metadata, marker)` with `UNIQUE(sid, id)`; `pred` is the predecessor's
//!   `nid`, so a branch walk is one integer-key lookup per node (a recursive CTE inside
//!   SQLite), and the index on `(sid, predecessor)` finds the children of a node that
//!   arrives after them;
//! - `marker` (version 2) is the written marker's value (metadata key
//!   [`MARKER_KEY`] when it is a string), kept by every append and merge, and the
//!   covering index `nodes_walk(sid, nid, pred, rewound, role, marker, id)` holds
//!   everything a walk reads: the pending-suffix walk never touches a node's content or
//!   metadata. A walk steps back one index probe per node for up to [`WALK_STEPS`] nodes
//!   (the usual pass, which stops at a recent mark); a longer one reads the session's
//!   index entries in one sequential scan (about ten times cheaper per node) and walks
//!   them in memory;
//! - `tips(sid, head, archived)`: the branch tips, kept by every append;
//! - `import_files(path, format, session, offset, line, size, mtime_ns, fingerprint,
//!   context, updated_at)` (version 3): how far each imported transcript file was read, so a
//!   re-run reads only appended bytes (`import/state.rs`).
//!
//! A file with another application id, or with tables but no version, is foreign; a file
//! SQLite cannot read or whose quick check fails is corrupt; both are errors and the file
//! is never modified. A newer version is refused; an older one is migrated in one
//! transaction.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, ErrorCode as SqlCode, OpenFlags, OptionalExtension, params};
use serde_json::{Map, Value};

use crate::batch::MARKER_KEY;
use crate::error::{Error, ErrorCode};
use crate::store::{BranchTip, Content, Message, MetadataPatches, SessionInfo, SessionStore, Timestamp};

/// The file name of the session store in the state directory.
pub const SESSIONS_FILE: &str = "sessions.sqlite3";

/// `PRAGMA application_id` of every Scriptorium session store: ASCII `SCSS`.
pub const APPLICATION_ID: i32 = 0x5343_5353;

/// The schema version this build writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i32 = 3;

/// The steps from each version to the next; step `i` brings version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    "
    CREATE TABLE sessions(
        sid INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        head INTEGER,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        archived INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE nodes(
        nid INTEGER PRIMARY KEY,
        sid INTEGER NOT NULL REFERENCES sessions(sid),
        id TEXT NOT NULL,
        predecessor TEXT,
        pred INTEGER,
        role TEXT NOT NULL,
        content_kind INTEGER NOT NULL,
        content TEXT NOT NULL,
        timestamp,
        rewound INTEGER NOT NULL DEFAULT 0,
        metadata TEXT NOT NULL DEFAULT '{}',
        UNIQUE(sid, id)
    );
    CREATE INDEX nodes_by_predecessor ON nodes(sid, predecessor);
    CREATE TABLE tips(
        sid INTEGER NOT NULL,
        head INTEGER NOT NULL,
        archived INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY(sid, head)
    ) WITHOUT ROWID;
",
    "
    ALTER TABLE nodes ADD COLUMN marker TEXT;
    UPDATE nodes SET marker = json_extract(metadata, '$.\"memory_written_scriptorium\"')
        WHERE json_type(metadata, '$.\"memory_written_scriptorium\"') = 'text';
    CREATE INDEX nodes_walk ON nodes(sid, nid, pred, rewound, role, marker, id);
",
    "
    CREATE TABLE import_files(
        path TEXT PRIMARY KEY,
        format TEXT NOT NULL,
        session TEXT NOT NULL,
        offset INTEGER NOT NULL,
        line INTEGER NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        fingerprint BLOB NOT NULL,
        context TEXT NOT NULL DEFAULT '',
        updated_at REAL NOT NULL
    ) WITHOUT ROWID;
",
];

/// Content kinds in the `content_kind` column.
const KIND_TEXT: i64 = 0;
const KIND_JSON: i64 = 1;

/// The columns of a node row, in the order [`message_from_row`] reads them.
const NODE_COLUMNS: &str = "n.id, n.predecessor, n.role, n.content_kind, n.content, n.timestamp, n.metadata";

/// The durable session store on SQLite.
#[derive(Debug)]
pub struct SqliteStore {
    connection: Mutex<Connection>,
}

impl SqliteStore {
    /// Open the store at `path`, creating it (and the schema) if the file is missing or
    /// empty; refuse a corrupt, foreign or newer file without changing it.
    pub fn open(path: &Path) -> Result<SqliteStore, Error> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let connection = Connection::open_with_flags(path, flags).map_err(sql_error)?;
        connection.busy_timeout(std::time::Duration::from_secs(5)).map_err(sql_error)?;
        let application_id: i32 =
            connection.query_row("PRAGMA application_id", [], |row| row.get(0)).map_err(sql_error)?;
        let version: i32 = connection.query_row("PRAGMA user_version", [], |row| row.get(0)).map_err(sql_error)?;
        let tables: i64 =
            connection.query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0)).map_err(sql_error)?;
        let fresh = application_id == 0 && version == 0 && tables == 0;
        if !fresh && application_id != APPLICATION_ID {
            return Err(Error::new(ErrorCode::SessionStoreForeign, "the file is a SQLite database of another program"));
        }
        if version > SCHEMA_VERSION {
            return Err(Error::new(
                ErrorCode::SessionStoreTooNew,
                format!("session store schema {version} is newer than {SCHEMA_VERSION}"),
            ));
        }
        if !fresh {
            let check: String = connection.query_row("PRAGMA quick_check", [], |row| row.get(0)).map_err(sql_error)?;
            if check != "ok" {
                return Err(Error::new(ErrorCode::SessionStoreCorrupt, "the session store fails its integrity check"));
            }
        }
        // WAL: readers never block the writer; FULL: a committed mark survives power loss,
        // which exactly-once writing relies on (docs/durability.md).
        let mode: String = connection.query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0)).map_err(sql_error)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Error::new(
                ErrorCode::SessionStoreIo,
                format!("the session store cannot use WAL (journal mode {mode})"),
            ));
        }
        connection.execute_batch("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;").map_err(sql_error)?;
        migrate(&connection, version)?;
        Ok(SqliteStore { connection: Mutex::new(connection) })
    }

    fn connection(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite half-written (its own
        // transaction rolls back), so a poisoned mutex is still usable.
        self.connection.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Append `messages` to `session_id` (created if new) in one transaction, idempotent
    /// by node id: a node already stored is left as it is. Each new node becomes a branch
    /// tip in place of its predecessor and the session head; when at least one node is
    /// new, `updated_at` becomes `now`. Returns how many nodes were new.
    pub fn append(&self, session_id: &str, messages: &[Message], now: f64) -> Result<usize, Error> {
        self.transact(|tx| append_in(tx, session_id, messages, now)).map(|new| new.iter().filter(|new| **new).count())
    }

    /// Run `work` in one transaction: committed when it returns `Ok`, rolled back
    /// otherwise. The importers keep their nodes and file offsets in step this way.
    pub(crate) fn transact<R>(&self, work: impl FnOnce(&Connection) -> Result<R, Error>) -> Result<R, Error> {
        let mut connection = self.connection();
        let tx = connection.transaction().map_err(sql_error)?;
        let out = work(&tx)?;
        tx.commit().map_err(sql_error)?;
        Ok(out)
    }
}

/// [`SqliteStore::append`] inside the caller's transaction `tx`.
/// Returns, per message, whether it was new.
pub(crate) fn append_in(tx: &Connection, session_id: &str, messages: &[Message], now: f64) -> Result<Vec<bool>, Error> {
    {
        if session_id.is_empty() {
            return Err(Error::new(ErrorCode::InvalidNode, "a session id must not be empty"));
        }
        tx.execute(
            "INSERT OR IGNORE INTO sessions(id, created_at, updated_at) VALUES (?1, ?2, ?2)",
            params![session_id, now],
        )
        .map_err(sql_error)?;
        let sid: i64 = tx
            .query_row("SELECT sid FROM sessions WHERE id = ?1", [session_id], |row| row.get(0))
            .map_err(sql_error)?;
        let mut added = Vec::with_capacity(messages.len());
        let mut head = None;
        {
            let mut find = tx.prepare_cached("SELECT nid FROM nodes WHERE sid = ?1 AND id = ?2").map_err(sql_error)?;
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO nodes(sid, id, predecessor, pred, role, content_kind, content, timestamp, metadata,
                                       marker)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                )
                .map_err(sql_error)?;
            let mut adopt = tx
                .prepare_cached("UPDATE nodes SET pred = ?1 WHERE sid = ?2 AND predecessor = ?3 AND pred IS NULL")
                .map_err(sql_error)?;
            let mut untip = tx.prepare_cached("DELETE FROM tips WHERE sid = ?1 AND head = ?2").map_err(sql_error)?;
            let mut tip =
                tx.prepare_cached("INSERT OR IGNORE INTO tips(sid, head) VALUES (?1, ?2)").map_err(sql_error)?;
            // The children of a node are the nodes naming it as predecessor: the index on
            // `(sid, predecessor)` answers that without a scan.
            let mut has_child = tx
                .prepare_cached("SELECT 1 FROM nodes WHERE sid = ?1 AND predecessor = ?2 LIMIT 1")
                .map_err(sql_error)?;
            for message in messages {
                if message.id.is_empty() {
                    return Err(Error::new(ErrorCode::InvalidNode, "a node id must not be empty"));
                }
                if message.predecessor.as_deref() == Some(message.id.as_str()) {
                    return Err(Error::new(ErrorCode::InvalidNode, "a node cannot be its own predecessor"));
                }
                if find
                    .query_row(params![sid, message.id], |row| row.get::<_, i64>(0))
                    .optional()
                    .map_err(sql_error)?
                    .is_some()
                {
                    added.push(false);
                    continue;
                }
                let pred: Option<i64> = match &message.predecessor {
                    Some(id) => find.query_row(params![sid, id], |row| row.get(0)).optional().map_err(sql_error)?,
                    None => None,
                };
                let (kind, content) = encode_content(&message.content);
                let metadata = Value::Object(message.metadata.clone()).to_string();
                insert
                    .execute(params![
                        sid,
                        message.id,
                        message.predecessor,
                        pred,
                        message.role,
                        kind,
                        content,
                        encode_timestamp(&message.timestamp),
                        metadata,
                        message.field(MARKER_KEY)
                    ])
                    .map_err(sql_error)?;
                let nid = tx.last_insert_rowid();
                // Children stored before their predecessor now hang from it.
                adopt.execute(params![nid, sid, message.id]).map_err(sql_error)?;
                if let Some(pred) = pred {
                    untip.execute(params![sid, pred]).map_err(sql_error)?;
                }
                if !has_child.exists(params![sid, message.id]).map_err(sql_error)? {
                    tip.execute(params![sid, nid]).map_err(sql_error)?;
                }
                head = Some(nid);
                added.push(true);
            }
        }
        if let Some(head) = head {
            tx.execute("UPDATE sessions SET head = ?1, updated_at = ?2 WHERE sid = ?3", params![head, now, sid])
                .map_err(sql_error)?;
        }
        Ok(added)
    }
}

/// Replace the content of stored node `id` of `session_id` inside `tx` (an importer
/// joining a reply that grew since the last run); `updated_at` becomes `now`. Returns
/// whether the node exists.
pub(crate) fn set_content_in(
    tx: &Connection,
    session_id: &str,
    id: &str,
    content: &Content,
    now: f64,
) -> Result<bool, Error> {
    let (kind, raw) = encode_content(content);
    let changed = tx
        .prepare_cached(
            "UPDATE nodes SET content_kind = ?1, content = ?2
             WHERE sid = (SELECT sid FROM sessions WHERE id = ?3) AND id = ?4",
        )
        .map_err(sql_error)?
        .execute(params![kind, raw, session_id, id])
        .map_err(sql_error)?;
    if changed > 0 {
        tx.prepare_cached("UPDATE sessions SET updated_at = ?1 WHERE id = ?2")
            .map_err(sql_error)?
            .execute(params![now, session_id])
            .map_err(sql_error)?;
    }
    Ok(changed > 0)
}

/// Make node `id` the head of `session_id` inside `tx` (no-op for an unknown node).
pub(crate) fn set_head_in(tx: &Connection, session_id: &str, id: &str) -> Result<(), Error> {
    tx.prepare_cached(
        "UPDATE sessions SET head = (SELECT n.nid FROM nodes n WHERE n.sid = sessions.sid AND n.id = ?2)
         WHERE id = ?1 AND EXISTS (SELECT 1 FROM nodes n WHERE n.sid = sessions.sid AND n.id = ?2)",
    )
    .map_err(sql_error)?
    .execute(params![session_id, id])
    .map_err(sql_error)?;
    Ok(())
}

/// The stored node `id` of `session_id` (rewound or not) inside `tx`, if any.
pub(crate) fn node_in(tx: &Connection, session_id: &str, id: &str) -> Result<Option<Message>, Error> {
    let mut statement = tx
        .prepare_cached(&format!(
            "SELECT {NODE_COLUMNS} FROM nodes n WHERE n.sid = (SELECT sid FROM sessions WHERE id = ?1) AND n.id = ?2"
        ))
        .map_err(sql_error)?;
    let mut rows = statement.query(params![session_id, id]).map_err(sql_error)?;
    match rows.next().map_err(sql_error)? {
        Some(row) => Ok(Some(message_from_row(row)?)),
        None => Ok(None),
    }
}

/// The first visible node of `session_id` stored after row `after` (0: the first node),
/// in insertion order, with its row id, inside `tx`: a cursor over a session's nodes.
pub(crate) fn next_node_in(tx: &Connection, session_id: &str, after: i64) -> Result<Option<(i64, Message)>, Error> {
    let mut statement = tx
        .prepare_cached(&format!(
            "SELECT {NODE_COLUMNS}, n.nid FROM nodes n
             WHERE n.sid = (SELECT sid FROM sessions WHERE id = ?1) AND n.nid > ?2 AND n.rewound = 0
             ORDER BY n.nid LIMIT 1"
        ))
        .map_err(sql_error)?;
    let mut rows = statement.query(params![session_id, after]).map_err(sql_error)?;
    match rows.next().map_err(sql_error)? {
        Some(row) => {
            let nid: i64 = row.get(7).map_err(sql_error)?;
            Ok(Some((nid, message_from_row(row)?)))
        }
        None => Ok(None),
    }
}

/// The id of the newest visible node of `session_id` stamped at or before `seconds`
/// (Unix seconds; nodes with a text stamp or none are not considered), inside `tx`.
pub(crate) fn last_node_at_in(tx: &Connection, session_id: &str, seconds: f64) -> Result<Option<String>, Error> {
    tx.prepare_cached(
        "SELECT n.id FROM nodes n
         WHERE n.sid = (SELECT sid FROM sessions WHERE id = ?1) AND n.rewound = 0
           AND typeof(n.timestamp) IN ('real', 'integer') AND n.timestamp <= ?2
         ORDER BY n.nid DESC LIMIT 1",
    )
    .map_err(sql_error)?
    .query_row(params![session_id, seconds], |row| row.get(0))
    .optional()
    .map_err(sql_error)
}

impl SqliteStore {
    /// Move the session head to node `head_id` (a user switching branches).
    pub fn set_head(&self, session_id: &str, head_id: &str) -> Result<(), Error> {
        let connection = self.connection();
        let changed = connection
            .execute(
                "UPDATE sessions SET head = (SELECT n.nid FROM nodes n WHERE n.sid = sessions.sid AND n.id = ?2)
                 WHERE id = ?1 AND EXISTS (SELECT 1 FROM nodes n WHERE n.sid = sessions.sid AND n.id = ?2)",
                params![session_id, head_id],
            )
            .map_err(sql_error)?;
        if changed == 0 {
            return Err(Error::new(ErrorCode::InvalidNode, "no such node in the session"));
        }
        Ok(())
    }

    /// Archive (or revive) the branch ending at `head_id`.
    pub fn set_branch_archived(&self, session_id: &str, head_id: &str, archived: bool) -> Result<(), Error> {
        let connection = self.connection();
        connection
            .execute(
                "UPDATE tips SET archived = ?3 WHERE sid = (SELECT sid FROM sessions WHERE id = ?1)
                 AND head = (SELECT nid FROM nodes WHERE id = ?2 AND sid = tips.sid)",
                params![session_id, head_id, archived],
            )
            .map_err(sql_error)?;
        Ok(())
    }

    /// Mark nodes as rewound: they disappear from branches and listings.
    pub fn rewind(&self, session_id: &str, node_ids: &[&str]) -> Result<(), Error> {
        let mut connection = self.connection();
        let tx = connection.transaction().map_err(sql_error)?;
        for id in node_ids {
            tx.execute(
                "UPDATE nodes SET rewound = 1 WHERE sid = (SELECT sid FROM sessions WHERE id = ?1) AND id = ?2",
                params![session_id, id],
            )
            .map_err(sql_error)?;
        }
        tx.commit().map_err(sql_error)
    }

    fn session_row(connection: &Connection, session_id: &str) -> Result<Option<(i64, Option<i64>)>, Error> {
        connection
            .query_row("SELECT sid, head FROM sessions WHERE id = ?1", [session_id], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .optional()
            .map_err(sql_error)
    }

    /// The visible nodes (neither rewound nor the root) of the branch ending at `head_id`
    /// (default: the session head) as `(nid, id)`, oldest first, walking back by `pred`
    /// and stopping before the newest visible node whose marker `stop` names. The walk
    /// reads only the covering index `nodes_walk` for the written marker; another key is
    /// read from the metadata. Empty for an unknown session or head.
    fn walk(
        connection: &Connection,
        session_id: &str,
        head_id: Option<&str>,
        stop: Option<(&str, &str)>,
    ) -> Result<Vec<(i64, String)>, Error> {
        let Some((sid, session_head)) = Self::session_row(connection, session_id)? else { return Ok(Vec::new()) };
        let head = match head_id {
            Some(id) => connection
                .query_row("SELECT nid FROM nodes WHERE sid = ?1 AND id = ?2", params![sid, id], |row| row.get(0))
                .optional()
                .map_err(sql_error)?,
            None => session_head,
        };
        let Some(head) = head else { return Ok(Vec::new()) };
        // A path without a cycle has fewer steps than there are nodes, and the largest
        // `nid` bounds their count at the cost of one index probe; a predecessor cycle (a
        // damaged file) therefore ends the walk and is reported.
        let bound: i64 =
            connection.query_row("SELECT coalesce(max(nid), 0) FROM nodes", [], |row| row.get(0)).map_err(sql_error)?;
        // ?1 the marker, ?2 the JSON path of another key, ?3 the session, ?4 the head and
        // ?5 the step limit (a variant not naming ?1 or ?2 binds them unused).
        let limit = bound.min(WALK_STEPS);
        let (marker, path, marked) = match stop {
            Some((key, marker)) if key == MARKER_KEY => (Some(marker), None, "n.marker IS ?1"),
            Some((key, marker)) => (
                Some(marker),
                Some(format!("$.\"{}\"", key.replace('"', "\\\""))),
                "json_extract(n.metadata, ?2) IS ?1",
            ),
            None => (None, None, "(?1 AND ?2 AND 0)"),
        };
        let values = [
            marker.map(str::to_owned).into(),
            path.clone().into(),
            SqlValue::Integer(sid),
            SqlValue::Integer(head),
            SqlValue::Integer(limit),
        ];
        let visible = format!("(n.rewound = 0 AND n.role != '{ROOT_ROLE}')");
        let columns = format!("n.nid, n.pred, {visible}, {visible} AND {marked}, n.id");
        // CROSS JOIN keeps `chain` the outer loop: otherwise SQLite (3.54) may probe the
        // index by `sid` alone and scan the chain inside, one session scan per step.
        let mut statement = connection
            .prepare_cached(&format!(
                "WITH RECURSIVE chain(nid, pred, visible, stop, id, depth) AS (
                     SELECT {columns}, 1 FROM nodes n INDEXED BY nodes_walk WHERE n.sid = ?3 AND n.nid = ?4
                     UNION ALL
                     SELECT {columns}, chain.depth + 1
                     FROM chain CROSS JOIN nodes n INDEXED BY nodes_walk ON n.sid = ?3 AND n.nid = chain.pred
                     WHERE NOT chain.stop AND chain.depth < ?5
                 )
                 SELECT nid, pred, visible, stop, id FROM chain"
            ))
            .map_err(sql_error)?;
        let mut steps: Vec<Step> = statement
            .query_map(rusqlite::params_from_iter(&values), step_from_row)
            .map_err(sql_error)?
            .collect::<Result<_, _>>()
            .map_err(sql_error)?;
        let cut = i64::try_from(steps.len()).unwrap_or(i64::MAX) >= limit
            && steps.last().is_some_and(|last| !last.stop && last.pred.is_some());
        if cut && limit < bound {
            // A long walk: read the session's entries in one scan and walk them here. The
            // scan reads raw columns (no per-row SQL expressions) and allocates only ids.
            let marker_column = if path.is_some() { "json_extract(n.metadata, ?2)" } else { "n.marker" };
            let mut scan = connection
                .prepare_cached(&format!(
                    "SELECT n.nid, n.pred, n.rewound, n.role, {marker_column}, n.id
                     FROM nodes n INDEXED BY nodes_walk WHERE n.sid = ?1 ORDER BY n.nid"
                ))
                .map_err(sql_error)?;
            let mut rows = match &path {
                Some(path) => scan.query(params![sid, path]),
                None => scan.query(params![sid]),
            }
            .map_err(sql_error)?;
            let mut entries: Vec<Step> = Vec::new();
            while let Some(row) = rows.next().map_err(sql_error)? {
                let visible = row.get::<_, i64>(2).map_err(sql_error)? == 0
                    && !matches!(row.get_ref(3).map_err(sql_error)?.as_str(), Ok(ROOT_ROLE));
                let marked = match (marker, row.get_ref(4).map_err(sql_error)?) {
                    (Some(marker), ValueRef::Text(value)) => value == marker.as_bytes(),
                    _ => false,
                };
                entries.push(Step {
                    nid: row.get(0).map_err(sql_error)?,
                    pred: row.get(1).map_err(sql_error)?,
                    visible,
                    stop: visible && marked,
                    id: row.get(5).map_err(sql_error)?,
                });
            }
            let mut path = Vec::new();
            let mut next = Some(head);
            while let Some(at) = next.and_then(|nid| entries.binary_search_by_key(&nid, |entry| entry.nid).ok()) {
                let Some(entry) = entries.get(at) else { break };
                if path.len() >= entries.len() {
                    return Err(cycle());
                }
                next = if entry.stop { None } else { entry.pred };
                path.push(at);
            }
            steps = path.into_iter().filter_map(|at| entries.get_mut(at).map(std::mem::take)).collect();
        } else if cut {
            return Err(cycle());
        }
        Ok(steps.into_iter().rev().filter(|step| step.visible && !step.stop).map(|step| (step.nid, step.id)).collect())
    }

    /// The nodes `nids` in their order, read one integer-key lookup each.
    fn load(connection: &Connection, nids: impl IntoIterator<Item = i64>) -> Result<Vec<Message>, Error> {
        let mut statement = connection
            .prepare_cached(&format!("SELECT {NODE_COLUMNS} FROM nodes n WHERE n.nid = ?1"))
            .map_err(sql_error)?;
        let mut out = Vec::new();
        for nid in nids {
            let mut rows = statement.query([nid]).map_err(sql_error)?;
            if let Some(row) = rows.next().map_err(sql_error)? {
                out.push(message_from_row(row)?);
            }
        }
        Ok(out)
    }
}

impl SessionStore for SqliteStore {
    fn get_branch(&self, session_id: &str, head_id: Option<&str>) -> Result<Vec<Message>, Error> {
        let connection = self.connection();
        let path = Self::walk(&connection, session_id, head_id, None)?;
        Self::load(&connection, path.into_iter().map(|(nid, _)| nid))
    }

    fn get_unmarked_suffix_ids(
        &self,
        session_id: &str,
        head_id: Option<&str>,
        marker_key: &str,
        marker: &str,
    ) -> Result<Vec<String>, Error> {
        let connection = self.connection();
        let path = Self::walk(&connection, session_id, head_id, Some((marker_key, marker)))?;
        Ok(path.into_iter().map(|(_, id)| id).collect())
    }

    fn get_nodes(&self, session_id: &str, ids: &[String]) -> Result<Vec<Message>, Error> {
        let connection = self.connection();
        let Some((sid, _)) = Self::session_row(&connection, session_id)? else { return Ok(Vec::new()) };
        // One probe of `(sid, id)` and one read of the row per node.
        let mut find = connection
            .prepare_cached(&format!(
                "SELECT {NODE_COLUMNS} FROM nodes n WHERE n.sid = ?1 AND n.id = ?2 AND n.rewound = 0
                 AND n.role != '{ROOT_ROLE}'"
            ))
            .map_err(sql_error)?;
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for id in ids {
            if !seen.insert(id.as_str()) {
                continue;
            }
            let mut rows = find.query(params![sid, id]).map_err(sql_error)?;
            if let Some(row) = rows.next().map_err(sql_error)? {
                out.push(message_from_row(row)?);
            }
        }
        Ok(out)
    }

    fn get_session(&self, session_id: &str) -> Result<Option<SessionInfo>, Error> {
        let connection = self.connection();
        connection
            .query_row(
                "SELECT s.id, (SELECT id FROM nodes WHERE nid = s.head), s.updated_at, s.archived FROM sessions s WHERE s.id = ?1",
                [session_id],
                session_from_row,
            )
            .optional()
            .map_err(sql_error)
    }

    fn list_branches(&self, session_id: &str) -> Result<Vec<BranchTip>, Error> {
        let connection = self.connection();
        let mut statement = connection
            .prepare_cached(
                "SELECT n.id, t.archived FROM tips t JOIN nodes n ON n.nid = t.head
                 WHERE t.sid = (SELECT sid FROM sessions WHERE id = ?1) AND n.rewound = 0 ORDER BY t.head",
            )
            .map_err(sql_error)?;
        let rows = statement
            .query_map([session_id], |row| Ok(BranchTip { head_msg_id: row.get(0)?, archived: row.get(1)? }))
            .map_err(sql_error)?;
        rows.collect::<Result<_, _>>().map_err(sql_error)
    }

    fn get_messages(&self, session_id: &str) -> Result<Vec<Message>, Error> {
        let connection = self.connection();
        let mut statement = connection
            .prepare_cached(&format!(
                "SELECT {NODE_COLUMNS} FROM nodes n WHERE n.sid = (SELECT sid FROM sessions WHERE id = ?1)
                 AND n.rewound = 0 AND n.role != '{ROOT_ROLE}' ORDER BY n.nid"
            ))
            .map_err(sql_error)?;
        let mut rows = statement.query([session_id]).map_err(sql_error)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(sql_error)? {
            out.push(message_from_row(row)?);
        }
        Ok(out)
    }

    fn list_sessions(&self, limit: usize, offset: usize, include_archived: bool) -> Result<Vec<SessionInfo>, Error> {
        let connection = self.connection();
        let mut statement = connection
            .prepare_cached(
                "SELECT s.id, (SELECT id FROM nodes WHERE nid = s.head), s.updated_at, s.archived FROM sessions s
                 WHERE ?1 OR s.archived = 0 ORDER BY s.id LIMIT ?2 OFFSET ?3",
            )
            .map_err(sql_error)?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let offset = i64::try_from(offset).unwrap_or(i64::MAX);
        let rows =
            statement.query_map(params![include_archived, limit, offset], session_from_row).map_err(sql_error)?;
        rows.collect::<Result<_, _>>().map_err(sql_error)
    }

    fn merge_node_metadata_batch(&self, session_id: &str, patches: &MetadataPatches) -> Result<(), Error> {
        let mut connection = self.connection();
        let tx = connection.transaction().map_err(sql_error)?;
        {
            let Some((sid, _)) = Self::session_row(&tx, session_id)? else { return Ok(()) };
            // json_patch is RFC 7396: keys merge, a null removes; `sessions` is not touched,
            // so `updated_at` stays where the last append put it.
            // The marker column follows the merged value: a string patch sets it, any other
            // value (null included) clears it, a patch without the key keeps it.
            let mut merge = tx
                .prepare_cached(
                    "UPDATE nodes SET metadata = json_patch(metadata, ?1), marker = CASE WHEN ?4 THEN ?5 ELSE marker END
                     WHERE sid = ?2 AND id = ?3",
                )
                .map_err(sql_error)?;
            for (id, patch) in patches {
                let marker = patch.get(MARKER_KEY);
                merge
                    .execute(params![
                        Value::Object(patch.clone()).to_string(),
                        sid,
                        id,
                        marker.is_some(),
                        marker.and_then(Value::as_str)
                    ])
                    .map_err(sql_error)?;
            }
        }
        tx.commit().map_err(sql_error)
    }
}

/// How many nodes a walk steps back by index probes before it reads the whole session in
/// one scan instead.
pub(crate) const WALK_STEPS: i64 = 256;

/// One node as a walk reads it from `nodes_walk`.
#[derive(Default)]
struct Step {
    nid: i64,
    pred: Option<i64>,
    visible: bool,
    stop: bool,
    id: String,
}

fn step_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Step> {
    Ok(Step { nid: row.get(0)?, pred: row.get(1)?, visible: row.get(2)?, stop: row.get(3)?, id: row.get(4)? })
}

fn cycle() -> Error {
    Error::new(ErrorCode::SessionStoreCorrupt, "a predecessor cycle in the session store")
}

/// The role of the session's synthetic root node, which no branch includes.
const ROOT_ROLE: &str = "root";

fn migrate(connection: &Connection, from: i32) -> Result<(), Error> {
    if from == SCHEMA_VERSION {
        return Ok(());
    }
    let steps = MIGRATIONS.get(usize::try_from(from).unwrap_or(0)..).unwrap_or_default();
    let mut script = String::from("BEGIN IMMEDIATE;");
    for step in steps {
        script.push_str(step);
    }
    script.push_str(&format!(
        "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
    ));
    connection.execute_batch(&script).map_err(|error| {
        let _ = connection.execute_batch("ROLLBACK");
        sql_error(error)
    })
}

fn encode_content(content: &Content) -> (i64, String) {
    match content {
        Content::Text(text) => (KIND_TEXT, text.clone()),
        Content::Parts(parts) => (KIND_JSON, Value::Array(parts.clone()).to_string()),
        Content::Other(value) => (KIND_JSON, value.to_string()),
    }
}

fn encode_timestamp(timestamp: &Timestamp) -> SqlValue {
    match timestamp {
        Timestamp::Unix(seconds) => SqlValue::Real(*seconds),
        Timestamp::Text(text) => SqlValue::Text(text.clone()),
        Timestamp::None => SqlValue::Null,
    }
}

fn message_from_row(row: &rusqlite::Row<'_>) -> Result<Message, Error> {
    let kind: i64 = row.get(3).map_err(sql_error)?;
    let raw: String = row.get(4).map_err(sql_error)?;
    let content = if kind == KIND_TEXT {
        Content::Text(raw)
    } else {
        match serde_json::from_str(&raw) {
            Ok(Value::Array(parts)) => Content::Parts(parts),
            Ok(other) => Content::Other(other),
            Err(_) => return Err(Error::new(ErrorCode::SessionStoreCorrupt, "a node's content is not JSON")),
        }
    };
    let timestamp = match row.get_ref(5).map_err(sql_error)? {
        ValueRef::Integer(seconds) => Timestamp::Unix(seconds as f64),
        ValueRef::Real(seconds) => Timestamp::Unix(seconds),
        ValueRef::Text(text) => Timestamp::Text(String::from_utf8_lossy(text).into_owned()),
        ValueRef::Null | ValueRef::Blob(_) => Timestamp::None,
    };
    let metadata: String = row.get(6).map_err(sql_error)?;
    let metadata = match serde_json::from_str(&metadata) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    Ok(Message {
        id: row.get(0).map_err(sql_error)?,
        predecessor: row.get(1).map_err(sql_error)?,
        role: row.get(2).map_err(sql_error)?,
        content,
        timestamp,
        metadata,
    })
}

fn session_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<SessionInfo> {
    Ok(SessionInfo { id: row.get(0)?, head_id: row.get(1)?, updated_at: row.get(2)?, archived: row.get(3)? })
}

pub(crate) fn sql_error(error: rusqlite::Error) -> Error {
    let code = match error.sqlite_error_code() {
        Some(SqlCode::NotADatabase | SqlCode::DatabaseCorrupt) => ErrorCode::SessionStoreCorrupt,
        _ => ErrorCode::SessionStoreIo,
    };
    Error::new(code, "the session store failed").with_source(error)
}
