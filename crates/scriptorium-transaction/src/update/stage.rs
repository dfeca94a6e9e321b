//! The in-memory stage of one update: the committed files it starts from, and the
//! source archives as they will be after this call's evidence is appended.
//!
//! Sources are append-only, so the stage never copies them: a lookup reads the
//! committed archive unless this call plans new bytes for it.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use scriptorium_topic_markdown::SourceLookup;

use crate::archive_tree::WorkspaceSources;
use crate::error::Error;
use crate::journal::io_error;
use crate::listing::{FileClass, Scope, list_vfs};
use crate::vfs::Vfs;

mod committed;

pub(crate) use self::committed::{CommittedCache, normalize_stage};

/// The top-level derived files the derive step may rewrite.
pub(crate) const DERIVED_FILES: [&str; 4] = ["core.md", "recent_events.jsonl", "relations.json", "commitments.jsonl"];

/// What a writer's restricted stage shows (spec 02 §4.3 "Stage", §10): the topics and the
/// derived views the writer may read, top-level names for a [`Scope::Under`] listing.
/// Not `sources/` (the batch's text is in the prompt) nor the runtime state.
pub const WRITER_STAGE_ITEMS: [&str; 6] =
    ["topics", "timeline", DERIVED_FILES[0], DERIVED_FILES[1], DERIVED_FILES[2], DERIVED_FILES[3]];

/// Every visible regular file under the top-level directory `dir`, keyed by
/// `/`-separated path, by the one [`Listing`](crate::listing::Listing) rule: links,
/// special files and hidden paths are skipped, never followed.
pub(crate) fn read_tree<V: Vfs + ?Sized>(vfs: &V, dir: &str) -> Result<BTreeMap<String, Vec<u8>>, Error> {
    read_listed(vfs, dir, FileClass::is_visible)
}

/// The files under `dir` whose class `keep` accepts.
fn read_listed<V: Vfs + ?Sized>(
    vfs: &V,
    dir: &str,
    keep: fn(FileClass) -> bool,
) -> Result<BTreeMap<String, Vec<u8>>, Error> {
    let listing = list_vfs(vfs, Scope::Under(&[dir])).complete().map_err(|error| Error::from(error).with_path(dir))?;
    let mut files = BTreeMap::new();
    for file in listing.files.iter().filter(|file| keep(file.class())) {
        // A visible path is UTF-8 by the listing rule.
        let Some(path) = file.path() else { continue };
        let bytes = vfs.read(Path::new(path)).map_err(io_error(Path::new(path)))?;
        files.insert(path.to_owned(), bytes);
    }
    Ok(files)
}

/// The committed topic files (`topics/**.md`).
pub(crate) fn committed_topics<V: Vfs + ?Sized>(vfs: &V) -> Result<BTreeMap<String, Vec<u8>>, Error> {
    read_listed(vfs, "topics", |class| class == FileClass::Topic)
}

/// The paths where `new` differs from `old`, in path order, each with its bytes in
/// `new` (`None`: only `old` has it): one merge walk of the two sorted maps, without a
/// lookup per path.
pub(crate) fn differences<'a>(
    new: &'a BTreeMap<String, Vec<u8>>,
    old: &'a BTreeMap<String, Vec<u8>>,
) -> Vec<(&'a String, Option<&'a Vec<u8>>)> {
    let mut out = Vec::new();
    let mut old = old.iter().peekable();
    for (path, bytes) in new {
        while let Some((gone, _)) = old.next_if(|(before, _)| *before < path) {
            out.push((gone, None));
        }
        match old.next_if(|(before, _)| *before == path) {
            Some((_, before)) if before == bytes => {}
            _ => out.push((path, Some(bytes))),
        }
    }
    out.extend(old.map(|(gone, _)| (gone, None)));
    out
}

/// Source archives as the stage sees them: planned bytes first, then the workspace.
pub(crate) struct StageSources<'a, V: Vfs + ?Sized> {
    committed: WorkspaceSources<'a, V>,
    planned: &'a BTreeMap<String, Vec<u8>>,
}

impl<'a, V: Vfs + ?Sized> StageSources<'a, V> {
    /// The workspace's archives with `planned` (path → complete new bytes) laid over.
    pub(crate) fn new(vfs: &'a V, planned: &'a BTreeMap<String, Vec<u8>>) -> Self {
        StageSources { committed: WorkspaceSources::new(vfs), planned }
    }
}

impl<V: Vfs + ?Sized> SourceLookup for StageSources<'_, V> {
    fn read_source(&self, path: &str) -> io::Result<Option<Vec<u8>>> {
        if let Some(bytes) = self.planned.get(path) {
            return Ok(Some(bytes.clone()));
        }
        self.committed.read_source(path)
    }
}
