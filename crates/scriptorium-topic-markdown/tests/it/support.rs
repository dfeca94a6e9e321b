//! Shared helpers: reading folders of the golden vectors into memory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use scriptorium_topic_markdown::MemorySources;

/// The golden-vector folder of the workspace, when this crate is built inside it.
pub(crate) fn vectors() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors");
    dir.join("index.json").is_file().then_some(dir)
}

/// Every file under `dir`, keyed `prefix/<relative path>`.
pub(crate) fn read_tree(dir: &Path, prefix: &str) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![(dir.to_path_buf(), prefix.to_owned())];
    while let Some((folder, key)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries.flatten() {
            let child = format!("{key}/{}", entry.file_name().to_string_lossy());
            if entry.path().is_dir() {
                pending.push((entry.path(), child));
            } else if let Ok(bytes) = std::fs::read(entry.path()) {
                files.insert(child, bytes);
            }
        }
    }
    files
}

/// The `sources/` folder of a workspace, in memory.
pub(crate) fn sources(workspace: &Path) -> MemorySources {
    read_tree(&workspace.join("sources"), "sources").into_iter().collect()
}
