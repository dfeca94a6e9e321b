//! The Markdown files of a workspace area: regular, non-symlink `*.md` files under
//! `sources/` (archives) or `topics/` (topic files), in component-wise sorted order
//! (spec 01 §1.5, §3.6, §6.1).
//!
//! Only those two directories are walked, so the runtime directory, `.git/`, the
//! stage, quarantine and `memory-superseded/` are never read (decision 6).

use std::path::{Path, PathBuf};

/// One file found under `sources/` or `topics/`.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct WorkspaceFile {
    /// Workspace-relative path components (`["sources", "openprogram", "_v2", "t.md"]`).
    /// Sorting on the component list gives Python's `Path` order (`a/b.md` < `a-c.md`).
    pub(crate) components: Vec<String>,
    /// The path on disk.
    pub(crate) path: PathBuf,
    /// Whether every component is valid UTF-8; when not, `components` holds a lossy
    /// rendering (U+FFFD) that names no real file.
    pub(crate) utf8: bool,
}

impl WorkspaceFile {
    /// The workspace-relative path with `/` separators, as archives and topics name it.
    pub(crate) fn relative_path(&self) -> String {
        self.components.join("/")
    }
}

/// A directory under `sources/` or `topics/` that could not be listed.
#[derive(Debug)]
pub(crate) struct ListingError {
    /// Workspace-relative path of the directory.
    pub(crate) relative_path: String,
    /// The operating system's reason.
    pub(crate) error: std::io::Error,
}

/// Every archive file under `root/sources`, sorted, plus the directories that could
/// not be read.
pub(crate) fn archive_files(root: &Path) -> (Vec<WorkspaceFile>, Vec<ListingError>) {
    markdown_files(root, "sources")
}

/// Every topic file under `root/topics`, sorted, plus the directories that could not
/// be read.
pub(crate) fn topic_files(root: &Path) -> (Vec<WorkspaceFile>, Vec<ListingError>) {
    markdown_files(root, "topics")
}

/// Every `*.md` file under `root/<area>`. Symlinks below the area (to files or
/// directories) are skipped, as every reader of the reference does, so a link cannot
/// pull outside files into the check.
fn markdown_files(root: &Path, area: &str) -> (Vec<WorkspaceFile>, Vec<ListingError>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    let top = root.join(area);
    if top.is_dir() {
        walk(&top, &mut vec![area.to_owned()], true, &mut files, &mut errors);
    }
    files.sort();
    (files, errors)
}

/// Walk `dir` (workspace-relative `prefix`); `utf8` says whether `prefix` is valid UTF-8.
fn walk(
    dir: &Path,
    prefix: &mut Vec<String>,
    utf8: bool,
    files: &mut Vec<WorkspaceFile>,
    errors: &mut Vec<ListingError>,
) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => {
            errors.push(ListingError { relative_path: prefix.join("/"), error });
            return;
        }
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                errors.push(ListingError { relative_path: prefix.join("/"), error });
                continue;
            }
        };
        // `DirEntry::file_type` does not follow symlinks: a link is neither file nor dir.
        let Ok(file_type) = entry.file_type() else { continue };
        let os_name = entry.file_name();
        let name = os_name.to_string_lossy().into_owned();
        let utf8 = utf8 && os_name.to_str().is_some();
        if file_type.is_dir() {
            prefix.push(name);
            walk(&entry.path(), prefix, utf8, files, errors);
            prefix.pop();
        } else if file_type.is_file() && name.ends_with(".md") {
            let mut components = prefix.clone();
            components.push(name);
            files.push(WorkspaceFile { components, path: entry.path(), utf8 });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(parts: &[&str]) -> WorkspaceFile {
        WorkspaceFile { components: parts.iter().map(|p| (*p).to_owned()).collect(), path: PathBuf::new(), utf8: true }
    }

    #[test]
    fn component_order_puts_subdirectory_before_dashed_sibling() {
        let mut files = [file(&["sources", "a-c.md"]), file(&["sources", "a", "b.md"])];
        files.sort();
        assert_eq!(files[0].relative_path(), "sources/a/b.md");
        assert_eq!(files[1].relative_path(), "sources/a-c.md");
    }
}
