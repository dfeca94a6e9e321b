//! Read the indexable files of a workspace from disk (spec 02 §6.1): every regular,
//! non-symlink `*.md` file under `topics/` and `sources/`.
//!
//! A stand-in for the transaction layer's read snapshot: the index only needs
//! `(relative path, bytes)` pairs, so swapping this module for the snapshot changes no
//! other code. Runtime and history folders are never entered (decision 6).

use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorCode};

/// The top-level folders that hold indexable files.
const ROOTS: [&str; 2] = ["topics", "sources"];
/// Folder names never entered: the runtime directory (which holds the stage and the
/// quarantine), Git history and the superseded layout.
const SKIPPED_DIRS: [&str; 3] = [".scriptorium", ".git", "memory-superseded"];

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
/// Symbolic links (to files or folders) are skipped, so nothing outside the workspace is
/// read; a missing `topics/` or `sources/` folder holds nothing. Names that are not UTF-8
/// cannot be workspace paths and are skipped.
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
    let mut files = Vec::new();
    for top in ROOTS {
        let dir = root.join(top);
        match std::fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_dir() => walk(&dir, top, &mut files)?,
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(read_failed(&dir, error)),
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// Whether `name` is a folder the walk never enters.
pub(crate) fn is_skipped_dir(name: &str) -> bool {
    SKIPPED_DIRS.contains(&name)
}

fn walk(dir: &Path, relative: &str, files: &mut Vec<ListedFile>) -> Result<(), Error> {
    let entries = std::fs::read_dir(dir).map_err(|e| read_failed(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| read_failed(dir, e))?;
        let Ok(name) = entry.file_name().into_string() else { continue };
        // `file_type` does not follow symbolic links, so a link is neither a file nor a folder here.
        let kind = entry.file_type().map_err(|e| read_failed(&entry.path(), e))?;
        let child = format!("{relative}/{name}");
        if kind.is_dir() {
            if !is_skipped_dir(&name) {
                walk(&entry.path(), &child, files)?;
            }
        } else if kind.is_file() && name.ends_with(".md") {
            let disk = entry.path();
            let meta = std::fs::symlink_metadata(&disk).map_err(|e| read_failed(&disk, e))?;
            files.push(ListedFile { path: child, disk, meta });
        }
    }
    Ok(())
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
            ("sources/memory-superseded/y.md", "no"),
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
