//! The one-time legacy cursor migration (spec 02 §3.5): a workspace written by the
//! pre-marker design keeps per-session cursors in `runtime.json`; the first write turns
//! what the archives prove was written into markers and drops `cursors`. Biased to
//! under-mark: only turns archived as a gap-free run from a branch's start count.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use scriptorium_archive_format::{parse_bytes, source_anchor, split_source_id};
use scriptorium_transaction::{Changes, INTERACTIVE_LOCK_TIMEOUT, RuntimeState, Vfs, WriteLock};
use serde_json::{Map, Value};

use crate::batch::MARKER_KEY;
use crate::failure::PassError;
use crate::pass::Runtime;
use crate::records::{PROVIDER, records};
use crate::store::MetadataPatches;

/// Whether `runtime.json` holds the legacy `cursors` key.
fn has_cursors(bytes: Option<&[u8]>) -> bool {
    bytes
        .and_then(|bytes| serde_json::from_slice::<Value>(bytes).ok())
        .is_some_and(|value| value.get("cursors").is_some())
}

/// Python's `urllib.parse.unquote` for a file stem: `%XX` decoded, invalid escapes kept.
fn unquote(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        let hex = |at: usize| bytes.get(at).and_then(|b| char::from(*b).to_digit(16));
        match (byte, hex(i + 1), hex(i + 2)) {
            (b'%', Some(hi), Some(lo)) => {
                out.push(u8::try_from(hi * 16 + lo).unwrap_or(b'?'));
                i += 3;
            }
            _ => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The first record header of a legacy archive, trusted only right after its title.
fn legacy_candidate(stem: &str, text: &str) -> Option<(String, String)> {
    let session = unquote(stem);
    let rest = text.strip_prefix(&format!("# {session}\n\n"))?;
    let (anchor_line, rest) = rest.split_once('\n')?;
    let (id_line, _) = rest.split_once('\n')?;
    let source_id = id_line.strip_prefix("<!-- source-id:")?.strip_suffix(" -->")?;
    let anchor = anchor_line.strip_prefix("<a id=\"")?.strip_suffix("\"></a>")?;
    let parts = split_source_id(source_id)?;
    (parts.provider == PROVIDER && parts.thread == session && anchor == source_anchor(source_id))
        .then(|| (session.clone(), parts.message.to_owned()))
}

/// The candidate (session → node ids) from `sources/openprogram/`.
fn candidates(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let dir = root.join("sources").join(PROVIDER);
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            let Some(stem) = path.file_stem().and_then(|s| s.to_str()).map(str::to_owned) else { continue };
            if path.is_file() && path.extension().is_some_and(|ext| ext == "md") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                if let Some((session, node)) = legacy_candidate(&stem, &text) {
                    out.entry(session).or_default().insert(node);
                }
            }
        }
    }
    if let Ok(entries) = std::fs::read_dir(dir.join("_v2")) {
        for entry in entries.filter_map(Result::ok) {
            let Ok(bytes) = std::fs::read(entry.path()) else { continue };
            let relative = format!("sources/{PROVIDER}/_v2/{}", entry.file_name().to_string_lossy());
            for frame in parse_bytes(&bytes, &relative).frames {
                if let Some(parts) = split_source_id(frame.source_id).filter(|parts| parts.provider == PROVIDER) {
                    out.entry(parts.thread.to_owned()).or_default().insert(parts.message.to_owned());
                }
            }
        }
    }
    out
}

impl Runtime {
    /// Run the migration if `runtime.json` still holds `cursors` (a no-op otherwise).
    pub fn migrate_legacy_cursors(&self) -> Result<(), PassError> {
        let workspace = self.workspace();
        let path = workspace.runtime_state_path();
        if !has_cursors(workspace.vfs().read(Path::new(&path)).ok().as_deref()) {
            return Ok(());
        }
        let lock = workspace.lock(INTERACTIVE_LOCK_TIMEOUT)?;
        let bytes = workspace.vfs().read(Path::new(&path)).ok();
        if !has_cursors(bytes.as_deref()) {
            return Ok(());
        }
        for (session, found) in candidates(workspace.root()) {
            let mut marked = BTreeSet::new();
            for node in &found {
                let rows = self.store().get_branch(&session, Some(node))?;
                let Ok(branch) = records(&session, &rows, self.utc_offset_seconds()) else { continue };
                // Oldest first while archived; the first gap ends the walk.
                for record in branch.iter().take_while(|record| found.contains(record.node_id())) {
                    marked.insert(record.node_id().to_owned());
                }
            }
            let mut marker = Map::new();
            marker.insert(MARKER_KEY.to_owned(), Value::String(workspace.workspace_id().to_owned()));
            let patches: MetadataPatches = marked.into_iter().map(|id| (id, marker.clone())).collect();
            if !patches.is_empty() {
                self.store().merge_node_metadata_batch(&session, &patches)?;
            }
        }
        // Every session's batch succeeded: drop `cursors`, keep the counters.
        self.install_state(&lock, &RuntimeState::parse(bytes.as_deref().unwrap_or_default()))
    }

    fn install_state(&self, lock: &WriteLock, state: &RuntimeState) -> Result<(), PassError> {
        let changes: Changes = BTreeMap::from([(self.workspace().runtime_state_path(), Some(state.to_bytes()))]);
        self.workspace().install(lock, &changes)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
