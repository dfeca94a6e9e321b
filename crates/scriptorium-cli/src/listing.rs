//! The archive files of a workspace: regular, non-symlink `*.md` files under
//! `sources/`, in component-wise sorted order (spec 01 §1.5, §3.6).

use std::path::{Path, PathBuf};

/// One file found under `sources/`.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ArchiveFile {
    /// Workspace-relative path components (`["sources", "openprogram", "_v2", "t.md"]`).
    /// Sorting on the component list gives Python's `Path` order (`a/b.md` < `a-c.md`).
    pub(crate) components: Vec<String>,
    /// The path on disk.
    pub(crate) path: PathBuf,
}

impl ArchiveFile {
    /// The workspace-relative path with `/` separators, as archives and topics name it.
    pub(crate) fn relative_path(&self) -> String {
        self.components.join("/")
    }
}

/// A directory under `sources/` that could not be listed.
#[derive(Debug)]
pub(crate) struct ListingError {
    /// Workspace-relative path of the directory.
    pub(crate) relative_path: String,
    /// The operating system's reason.
    pub(crate) error: std::io::Error,
}

/// Every archive file under `root/sources`, sorted, plus the directories that could
/// not be read. Symlinks (to files or directories) are skipped, as every reader of
/// the reference does, so a link cannot pull outside files into the check.
pub(crate) fn archive_files(root: &Path) -> (Vec<ArchiveFile>, Vec<ListingError>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    let sources = root.join("sources");
    if sources.is_dir() {
        walk(&sources, &mut vec!["sources".to_owned()], &mut files, &mut errors);
    }
    files.sort();
    (files, errors)
}

fn walk(dir: &Path, prefix: &mut Vec<String>, files: &mut Vec<ArchiveFile>, errors: &mut Vec<ListingError>) {
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
        let name = entry.file_name().to_string_lossy().into_owned();
        if file_type.is_dir() {
            prefix.push(name);
            walk(&entry.path(), prefix, files, errors);
            prefix.pop();
        } else if file_type.is_file() && name.ends_with(".md") {
            let mut components = prefix.clone();
            components.push(name);
            files.push(ArchiveFile { components, path: entry.path() });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(parts: &[&str]) -> ArchiveFile {
        ArchiveFile { components: parts.iter().map(|p| (*p).to_owned()).collect(), path: PathBuf::new() }
    }

    #[test]
    fn component_order_puts_subdirectory_before_dashed_sibling() {
        let mut files = [file(&["sources", "a-c.md"]), file(&["sources", "a", "b.md"])];
        files.sort();
        assert_eq!(files[0].relative_path(), "sources/a/b.md");
        assert_eq!(files[1].relative_path(), "sources/a-c.md");
    }
}
