//! The driver of the line formats (Claude Code, Codex, our `jsonl`): read what was
//! appended since the last run in chunks of about [`CHUNK_BYTES`], hand each chunk's
//! complete lines to the format, and store the nodes and the new offset in one
//! transaction per chunk, so memory stays bounded on a 100 MB file and a crash loses
//! at most the chunk in flight (which the next run reads again).

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::ops::Range;
use std::path::Path;

use rusqlite::Connection;
use serde_json::Value;

use super::report::{ImportReport, ProblemCode};
use super::state::{self, FileState};
use super::{Format, claude_code, codex, jsonl, path_key};
use crate::error::Error;
use crate::store::{Content, Message, SqliteStore, append_in, set_content_in, set_head_in};

/// About how many bytes of lines one transaction takes.
const CHUNK_BYTES: usize = 8 << 20;

/// The complete lines of one chunk: their bytes (LF and a CR before it removed) and
/// 1-based line numbers.
pub(crate) struct Chunk {
    buffer: Vec<u8>,
    lines: Vec<(u64, Range<usize>)>,
}

impl Chunk {
    /// Each line's number and bytes, in file order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, &[u8])> {
        self.lines.iter().map(|(number, range)| (*number, self.buffer.get(range.clone()).unwrap_or_default()))
    }
}

/// What a format made of a chunk.
#[derive(Default)]
pub(crate) struct Batch {
    /// Nodes to append, in file order.
    pub nodes: Vec<Message>,
    /// Stored nodes whose content becomes this (an assistant reply that grew).
    pub updates: Vec<(String, Content)>,
    /// The node to make the session head once the nodes are stored, when the format
    /// names its active leaf (Claude Code's `last-prompt.leafUuid`); otherwise the head is
    /// the last new node.
    pub head: Option<String>,
}

/// A file being imported, as a format sees it.
pub(crate) struct FileCtx<'a> {
    /// The transcript file.
    pub path: &'a Path,
    /// The session its nodes go to (set by the format on the first chunk).
    pub session: String,
    /// The format's context carried between runs.
    pub context: String,
    /// Where problems go.
    pub report: &'a mut ImportReport,
}

impl FileCtx<'_> {
    /// Report line `line` as malformed for `why`.
    pub(crate) fn malformed(&mut self, line: u64, why: impl Into<String>) {
        self.report.problem(ProblemCode::MalformedLine, self.path.to_path_buf(), Some(line), why);
    }

    /// Parse line `line` as a JSON object, reporting it when it is not one.
    pub(crate) fn object(&mut self, line: u64, bytes: &[u8]) -> Option<serde_json::Map<String, Value>> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(map)) => Some(map),
            Ok(_) => {
                self.malformed(line, "the line is JSON but not an object");
                None
            }
            Err(error) => {
                self.malformed(line, format!("the line is not JSON ({})", error.classify_name()));
                None
            }
        }
    }
}

/// A short name for a serde_json error class (its message could quote the line).
trait ClassifyName {
    fn classify_name(&self) -> &'static str;
}

impl ClassifyName for serde_json::Error {
    fn classify_name(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "read error",
            serde_json::error::Category::Syntax => "syntax error",
            serde_json::error::Category::Data => "data error",
            serde_json::error::Category::Eof => "cut off",
        }
    }
}

