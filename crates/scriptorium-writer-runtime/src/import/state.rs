//! Per-file import progress, kept in the session store's `import_files` table (schema
//! version 3) in the same transaction as the nodes read from the file: after a crash the
//! offset never runs ahead of the nodes, and a re-read is harmless (idempotent by id).
//!
//! The fingerprint is SHA-256 over the first and the last [`EDGE`] bytes before the
//! offset: a file rewritten in place (another session under the same name, a
//! truncation) no longer matches and is read again from the start.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};

use super::report::{ImportReport, ProblemCode};
use crate::error::Error;
use crate::store::sql_error;

/// How many bytes at each end of the read prefix the fingerprint covers.
const EDGE: u64 = 4096;

/// How far one file was imported.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FileState {
    /// The session its nodes went to.
    pub session: String,
    /// Bytes consumed (always at a line end for line formats).
    pub offset: u64,
    /// Lines consumed, so a later problem reports its true line number.
    pub line: u64,
    /// The file size and modification time at the last read.
    pub size: u64,
    pub mtime_ns: i64,
    /// [`fingerprint`] of the consumed prefix.
    pub fingerprint: Vec<u8>,
    /// Format-specific context carried between runs (Codex: the current parent node).
    pub context: String,
}

/// The stored state of `path` for `format`, if any.
pub(crate) fn load(tx: &Connection, path: &str, format: &str) -> Result<Option<FileState>, Error> {
    tx.prepare_cached(
        "SELECT session, offset, line, size, mtime_ns, fingerprint, context FROM import_files
         WHERE path = ?1 AND format = ?2",
    )
    .map_err(sql_error)?
    .query_row(params![path, format], |row| {
        Ok(FileState {
            session: row.get(0)?,
            offset: u64::try_from(row.get::<_, i64>(1)?).unwrap_or(0),
            line: u64::try_from(row.get::<_, i64>(2)?).unwrap_or(0),
            size: u64::try_from(row.get::<_, i64>(3)?).unwrap_or(0),
            mtime_ns: row.get(4)?,
            fingerprint: row.get(5)?,
            context: row.get(6)?,
        })
    })
    .optional()
    .map_err(sql_error)
}

/// Record `state` for `path` (inside the transaction that stored its nodes).
pub(crate) fn save(tx: &Connection, path: &str, format: &str, state: &FileState, now: f64) -> Result<(), Error> {
    let int = |value: u64| i64::try_from(value).unwrap_or(i64::MAX);
    tx.prepare_cached(
        "INSERT OR REPLACE INTO import_files(path, format, session, offset, line, size, mtime_ns, fingerprint,
                                             context, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )
    .map_err(sql_error)?
    .execute(params![
        path,
        format,
        state.session,
        int(state.offset),
        int(state.line),
        int(state.size),
        state.mtime_ns,
        state.fingerprint,
        state.context,
        now
    ])
    .map_err(sql_error)?;
    Ok(())
}

/// The fingerprint of the first `offset` bytes of `file`.
pub(crate) fn fingerprint(file: &mut File, offset: u64) -> std::io::Result<Vec<u8>> {
    let mut hasher = Sha256::new();
    let head = offset.min(EDGE);
    hasher.update(read_at(file, 0, head)?);
    let tail_start = offset.saturating_sub(EDGE).max(head);
    hasher.update(read_at(file, tail_start, offset - tail_start)?);
    hasher.update(offset.to_le_bytes());
    Ok(hasher.finalize().to_vec())
}

fn read_at(file: &mut File, start: u64, len: u64) -> std::io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(start))?;
    let mut out = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(len).read_to_end(&mut out)?;
    Ok(out)
}

/// Report `error` on `path` as [`ProblemCode::Unreadable`] (its kind only: the message
/// could quote a path the caller did not give).
pub(crate) fn unreadable(report: &mut ImportReport, path: &Path, error: &std::io::Error) {
    report.problem(ProblemCode::Unreadable, path.to_path_buf(), None, error.kind().to_string());
}

/// `path` opened, with its size and modification time (ns); `None` when it cannot be
/// read, reported as unreadable. Every format starts a file this way.
pub(crate) fn open(path: &Path, report: &mut ImportReport) -> Option<(File, u64, i64)> {
    let opened = File::open(path).and_then(|file| file.metadata().map(|metadata| (file, metadata)));
    match opened {
        Ok((file, metadata)) => Some((file, metadata.len(), mtime_ns(&metadata))),
        Err(error) => {
            unreadable(report, path, &error);
            None
        }
    }
}

/// The modification time in nanoseconds since the epoch (0 when unknown).
fn mtime_ns(metadata: &std::fs::Metadata) -> i64 {
    metadata
        .modified()
        .ok()
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_nanos()).ok())
        .unwrap_or(0)
}
