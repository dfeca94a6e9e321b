//! [`Listing`]: the one walk of a workspace and the one rule that sorts what it finds
//! (spec 01 §1.2, §1.5, §6.1; spec 02 §6.1, §6.8). The revision, the stage, retrieval,
//! grep, the derived views and `check` all list the workspace through it.
//!
//! The rule, for every entry below the root (never through a link):
//!
//! - a top-level internal name ([`is_internal_name`]) is not entered at all;
//! - a regular file is counted by the revision, and is [`FileClass::Hidden`] when any
//!   component of its path is hidden ([`is_hidden_component`]) or not UTF-8: no reader exposes it, no
//!   write may create it; otherwise it is a [`FileClass::Topic`] (`topics/**.md`), a
//!   [`FileClass::Source`] (`sources/**.md`) or [`FileClass::Visible`] (derived views
//!   and any other file, which grep reads);
//! - a symbolic link, a FIFO, socket or device, and a directory named `*.md` under
//!   `topics/` or `sources/` are [`Skipped`] (the directory is still entered), each with
//!   a code `check` reports, so nothing is left out in silence.
//!
//! The revision must stay the reference's token, which hashes hidden files too; that
//! is why they are listed rather than left out of the walk.

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use scriptorium_archive_format::collision_key;

use crate::revision::is_internal_name;
use crate::vfs::{FileKind, Metadata, Vfs};
use crate::workspace::SUPERSEDED_DIR;

/// The directory of topic files.
const TOPICS: &str = "topics";
/// The directory of source archives.
const SOURCES: &str = "sources";
/// The suffix of topic files and archives.
const MARKDOWN: &str = ".md";

/// What a regular file of the workspace is, by its path alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileClass {
    /// `topics/**.md` with a non-empty stem: a topic file.
    Topic,
    /// `sources/**.md`: a source archive.
    Source,
    /// Any other visible file: derived views, `core.md`, `topics/notes.txt`, …
    Visible,
    /// A path with a hidden component ([`is_hidden_component`]) or one that is not UTF-8:
    /// counted by the revision only.
    Hidden,
}

impl FileClass {
    /// Whether the file is memory that search indexes and `check` validates.
    pub fn is_memory(self) -> bool {
        matches!(self, FileClass::Topic | FileClass::Source)
    }

    /// Whether any reader (grep, `memory_get`, the stage) may see the file.
    pub fn is_visible(self) -> bool {
        self != FileClass::Hidden
    }
}

/// The class of the regular file at the workspace-relative, `/`-separated `path`.
pub fn classify(path: &[u8]) -> FileClass {
    let Ok(path) = std::str::from_utf8(path) else { return FileClass::Hidden };
    if path.split('/').any(is_hidden_component) {
        return FileClass::Hidden;
    }
    match path.split_once('/') {
        Some((TOPICS, _)) if path.ends_with(MARKDOWN) => FileClass::Topic,
        Some((SOURCES, _)) if path.ends_with(MARKDOWN) => FileClass::Source,
        _ => FileClass::Visible,
    }
}

/// Whether a path component hides what is below it from every reader: it starts with
/// `.` (`.git`, `.scriptorium*`, editor swap files, `.md` alone), or it is
/// `memory-superseded`, which decision 6 keeps out of every tool's reach wherever a copy
/// of the superseded layout lands.
pub fn is_hidden_component(component: &str) -> bool {
    component.starts_with('.') || component == SUPERSEDED_DIR
}

/// The warning code `check` gives a hidden `*.md` file under `sources/`: an archive no
/// reader lists (hidden topic files are `TOPIC_INVALID_PATH`, since no write creates them).
pub const HIDDEN_ARCHIVE_CODE: &str = "TXN_HIDDEN_ARCHIVE";

/// The warning code `check` gives a memory path that differs from another listed path
/// (or a directory on the way to one) only by case or Unicode normalization: on a
/// case-insensitive or normalizing file system the two are one file. Writes refuse to
/// create such a pair; this names one that is already on disk.
pub const PATH_COLLISION_CODE: &str = "TXN_PATH_COLLISION";

