//! The in-memory stage of one update: the committed files it starts from, and the
//! source archives as they will be after this call's evidence is appended.
//!
//! Sources are append-only, so the stage never copies them: a lookup reads the
//! committed archive unless this call plans new bytes for it.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use scriptorium_archive_format::ArchiveTree;
use scriptorium_topic_markdown::SourceLookup;

use crate::archive_tree::WorkspaceTree;
use crate::error::Error;
use crate::journal::io_error;
use crate::vfs::{FileKind, Vfs};

mod committed;

pub(crate) use self::committed::{CommittedCache, normalize_stage};

/// The top-level derived files the derive step may rewrite.
pub(crate) const DERIVED_FILES: [&str; 4] = ["core.md", "recent_events.jsonl", "relations.json", "commitments.jsonl"];

/// Every regular file under the directory `dir` (workspace-relative), keyed by
/// `/`-separated path. Links and special files are skipped, never followed.
pub(crate) fn read_tree<V: Vfs + ?Sized>(vfs: &V, dir: &str) -> Result<BTreeMap<String, Vec<u8>>, Error> {
    let mut files = BTreeMap::new();
    walk(vfs, dir, &mut files)?;
    Ok(files)
}

fn walk<V: Vfs + ?Sized>(vfs: &V, dir: &str, files: &mut BTreeMap<String, Vec<u8>>) -> Result<(), Error> {
    let path = Path::new(dir);
    match vfs.metadata(path).map_err(io_error(path))?.map(|meta| meta.kind) {
        Some(FileKind::Dir) => {}
        _ => return Ok(()),
    }
    for name in vfs.list_dir(path).map_err(io_error(path))? {
        // A name that is not UTF-8 cannot be a topic or archive path of ours.
        let Ok(name) = name.into_string() else { continue };
        let child = format!("{dir}/{name}");
        let child_path = Path::new(&child);
        match vfs.metadata(child_path).map_err(io_error(child_path))?.map(|meta| meta.kind) {
            Some(FileKind::File) => {
                files.insert(child.clone(), vfs.read(child_path).map_err(io_error(child_path))?);
            }
            Some(FileKind::Dir) => walk(vfs, &child, files)?,
            _ => {}
        }
    }
    Ok(())
}

/// The committed topic files (`topics/**.md`).
pub(crate) fn committed_topics<V: Vfs + ?Sized>(vfs: &V) -> Result<BTreeMap<String, Vec<u8>>, Error> {
    let mut topics = read_tree(vfs, "topics")?;
    topics.retain(|path, _| path.ends_with(".md"));
    Ok(topics)
}

/// Source archives as the stage sees them: planned bytes first, then the workspace.
pub(crate) struct StageSources<'a, V: Vfs + ?Sized> {
    tree: WorkspaceTree<'a, V>,
    planned: &'a BTreeMap<String, Vec<u8>>,
}

impl<'a, V: Vfs + ?Sized> StageSources<'a, V> {
    /// The workspace's archives with `planned` (path → complete new bytes) laid over.
    pub(crate) fn new(vfs: &'a V, planned: &'a BTreeMap<String, Vec<u8>>) -> Self {
        StageSources { tree: WorkspaceTree::new(vfs), planned }
    }
}

impl<V: Vfs + ?Sized> SourceLookup for StageSources<'_, V> {
    fn read_source(&self, path: &str) -> io::Result<Option<Vec<u8>>> {
        if let Some(bytes) = self.planned.get(path) {
            return Ok(Some(bytes.clone()));
        }
        match self.tree.read_file(path) {
            // A link, or a path outside `sources/`, is no source (the lookup contract).
            Err(error) if error.kind() == io::ErrorKind::PermissionDenied => Ok(None),
            Err(error) if error.kind() == io::ErrorKind::InvalidInput => Ok(None),
            other => other,
        }
    }
}
