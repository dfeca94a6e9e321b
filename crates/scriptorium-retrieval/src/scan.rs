//! Read the indexable files of a workspace from disk (spec 02 §6.1): the memory files of
//! the transaction layer's one [`Listing`] (regular, non-symlink `*.md` files under
//! `topics/` and `sources/` with no hidden component), so that search indexes exactly
//! what `check` validates and the revision counts.

use std::path::{Path, PathBuf};

use scriptorium_transaction::{Listing, Scope};

use crate::error::{Error, ErrorCode};

/// The top-level folders that hold indexable files.
const ROOTS: [&str; 2] = ["topics", "sources"];

/// One indexable file: its workspace-relative path (with `/`) and its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkspaceFile {
    /// For example `topics/people/dave.md`.
    pub path: String,
    /// The file's bytes.
    pub bytes: Vec<u8>,
}

/// Every indexable file under `root`, sorted by path.
///
/// By the [`Listing`] rule: symbolic links (to files or folders) are skipped, so nothing
/// outside the workspace is read; a missing `topics/` or `sources/` folder holds nothing;
/// a path with a component that starts with `.` or is not UTF-8 is not memory.
///
/// Errors: [`ErrorCode::ReadFailed`] when a folder cannot be listed or a file cannot be read.
pub fn scan_workspace(root: &Path) -> Result<Vec<WorkspaceFile>, Error> {
    list_files(root)?
        .into_iter()
        .map(|file| {
            let bytes = std::fs::read(&file.disk).map_err(|e| read_failed(&file.disk, e))?;
            Ok(WorkspaceFile { path: file.path, bytes })
        })
        .collect()
}

/// One indexable file found by [`list_files`], not yet read.
#[derive(Debug)]
pub(crate) struct ListedFile {
    /// The workspace-relative path, with `/`.
    pub(crate) path: String,
    /// Where it is on disk.
    pub(crate) disk: PathBuf,
    /// Its metadata (of the file itself: links are never listed).
    pub(crate) meta: std::fs::Metadata,
}

/// Every indexable file under `root`, sorted by path, with its metadata: the walk of
/// [`scan_workspace`] without reading any file, so the cache can tell which changed.
pub(crate) fn list_files(root: &Path) -> Result<Vec<ListedFile>, Error> {
    let listing = Listing::read(root, Scope::Under(&ROOTS)).complete().map_err(|e| read_failed(root, e))?;
    let mut files: Vec<ListedFile> = listing
        .files
        .into_iter()
        .filter(|file| file.class().is_memory())
        .filter_map(|file| {
            // A memory path is UTF-8 by the listing rule.
            let path = file.path()?.to_owned();
            Some(ListedFile { disk: root.join(&path), path, meta: file.meta })
        })
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

pub(crate) fn read_failed(path: &Path, error: std::io::Error) -> Error {
    Error::new(ErrorCode::ReadFailed, format!("cannot read {}", path.display())).with_source(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_root(name: &str) -> std::path::PathBuf {
        let root = std::env::temp_dir().join(format!("scriptorium-retrieval-scan-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("temp dir");
        root
    }

    #[test]
    fn reads_markdown_under_topics_and_sources_only() {
        let root = temp_root("layout");
        for (path, text) in [
            ("topics/a.md", "a"),
            ("topics/sub/b.md", "b"),
            ("topics/notes.txt", "no"),
            ("sources/p/_v2/t.md", "t"),
            ("sources/.scriptorium/x.md", "no"),
            ("topics/.git/x.md", "no"),
            ("topics/.hidden/y.md", "no"),
            ("timeline/2024.md", "no"),
            ("core.md", "no"),
        ] {
            let file = root.join(path);
            std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
            std::fs::write(file, text).expect("write");
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("topics/a.md"), root.join("topics/link.md")).expect("symlink");
        let paths: Vec<String> = scan_workspace(&root).expect("scan").into_iter().map(|f| f.path).collect();
        assert_eq!(paths, ["sources/p/_v2/t.md", "topics/a.md", "topics/sub/b.md"]);
        std::fs::remove_dir_all(&root).expect("cleanup");
    }

    #[test]
    fn empty_workspace_has_no_files() {
        let root = temp_root("empty");
        assert!(scan_workspace(&root).expect("scan").is_empty());
        std::fs::remove_dir_all(&root).expect("cleanup");
    }
}