/// Why an entry is not listed as a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SkipReason {
    /// A symbolic link: never followed, never counted.
    Symlink,
    /// A FIFO, socket or device: never memory.
    Special,
    /// A directory named `*.md` under `topics/` or `sources/`: not a topic or archive
    /// (its files are listed as usual).
    MarkdownDir,
}

impl SkipReason {
    /// The stable warning code `check` reports (registered in `docs/error-codes.md`).
    pub const fn code(self) -> &'static str {
        match self {
            SkipReason::Symlink => "TXN_SKIPPED_SYMLINK",
            SkipReason::Special => "TXN_SKIPPED_SPECIAL_FILE",
            SkipReason::MarkdownDir => "TXN_SKIPPED_MARKDOWN_DIR",
        }
    }
}

/// One regular file the walk found.
#[derive(Clone, Debug)]
pub struct ListedFile<M> {
    path: Vec<u8>,
    class: FileClass,
    /// The `lstat` facts of the file itself.
    pub meta: M,
}

impl<M> ListedFile<M> {
    /// The workspace-relative path, `/`-separated, as raw bytes (the revision feeds these).
    pub fn path_bytes(&self) -> &[u8] {
        &self.path
    }

    /// The path as text; `None` only for a [`FileClass::Hidden`] file whose name is not UTF-8.
    pub fn path(&self) -> Option<&str> {
        std::str::from_utf8(&self.path).ok()
    }

    /// The file's class.
    pub fn class(&self) -> FileClass {
        self.class
    }

    /// The path bytes and the metadata, without copying the path.
    pub fn into_parts(self) -> (Vec<u8>, M) {
        (self.path, self.meta)
    }
}

/// An entry the walk did not list as a file, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The workspace-relative path (always UTF-8: hidden entries are not reported).
    pub path: String,
    /// Why it was skipped.
    pub reason: SkipReason,
}

/// A directory the walk could not list.
#[derive(Debug)]
pub struct Unreadable {
    /// The workspace-relative path (lossy when not UTF-8).
    pub path: String,
    /// The operating system's reason.
    pub error: io::Error,
}

/// Which part of the workspace a walk covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope<'a> {
    /// Every top-level entry except internal names (the revision's and grep's walk).
    Root,
    /// Only these top-level directories (for example `["topics", "sources"]`).
    Under(&'a [&'a str]),
}

/// The result of one walk, files in component-wise path order (Python's `Path` order:
/// `a/b.md` before `a-c.md`).
#[derive(Debug)]
pub struct Listing<M = fs::Metadata> {
    /// Every regular file, in component-wise path order.
    pub files: Vec<ListedFile<M>>,
    /// Every visible entry that was skipped, in walk order.
    pub skipped: Vec<Skipped>,
    /// Every directory that could not be listed.
    pub unreadable: Vec<Unreadable>,
}

impl<M> Default for Listing<M> {
    fn default() -> Self {
        Listing { files: Vec::new(), skipped: Vec::new(), unreadable: Vec::new() }
    }
}

impl Listing<fs::Metadata> {
    /// Walk the real workspace at `root`. A directory that cannot be listed is recorded
    /// in [`Listing::unreadable`] (see [`Listing::complete`]), a missing root too.
    pub fn read(root: &Path, scope: Scope<'_>) -> Listing<fs::Metadata> {
        let mut listing = Listing::default();
        walk(&RealLister::<true> { root }, scope, &mut Vec::new(), &mut listing);
        listing
    }
}

impl Listing<()> {
    /// [`Listing::read`] without `lstat`ing each regular file, for a reader that only
    /// needs the names (and reads the files next anyway).
    pub fn read_names(root: &Path, scope: Scope<'_>) -> Listing<()> {
        let mut listing = Listing::default();
        walk(&RealLister::<false> { root }, scope, &mut Vec::new(), &mut listing);
        listing
    }
}

