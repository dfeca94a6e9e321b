//! The importers against fixture transcripts written to each format's documented shape.

mod chatgpt;
mod claude_code;
mod codex;
mod jsonl;
mod openprogram;
mod prop;

use std::path::{Path, PathBuf};

use scriptorium_writer_runtime::import::{Format, ImportOptions, ImportReport, import_paths_with};
use scriptorium_writer_runtime::{Error, SessionStore, SqliteStore};

use crate::support::TempDir;

/// The fixture directory of `format`.
pub(crate) fn fixtures(format: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import").join(format)
}

/// A fresh store in `dir`.
pub(crate) fn store(dir: &TempDir) -> SqliteStore {
    SqliteStore::open(&dir.path().join("sessions.sqlite3")).expect("open store")
}

/// Import `paths` at a fixed time.
pub(crate) fn run(store: &SqliteStore, format: Format, paths: &[PathBuf]) -> Result<ImportReport, Error> {
    import_paths_with(store, format, paths, &ImportOptions { now: Some(1_800_000_000.0) })
}

/// `(id, role, text)` of the turns on the branch ending at `head`.
pub(crate) fn turns(store: &SqliteStore, session: &str, head: Option<&str>) -> Vec<(String, String, String)> {
    store
        .get_branch(session, head)
        .expect("branch")
        .into_iter()
        .filter(|m| m.role == "user" || m.role == "assistant")
        .map(|m| (m.id.clone(), m.role.clone(), m.content.text()))
        .collect()
}

/// Everything a session holds, for comparing two imports: nodes, tips and head.
pub(crate) fn snapshot(store: &SqliteStore, session: &str) -> String {
    let messages = store.get_messages(session).expect("messages");
    let tips = store.list_branches(session).expect("tips");
    let head = store.get_session(session).expect("session").and_then(|s| s.head_id);
    format!("{messages:?}\n{tips:?}\n{head:?}")
}

/// Copy `from` (a file or directory tree) to `to`.
pub(crate) fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).expect("mkdir");
        for entry in std::fs::read_dir(from).expect("read dir") {
            let entry = entry.expect("entry");
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::copy(from, to).expect("copy");
    }
}

/// `triple("id", "role", "text")`.
pub(crate) fn t(id: &str, role: &str, text: &str) -> (String, String, String) {
    (id.to_owned(), role.to_owned(), text.to_owned())
}
