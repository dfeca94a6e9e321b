//! OpenProgram's memory-root v2 source archives, `sources/openprogram/_v2/<thread>.md`
//! (spec 01 §2), read-only, through scriptorium-archive-format's parser. Neither spec nor
//! design notes describe OpenProgram's session DB, so the frames memory archived are
//! what is imported: one session per archive, named by the thread part of the source id
//! and with the message part as node id, unchanged, so the written marker and the source
//! ids of a later write line up with OpenProgram's.
//!
//! A frame carries no role and no predecessor: the predecessor is the previous frame of
//! the file, and the role comes from the `source-meta` speaker kind (`owner`/`human`
//! said it, `runtime` replied), else from a header label that is the bare role. Speaker
//! and trust fields are what spec 01 §2.6 derives from the frame, nothing more: a
//! pending frame stays pending, a speakerless one has no speaker id.
//!
//! The file is parsed whole (the parser is sequential from byte 0), but only frames that
//! start at or after the stored offset are new; the offset is the end of the valid
//! prefix, so a torn tail is reported and read again once it is complete.

use std::io::Read;
use std::path::{Path, PathBuf};

use scriptorium_archive_format::{Frame, SpeakerView, TrustState, parse_bytes, split_record_header, split_source_id};
use serde_json::{Map, Value};

use super::lines::{Batch, store_batch};
use super::path_key;
use super::report::{ImportReport, ProblemCode};
use super::state::{self, FileState};
use crate::clock::parse_iso8601;
use crate::error::Error;
use crate::records::AUTHORITY_SCHEMA_KEY;
use crate::store::{Content, Message, SqliteStore, Timestamp};

/// The format name in `import_files`.
const FORMAT: &str = "openprogram";

/// The one provider whose source ids are `openprogram/<session-id>/<node-id>`.
const PROVIDER: &str = "openprogram";

const KIND: &str = "import_kind";

/// The archive directory under a state dir (`<state>/memory/sources/openprogram/_v2`) or
/// a memory root (`<root>/sources/openprogram/_v2`), when `dir` is one; else `dir`.
pub(crate) fn archive_dir(dir: &Path) -> PathBuf {
    let tail = Path::new("sources").join(PROVIDER).join("_v2");
    [dir.join("memory").join(&tail), dir.join(&tail)].into_iter().find(|d| d.is_dir()).unwrap_or_else(|| dir.into())
}

/// The default state dir: `~/.openprogram`, or `~/.openprogram-<P>` under
/// `OPENPROGRAM_PROFILE=P` (spec 01 §1.1).
pub(crate) fn default_state_dir(home: Option<PathBuf>) -> Option<PathBuf> {
    let profile = std::env::var("OPENPROGRAM_PROFILE").ok().filter(|p| !p.is_empty());
    let name = match profile {
        Some(profile) => format!(".openprogram-{profile}"),
        None => ".openprogram".to_owned(),
    };
    home.map(|home| home.join(name))
}

/// Whether a file met in a walk is a v2 archive of provider `openprogram`.
pub(crate) fn wants(path: &Path) -> bool {
    let name = |p: Option<&Path>| p.and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or_default().to_owned();
    let parent = path.parent();
    path.extension().is_some_and(|ext| ext == "md")
        && name(parent) == "_v2"
        && name(parent.and_then(Path::parent)) == PROVIDER
}