impl<M> Listing<M> {
    /// The listing, or the first directory that could not be listed as an error.
    pub fn complete(mut self) -> io::Result<Self> {
        if self.unreadable.is_empty() {
            return Ok(self);
        }
        let Unreadable { path, error } = self.unreadable.swap_remove(0);
        let path = if path.is_empty() { "." } else { path.as_str() };
        Err(io::Error::new(error.kind(), format!("cannot list {path}: {error}")))
    }

    /// Pairs of memory paths (or directories on the way to them) that differ only by
    /// case or Unicode normalization, by the key writes refuse them with
    /// ([`scriptorium_archive_format::collision_key`]): `(later, earlier)` in listing
    /// order, each spelling reported once and only its shortest colliding prefix.
    pub fn collisions(&self) -> Vec<(String, String)> {
        let mut first: HashMap<String, &str> = HashMap::new();
        let mut reported: HashSet<&str> = HashSet::new();
        let mut pairs = Vec::new();
        for path in self.memory().filter_map(ListedFile::path) {
            let ends = path.match_indices('/').map(|(at, _)| at).chain([path.len()]);
            for prefix in ends.filter_map(|end| path.get(..end)) {
                let earlier = *first.entry(collision_key(prefix)).or_insert(prefix);
                if earlier != prefix {
                    // The shortest colliding prefix says it all for the paths below it.
                    if reported.insert(prefix) {
                        pairs.push((prefix.to_owned(), earlier.to_owned()));
                    }
                    break;
                }
            }
        }
        pairs
    }

    /// The memory files ([`FileClass::is_memory`]), in listing order.
    pub fn memory(&self) -> impl Iterator<Item = &ListedFile<M>> {
        self.files.iter().filter(|file| file.class.is_memory())
    }
}

/// Walk the workspace a [`Vfs`] shows.
pub(crate) fn list_vfs<V: Vfs + ?Sized>(vfs: &V, scope: Scope<'_>) -> Listing<Metadata> {
    let mut listing = Listing::default();
    walk(&VfsLister { vfs }, scope, &mut Vec::new(), &mut listing);
    listing
}

/// One directory entry as a lister sees it: its name, its kind (never through a link;
/// `None` when it vanished) and, for a regular file, its metadata.
type Entry<M> = (OsString, Option<FileKind>, Option<M>);

/// Where a walk reads directories from: the real file system or a [`Vfs`].
trait Lister {
    type Meta;
    /// The entries of the workspace-relative directory `relative` (`/`-joined bytes).
    fn entries(&self, relative: &[u8]) -> io::Result<Vec<Entry<Self::Meta>>>;
}

/// The real file system; `stat` says whether regular files are `lstat`ed for their
/// metadata or only named (their kind comes with the directory entry either way).
struct RealLister<'a, const STAT: bool> {
    root: &'a Path,
}

/// The metadata a [`RealLister`] gives a regular file.
trait RealMeta: Sized {
    /// The metadata of the regular file `entry`, `None` when it is gone or no longer a file.
    fn of(entry: &fs::DirEntry) -> io::Result<Option<Self>>;
}

impl RealMeta for fs::Metadata {
    fn of(entry: &fs::DirEntry) -> io::Result<Option<Self>> {
        match entry.metadata() {
            Ok(meta) if meta.is_file() => Ok(Some(meta)),
            Ok(_) => Ok(None),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }
}

impl RealMeta for () {
    fn of(_: &fs::DirEntry) -> io::Result<Option<Self>> {
        Ok(Some(()))
    }
}

impl Lister for RealLister<'_, true> {
    type Meta = fs::Metadata;

    fn entries(&self, relative: &[u8]) -> io::Result<Vec<Entry<fs::Metadata>>> {
        real_entries(self.root, relative)
    }
}

impl Lister for RealLister<'_, false> {
    type Meta = ();

    fn entries(&self, relative: &[u8]) -> io::Result<Vec<Entry<()>>> {
        real_entries(self.root, relative)
    }
}

