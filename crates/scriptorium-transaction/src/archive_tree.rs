//! [`WorkspaceTree`]: the archive writer's read-only view ([`ArchiveTree`]) of a
//! workspace, which never follows a symbolic link and never reads outside `sources/`.
//!
//! `plan_append` reads archives and lists directories from the root down to check for
//! case- and normalization-colliding names. Every component of every path is checked
//! with `lstat` first: a link anywhere (say `sources/p -> /etc`) is refused, so a planted
//! link can neither leak a file into an archive nor redirect the install that follows.

use std::io;
use std::path::{Path, PathBuf};

use scriptorium_archive_format::ArchiveTree;
use scriptorium_topic_markdown::SourceLookup;

use crate::listing::{FileClass, classify};
use crate::vfs::{FileKind, Vfs, kind_of};

/// The top-level directory the archive writer may read.
const SOURCES: &str = "sources";

/// A workspace seen through a [`Vfs`] as the archive writer needs it.
#[derive(Debug)]
pub struct WorkspaceTree<'a, V: Vfs + ?Sized> {
    vfs: &'a V,
}

impl<'a, V: Vfs + ?Sized> WorkspaceTree<'a, V> {
    /// The tree of the workspace `vfs` is rooted at.
    pub fn new(vfs: &'a V) -> Self {
        WorkspaceTree { vfs }
    }

    /// Check `path` is the root, `sources` or below it, with no link on the way; returns
    /// its kind (`None` when it, or a parent, does not exist).
    fn resolve(&self, path: &str) -> io::Result<Option<FileKind>> {
        let denied = |why: &str| io::Error::new(io::ErrorKind::PermissionDenied, format!("{why}: {path}"));
        if path.is_empty() {
            return Ok(Some(FileKind::Dir));
        }
        let mut components = path.split('/');
        if components.next() != Some(SOURCES) {
            return Err(denied("the archive writer reads only sources/"));
        }
        if path.split('/').any(|component| component.is_empty() || component == "." || component == "..") {
            return Err(denied("not a plain relative path"));
        }
        let mut current = PathBuf::new();
        let mut kind = None;
        for component in path.split('/') {
            current.push(component);
            kind = kind_of(self.vfs, &current)?;
            match kind {
                None => return Ok(None),
                Some(FileKind::Symlink) => return Err(denied("refusing to follow a symbolic link")),
                Some(FileKind::Dir) => {}
                Some(FileKind::File | FileKind::Other) if current.as_path() != Path::new(path) => return Ok(None),
                Some(_) => {}
            }
        }
        Ok(kind)
    }
}

impl<V: Vfs + ?Sized> ArchiveTree for WorkspaceTree<'_, V> {
    fn read_file(&self, path: &str) -> io::Result<Option<Vec<u8>>> {
        match self.resolve(path)? {
            None => Ok(None),
            Some(FileKind::File) => self.vfs.read(Path::new(path)).map(Some),
            Some(_) => Err(io::Error::new(io::ErrorKind::InvalidInput, format!("not a regular file: {path}"))),
        }
    }

    fn list_dir(&self, path: &str) -> io::Result<Option<Vec<String>>> {
        match self.resolve(path)? {
            None => Ok(None),
            Some(FileKind::Dir) => {
                let names = self.vfs.list_dir(Path::new(path))?;
                // Names that are not UTF-8 cannot equal or fold to a planned (UTF-8) name.
                Ok(Some(names.into_iter().filter_map(|name| name.into_string().ok()).collect()))
            }
            Some(_) => Ok(None),
        }
    }
}

/// The workspace's source archives as the [`SourceLookup`] that topic citations resolve
/// against: the one file-backed lookup, for the transaction, retrieval and `check`.
///
/// It resolves exactly the files the [`Listing`](crate::Listing) classes as
/// [`FileClass::Source`]: a regular `sources/**.md` file with no hidden component,
/// reached without any symbolic link (spec 01 §6.5), so a link can never make a
/// citation resolve against a file outside `sources/`, and an incremental reader
/// resolves what a full scan would.
#[derive(Debug)]
pub struct WorkspaceSources<'a, V: Vfs + ?Sized> {
    tree: WorkspaceTree<'a, V>,
}

impl<'a, V: Vfs + ?Sized> WorkspaceSources<'a, V> {
    /// The sources of the workspace `vfs` is rooted at.
    pub fn new(vfs: &'a V) -> Self {
        WorkspaceSources { tree: WorkspaceTree::new(vfs) }
    }
}

impl<V: Vfs + ?Sized> SourceLookup for WorkspaceSources<'_, V> {
    fn read_source(&self, path: &str) -> io::Result<Option<Vec<u8>>> {
        if classify(path.as_bytes()) != FileClass::Source {
            return Ok(None);
        }
        match self.tree.read_file(path) {
            // A link on the way, or a path that is not plain, is no source (the lookup contract).
            Err(error) if matches!(error.kind(), io::ErrorKind::PermissionDenied | io::ErrorKind::InvalidInput) => {
                Ok(None)
            }
            // Removed between the check and the read: the same as never there.
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests;