pub(crate) fn import_file(store: &SqliteStore, path: &Path, now: f64, report: &mut ImportReport) -> Result<(), Error> {
    let Some((mut file, size, mtime_ns)) = state::open(path, report) else { return Ok(()) };
    let Some(relative) = relative_path(path) else {
        report.problem(
            ProblemCode::MalformedFile,
            path.to_path_buf(),
            None,
            "not an OpenProgram v2 archive path (`…/sources/openprogram/_v2/<session>.md`)",
        );
        return Ok(());
    };
    let key = path_key(path);
    let prior = store.transact(|tx| state::load(tx, &key, FORMAT))?;
    let mut from = 0u64;
    if let Some(prior) = prior {
        match state::fingerprint(&mut file, prior.offset.min(size)) {
            Ok(print) if prior.offset <= size && print == prior.fingerprint => {
                if prior.offset == size {
                    report.files_unchanged += 1;
                    return Ok(());
                }
                from = prior.offset;
            }
            Ok(_) => report.files_reread += 1,
            Err(error) => {
                state::unreadable(report, path, &error);
                return Ok(());
            }
        }
    }
    let mut bytes = Vec::new();
    if let Err(error) = std::io::Seek::rewind(&mut file).and_then(|()| file.read_to_end(&mut bytes)) {
        state::unreadable(report, path, &error);
        return Ok(());
    }
    let parsed = parse_bytes(&bytes, &relative);
    if let Some(stop) = parsed.stop {
        report.problem(
            ProblemCode::MalformedLine,
            path.to_path_buf(),
            Some(stop.line as u64 + 1),
            format!("{}: {}; the frames before it were imported", stop.reason, stop.reason.describe()),
        );
    }
    let end = parsed.valid_prefix_len(bytes.len()) as u64;
    report.lines_read += parsed.frames.len() as u64;
    report.bytes_read += end.saturating_sub(from);
    let mut session = String::new();
    let mut batch = Batch::default();
    let mut previous: Option<String> = None;
    for frame in &parsed.frames {
        let Some(parts) = split_source_id(frame.source_id) else { continue };
        session = parts.thread.to_owned();
        let node = message(frame, parts.message, previous.take());
        previous = Some(node.id.clone());
        if frame.start_byte as u64 >= from {
            batch.nodes.push(node);
        }
    }
    let print = match state::fingerprint(&mut file, end) {
        Ok(print) => print,
        Err(error) => {
            state::unreadable(report, path, &error);
            return Ok(());
        }
    };
    let next = FileState {
        session: session.clone(),
        offset: end,
        line: 0,
        size,
        mtime_ns,
        fingerprint: print,
        context: String::new(),
    };
    let added = store.transact(|tx| {
        let added = if batch.nodes.is_empty() { None } else { Some(store_batch(tx, &session, &batch, now)?) };
        state::save(tx, &key, FORMAT, &next, now)?;
        Ok(added)
    })?;
    if let Some(added) = added {
        if added.nodes > 0 {
            report.sessions.insert(session);
        }
        report.nodes_added += added.nodes;
        report.turns_added += added.turns;
    }
    Ok(())
}

/// The workspace-relative path the parser checks source ids against:
/// `sources/openprogram/_v2/<file>`, when `path` ends that way.
fn relative_path(path: &Path) -> Option<String> {
    if !wants(path) {
        return None;
    }
    let file = path.file_name()?.to_str()?;
    Some(format!("sources/{PROVIDER}/_v2/{file}"))
}

/// The node of one frame (`id` the message part of its source id).
fn message(frame: &Frame<'_>, id: &str, predecessor: Option<String>) -> Message {
    let (header, body) = frame.record_text.split_once('\n').unwrap_or((frame.record_text, ""));
    let header = split_record_header(header);
    let (stamp, label, first) = header.map_or(("", "", ""), |h| (h.timestamp, h.label, h.content));
    let text = if frame.record_lines() > 1 { format!("{first}\n{body}") } else { first.to_owned() };
    let meta = frame.effective_meta();
    let role = match (meta.speaker_kind.as_str(), label.trim()) {
        ("owner" | "human", _) => "user",
        ("runtime", _) => "assistant",
        ("unknown", "user") => "user",
        ("unknown", "assistant") => "assistant",
        _ => "system",
    };
    let mut metadata = Map::new();
    if meta.authority_tier.is_some() {
        // Only a frame with a tier has authority; without one it is pre-authority
        // history and memory reads it as legacy (principal unknown).
        metadata.insert(AUTHORITY_SCHEMA_KEY.to_owned(), Value::from(1));
    }
    metadata.insert("speaker_kind".to_owned(), meta.speaker_kind.clone().into());
    metadata.insert("principal_id".to_owned(), meta.principal_id.clone().into());
    if let Some(tier) = meta.authority_tier {
        metadata.insert("authority_tier".to_owned(), tier.as_str().into());
    }
    metadata.insert("trust_state".to_owned(), meta.trust_state.as_str().into());
    if let Some(speaker) = &frame.speaker_id {
        let view = SpeakerView::from_frame(speaker, label);
        if !view.speaker_id.is_empty() {
            metadata.insert("speaker_id".to_owned(), view.speaker_id.into());
        }
        if !view.speaker_display.is_empty() {
            metadata.insert("speaker_display".to_owned(), view.speaker_display.into());
        }
        metadata.insert("speaker_trusted".to_owned(), Value::Bool(meta.trust_state == TrustState::Trusted));
    }
    if role == "system" {
        metadata.insert(KIND.to_owned(), "frame".into());
    }
    let timestamp = match parse_iso8601(stamp) {
        Some(seconds) => Timestamp::Unix(seconds),
        None if stamp.is_empty() => Timestamp::None,
        None => Timestamp::Text(stamp.to_owned()),
    };
    Message { id: id.to_owned(), predecessor, role: role.to_owned(), content: Content::Text(text), timestamp, metadata }
}