/// The entries of `root/relative`, with `M` for each regular file.
fn real_entries<M: RealMeta>(root: &Path, relative: &[u8]) -> io::Result<Vec<Entry<M>>> {
    let dir: PathBuf = root.join(OsStr::from_bytes(relative));
    let mut out = Vec::new();
    for entry in fs::read_dir(&dir)? {
        let entry = entry?;
        // `file_type` reports the entry itself (never through a link), like `lstat`,
        // and costs no system call where the directory records it.
        let kind = match entry.file_type() {
            Ok(kind) if kind.is_file() => Some(FileKind::File),
            Ok(kind) if kind.is_dir() => Some(FileKind::Dir),
            Ok(kind) if kind.is_symlink() => Some(FileKind::Symlink),
            Ok(_) => Some(FileKind::Other),
            Err(error) if error.kind() == io::ErrorKind::NotFound => None,
            Err(error) => return Err(error),
        };
        let meta = if kind == Some(FileKind::File) { M::of(&entry)? } else { None };
        out.push((entry.file_name(), kind, meta));
    }
    Ok(out)
}

struct VfsLister<'a, V: Vfs + ?Sized> {
    vfs: &'a V,
}

impl<V: Vfs + ?Sized> Lister for VfsLister<'_, V> {
    type Meta = Metadata;

    fn entries(&self, relative: &[u8]) -> io::Result<Vec<Entry<Metadata>>> {
        let dir = Path::new(OsStr::from_bytes(relative));
        let mut out = Vec::new();
        for name in self.vfs.list_dir(dir)? {
            let meta = self.vfs.metadata(&dir.join(&name))?;
            let kind = meta.map(|meta| meta.kind);
            out.push((name, kind, meta.filter(|meta| meta.kind == FileKind::File)));
        }
        Ok(out)
    }
}

/// Walk the directory `prefix` (`/`-joined, empty for the root) into `out`, siblings in
/// name-byte order so that files come out in component-wise path order.
fn walk<L: Lister>(lister: &L, scope: Scope<'_>, prefix: &mut Vec<u8>, out: &mut Listing<L::Meta>) {
    let mut entries = match lister.entries(prefix) {
        Ok(entries) => entries,
        // A directory removed during the walk holds nothing; a missing root is an error.
        Err(error) if error.kind() == io::ErrorKind::NotFound && !prefix.is_empty() => return,
        Err(error) => {
            out.unreadable.push(Unreadable { path: String::from_utf8_lossy(prefix).into_owned(), error });
            return;
        }
    };
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (name, kind, meta) in entries {
        if prefix.is_empty() {
            if is_internal_name(&name) {
                continue;
            }
            if let Scope::Under(tops) = scope
                && !tops.iter().any(|top| name.as_bytes() == top.as_bytes())
            {
                continue;
            }
        }
        let kept = prefix.len();
        if !prefix.is_empty() {
            prefix.push(b'/');
        }
        prefix.extend_from_slice(name.as_bytes());
        let skip = |out: &mut Listing<L::Meta>, path: &[u8], reason| {
            if let Ok(path) = std::str::from_utf8(path)
                && !path.split('/').any(is_hidden_component)
            {
                out.skipped.push(Skipped { path: path.to_owned(), reason });
            }
        };
        match kind {
            Some(FileKind::File) => {
                if let Some(meta) = meta {
                    out.files.push(ListedFile { class: classify(prefix), path: prefix.clone(), meta });
                }
            }
            Some(FileKind::Dir) => {
                if is_markdown_dir(prefix) {
                    skip(out, prefix, SkipReason::MarkdownDir);
                }
                walk(lister, scope, prefix, out);
            }
            Some(FileKind::Symlink) => skip(out, prefix, SkipReason::Symlink),
            Some(FileKind::Other) => skip(out, prefix, SkipReason::Special),
            None => {}
        }
        prefix.truncate(kept);
    }
}

/// Whether a directory's path would make it a topic or archive if it were a file.
fn is_markdown_dir(path: &[u8]) -> bool {
    matches!(classify(path), FileClass::Topic | FileClass::Source)
}

#[cfg(test)]
mod tests;