/// Import one line-format file.
pub(crate) fn import_file(
    store: &SqliteStore,
    format: Format,
    path: &Path,
    now: f64,
    report: &mut ImportReport,
) -> Result<(), Error> {
    let Some((mut file, size, mtime_ns)) = state::open(path, report) else { return Ok(()) };
    let key = path_key(path);
    let prior = store.transact(|tx| state::load(tx, &key, format.name()))?;
    let mut current = match prior {
        Some(prior) if prior.offset <= size => match state::fingerprint(&mut file, prior.offset) {
            Ok(print) if print == prior.fingerprint => {
                if prior.offset == size {
                    report.files_unchanged += 1;
                    return Ok(());
                }
                prior
            }
            Ok(_) => {
                report.files_reread += 1;
                FileState::default()
            }
            Err(error) => {
                state::unreadable(report, path, &error);
                return Ok(());
            }
        },
        Some(_) => {
            report.files_reread += 1;
            FileState::default()
        }
        None => FileState::default(),
    };
    if let Err(error) = file.seek(SeekFrom::Start(current.offset)) {
        state::unreadable(report, path, &error);
        return Ok(());
    }
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut offset = current.offset;
    let mut number = current.line;
    loop {
        let mut chunk = Chunk { buffer: Vec::with_capacity(CHUNK_BYTES + (64 << 10)), lines: Vec::new() };
        let mut read = 0u64;
        let mut eof = false;
        while chunk.buffer.len() < CHUNK_BYTES {
            let start = chunk.buffer.len();
            let n = match reader.read_until(b'\n', &mut chunk.buffer) {
                Ok(n) => n,
                Err(error) => {
                    state::unreadable(report, path, &error);
                    eof = true;
                    chunk.buffer.truncate(start);
                    break;
                }
            };
            if n == 0 {
                eof = true;
                break;
            }
            let mut end = chunk.buffer.len();
            if chunk.buffer.last() == Some(&b'\n') {
                end -= 1;
            } else if serde_json::from_slice::<serde::de::IgnoredAny>(chunk.buffer.get(start..).unwrap_or_default())
                .is_err()
            {
                // A last line still being written: leave it for the next run.
                chunk.buffer.truncate(start);
                eof = true;
                break;
            }
            if end > start && chunk.buffer.get(end - 1) == Some(&b'\r') {
                end -= 1;
            }
            number += 1;
            read += n as u64;
            chunk.lines.push((number, start..end));
        }
        if chunk.lines.is_empty() {
            break;
        }
        offset += read;
        report.lines_read += chunk.lines.len() as u64;
        report.bytes_read += read;
        let print = match File::open(path).and_then(|mut file| state::fingerprint(&mut file, offset)) {
            Ok(print) => print,
            Err(error) => {
                state::unreadable(report, path, &error);
                return Ok(());
            }
        };
        let mut ctx = FileCtx {
            path,
            session: std::mem::take(&mut current.session),
            context: std::mem::take(&mut current.context),
            report: &mut *report,
        };
        let (session, context, added) = store.transact(|tx| {
            let batch = parse(format, tx, &mut ctx, &chunk)?;
            let added = store_batch(tx, &ctx.session, &batch, now)?;
            let next = FileState {
                session: ctx.session.clone(),
                offset,
                line: number,
                size,
                mtime_ns,
                fingerprint: print.clone(),
                context: ctx.context.clone(),
            };
            state::save(tx, &key, format.name(), &next, now)?;
            Ok((next.session, next.context, added))
        })?;
        if added.nodes > 0 || added.extended > 0 {
            report.sessions.insert(session.clone());
        }
        report.nodes_added += added.nodes;
        report.turns_added += added.turns;
        report.turns_extended += added.extended;
        current.session = session;
        current.context = context;
        if eof {
            break;
        }
    }
    Ok(())
}

/// What storing a batch added.
pub(crate) struct Added {
    pub nodes: usize,
    pub turns: usize,
    pub extended: usize,
}

/// Append `batch` to `session` inside `tx`.
pub(crate) fn store_batch(tx: &Connection, session: &str, batch: &Batch, now: f64) -> Result<Added, Error> {
    let mut added = Added { nodes: 0, turns: 0, extended: 0 };
    if !batch.nodes.is_empty() {
        let new = append_in(tx, session, &batch.nodes, now)?;
        for (node, new) in batch.nodes.iter().zip(new) {
            if new {
                added.nodes += 1;
                added.turns += usize::from(node.role == "user" || node.role == "assistant");
            }
        }
    }
    for (id, content) in &batch.updates {
        added.extended += usize::from(set_content_in(tx, session, id, content, now)?);
    }
    if let Some(head) = &batch.head {
        set_head_in(tx, session, head)?;
    }
    Ok(added)
}

fn parse(format: Format, tx: &Connection, ctx: &mut FileCtx<'_>, chunk: &Chunk) -> Result<Batch, Error> {
    match format {
        Format::ClaudeCode => claude_code::parse(tx, ctx, chunk),
        Format::Codex => codex::parse(tx, ctx, chunk),
        Format::Jsonl | Format::ChatGpt | Format::OpenProgram => jsonl::parse(tx, ctx, chunk),
    }
}

/// The file stem as text (the session name of a one-session-per-file format).
pub(crate) fn stem(path: &Path) -> String {
    path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default()
}
