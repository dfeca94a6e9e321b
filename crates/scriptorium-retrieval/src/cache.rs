//! The persistent, incremental index (decision Q6, spec 02 §6.6):
//! `.scriptorium/retrieval-index.bin` in our own versioned format.
//!
//! [`Index::open`] loads the cache, compares every indexable file's stat fingerprint
//! (size, mtime, ctime, inode) with the one stored, re-reads only the files that
//! differ, drops the ones that vanished, resolves trust afresh, and saves the cache
//! again when anything changed. So an index saved at one revision is never used for a
//! later one without that refresh.
//!
//! # Invariants
//!
//! - The cache is never trusted blindly: a wrong magic, a version outside
//!   [`CACHE_OLDEST_SUPPORTED_VERSION`]`..=`[`CACHE_FORMAT_VERSION`], a length or
//!   checksum mismatch, or any decoding error ignores it wholesale and rebuilds.
//! - Trust and v2 preference are never stored: they are resolved after every load.
//! - The cache is streamed both ways (a chunk of bytes at a time, checksummed as it
//!   goes), so the index is never in memory twice, as structures and as bytes; a
//!   loaded index is used only once the checksum of every byte matched.
//! - Opening overlaps its independent steps, so that it takes about as long as the
//!   longest of them: the payload's two parts, events and postings, are decoded at once,
//!   each read through the one open file at its own position (`codec`, `index::snapshot`),
//!   while another thread lists and stats the workspace files.
//! - A reader never sees a half-written cache: the writer writes a temporary file in
//!   the same folder, syncs it and renames it over the old one. Concurrent writers each
//!   write a whole snapshot; the last rename wins, and a snapshot of an older revision
//!   is refreshed by the next open because its fingerprints no longer match.
//! - A file changed less than two seconds before it was read gets no fingerprint
//!   (re-read next time): within the file system's timestamp granularity a rewrite of
//!   the same size could keep its stat ("racily clean", as Git calls it).
//! - When a source file changes, appears or vanishes, every topic file is re-read too:
//!   a topic's citations resolve against source files, so its events depend on them.
//! - Source text is not cached or held: an event whose content is the cleaned text of a
//!   byte range of its file keeps that range and the content's checksum, and a result
//!   row reads it back (`index::stored`). A file changed behind the index fails that
//!   check and the row is an error (refresh), never another text; bytes appended after
//!   the range leave it readable.
//! - The reference's `.scriptorium-bm25.json` is never read or written.
//! - Failing to save is not an error of [`Index::open`]: the index in memory is
//!   correct, and the next open rebuilds; [`OpenReport::save_error`] says why.
//! - A long-lived process keeps its index and calls [`Index::refresh`] (stat every
//!   file, re-read the changed ones; no write) before queries and [`Index::save`] when
//!   it likes; [`Index::open`] is load + refresh + save for one-shot callers.
//! - Files are parsed on several threads when many changed (a rebuild); each thread
//!   resolves citations itself, so the result does not depend on the split.

pub(crate) mod codec;
pub(crate) mod fingerprint;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use scriptorium_topic_markdown::SourceResolver;
use scriptorium_transaction::{RealVfs, WorkspaceSources};

#[cfg(test)]
use self::codec::payload_checksum;
use self::codec::{PART_PREFIX, Reader, Writer, combined};
use self::fingerprint::{Fingerprint, nanos};
use crate::collect::file_events;
use crate::error::{Error, ErrorCode};
use crate::event::{FileKind, MemoryEvent};
use crate::index::stored::{OnDisk, locate_records};
use crate::index::{FileChange, Index};
use crate::scan::{ListedFile, WorkspaceFile, list_files, read_failed};

/// The cache format this build writes. Bump it whenever the layout or the meaning of
/// any stored field (including what the parsers put into events) changes.
pub const CACHE_FORMAT_VERSION: u32 = 4;
/// The oldest cache format this build still reads; anything older is rebuilt.
pub const CACHE_OLDEST_SUPPORTED_VERSION: u32 = 4;
/// The cache file, relative to the workspace root (inside the runtime directory).
pub const CACHE_PATH: &str = ".scriptorium/retrieval-index.bin";

/// The runtime directory that holds the cache.
const RUNTIME_DIR: &str = ".scriptorium";
const CACHE_NAME: &str = "retrieval-index.bin";
/// The first bytes of every cache file.
const MAGIC: &[u8; 8] = b"SCRIDX\r\n";
/// Magic, version (u32 LE), payload length (u64 LE), checksum (u64 LE).
const HEADER_LEN: usize = 8 + 4 + 8 + 8;

/// What happened to the cache file when an index was opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheState {
    /// It was loaded and refreshed.
    Loaded,
    /// There was none (or the runtime directory is not a real folder): built from scratch.
    Missing,
    /// It was ignored and the index built from scratch; the reason is for humans.
    Rejected(String),
}

/// What [`Index::open_with_report`] or [`Index::refresh`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenReport {
    /// Whether the cache was used (`Loaded` for a refresh of an open index).
    pub cache: CacheState,
    /// Files kept without reading them.
    pub reused_files: usize,
    /// Files read and parsed (all of them when the cache was not used).
    pub read_files: usize,
    /// Indexed files that no longer exist.
    pub removed_files: usize,
    /// Whether a new cache file was written.
    pub saved: bool,
    /// Why saving failed, if it did.
    pub save_error: Option<String>,
}

/// The files on disk as an index last saw them: each file's fingerprint (`None`: re-read
/// on the next refresh), and whether the cache file is behind the index.
#[derive(Clone, Debug, Default)]
pub(crate) struct DiskState {
    pub(crate) fingerprints: BTreeMap<String, Option<Fingerprint>>,
    pub(crate) unsaved: bool,
}

impl Index {
    /// The index of the workspace at `root`, through the persistent cache at
    /// [`CACHE_PATH`](crate::CACHE_PATH): load, refresh by fingerprints, save if changed.
    ///
    /// Errors: [`ErrorCode::ReadFailed`](crate::ErrorCode::ReadFailed) when a folder or
    /// an indexable file cannot be read. A bad or unwritable cache is never an error.
    pub fn open(root: &Path) -> Result<Index, Error> {
        Self::open_with_report(root).map(|(index, _)| index)
    }

    /// [`Index::open`], also saying what it did with the cache.
    pub fn open_with_report(root: &Path) -> Result<(Index, OpenReport), Error> {
        // The files are listed and stat'ed while the cache loads: neither needs the other.
        let ((loaded, cache), listing) = std::thread::scope(|scope| {
            let listing = scope.spawn(|| Listing::take(root));
            let loaded = match load(root) {
                Ok(index) => (index, CacheState::Loaded),
                Err(state) => (Index::new(), state),
            };
            // A panic while listing is a bug: pass it on unchanged rather than relabel it.
            (loaded, listing.join().unwrap_or_else(|bug| std::panic::resume_unwind(bug)))
        });
        let mut index = loaded;
        let mut report = index.refresh_from(root, listing?)?;
        report.cache = cache;
        if index.disk.unsaved {
            match index.save(root) {
                Ok(()) => report.saved = true,
                Err(err) => report.save_error = Some(err.message().to_owned()),
            }
        }
        Ok((index, report))
    }

    /// Bring an open index up to date with the files of the workspace at `root`: re-read
    /// the files whose fingerprints changed (every file, for an index not read from
    /// disk), drop the vanished ones. It does not write the cache: a long-lived process
    /// refreshes before each query and calls [`Index::save`] when it likes.
    ///
    /// Errors: [`ErrorCode::ReadFailed`](crate::ErrorCode::ReadFailed).
    pub fn refresh(&mut self, root: &Path) -> Result<OpenReport, Error> {
        self.refresh_from(root, Listing::take(root)?)
    }

    /// [`Index::refresh`] with the files as `listing` found them.
    fn refresh_from(&mut self, root: &Path, listing: Listing) -> Result<OpenReport, Error> {
        let Listing { files: listed, read_at } = listing;
        let mut report = OpenReport {
            cache: CacheState::Loaded,
            reused_files: 0,
            read_files: 0,
            removed_files: 0,
            saved: false,
            save_error: None,
        };
        // Taken before any file is read, so a write racing the read shows as a change next time.
        let current: BTreeMap<String, Option<Fingerprint>> = listed
            .iter()
            .map(|file| {
                let print = Fingerprint::of(&file.meta);
                (file.path.clone(), Some(print).filter(|print| !print.is_racy(read_at)))
            })
            .collect();
        let stored = &self.disk.fingerprints;
        let removed: Vec<String> = stored.keys().filter(|path| !current.contains_key(*path)).cloned().collect();
        let mut stale: Vec<&ListedFile> = listed
            .iter()
            .filter(|file| stored.get(&file.path).copied().flatten() != Some(Fingerprint::of(&file.meta)))
            .collect();
        let sources_moved = removed.iter().any(|path| path.starts_with("sources/"))
            || stale.iter().any(|file| file.path.starts_with("sources/"));
        if sources_moved {
            let topics = listed.iter().filter(|file| FileKind::of(&file.path) == Some(FileKind::Topic));
            stale.extend(topics);
            stale.sort_by(|a, b| a.path.cmp(&b.path));
            stale.dedup_by(|a, b| a.path == b.path);
        }
        report.removed_files = removed.len();
        report.read_files = stale.len();
        report.reused_files = listed.len() - stale.len();
        let prints_moved = *stored != current;
        if !removed.is_empty() || !stale.is_empty() {
            self.disk.unsaved = true;
            removed.into_iter().for_each(|path| self.apply_one(FileChange::Remove { path }));
            // In batches, so that only one batch of parsed events is held at a time
            // beside the compact index (a rebuild parses every file).
            for batch in stale.chunks(PARSE_BATCH_FILES) {
                match parse_files(root, batch) {
                    Ok(changes) => changes.into_iter().for_each(|change| match change {
                        Parsed::Read { path, events, on_disk } => self.upsert_on_disk(path, events, on_disk),
                        Parsed::Gone { path } => self.apply_one(FileChange::Remove { path }),
                    }),
                    Err(err) => {
                        // The files applied so far keep their old fingerprints: re-read next time.
                        self.finish_changes();
                        return Err(err);
                    }
                }
            }
            self.finish_changes();
        }
        self.disk.unsaved |= prints_moved;
        self.disk.fingerprints = current;
        Ok(report)
    }

    /// Write the cache of this index into `root`'s runtime directory (temporary file,
    /// sync, rename), if it changed since it was loaded or last saved.
    ///
    /// Errors: [`ErrorCode::CacheWriteFailed`](crate::ErrorCode::CacheWriteFailed).
    pub fn save(&mut self, root: &Path) -> Result<(), Error> {
        if !self.disk.unsaved {
            return Ok(());
        }
        let prints: BTreeMap<String, Fingerprint> =
            self.disk.fingerprints.iter().filter_map(|(path, print)| Some((path.clone(), (*print)?))).collect();
        save(root, |out| self.encode_into(&prints, out)).map_err(|err| {
            Error::new(ErrorCode::CacheWriteFailed, format!("cannot write {CACHE_PATH}: {err}")).with_source(err)
        })?;
        self.disk.unsaved = false;
        Ok(())
    }
}

/// The indexable files with their metadata, and when the listing started (a file changed
/// less than two seconds before is "racily clean").
struct Listing {
    files: Vec<ListedFile>,
    read_at: i64,
}

impl Listing {
    fn take(root: &Path) -> Result<Listing, Error> {
        let read_at = nanos(SystemTime::now());
        Ok(Listing { files: list_files(root)?, read_at })
    }
}

/// Files parsed before their events join the index (a 64 KB archive holds ~150 events).
const PARSE_BATCH_FILES: usize = 256;
/// Files below this count are parsed on the calling thread: a thread costs more than it saves.
const PARALLEL_MIN_FILES: usize = 16;
/// At most this many parsing threads.
const MAX_THREADS: usize = 8;

/// A listed file, read and parsed.
enum Parsed {
    /// Its events, sorted by (line, event id), and where their contents are in it.
    Read { path: String, events: Vec<MemoryEvent>, on_disk: OnDisk },
    /// It vanished since the listing.
    Gone { path: String },
}

/// Read and parse `files` into changes, in their order, on several threads when there
/// are many (each thread resolves citations through its own resolver, as the resolver
/// is single-threaded; all read the same files, so the results are the same).
fn parse_files(root: &Path, files: &[&ListedFile]) -> Result<Vec<Parsed>, Error> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(MAX_THREADS);
    if threads < 2 || files.len() < PARALLEL_MIN_FILES {
        return parse_chunk(root, files);
    }
    let chunk = files.len().div_ceil(threads);
    let results: Vec<Result<Vec<Parsed>, Error>> = std::thread::scope(|scope| {
        let handles: Vec<_> = files.chunks(chunk).map(|part| scope.spawn(move || parse_chunk(root, part))).collect();
        // A panic in a parser is a bug: pass it on unchanged rather than relabel it.
        handles.into_iter().map(|handle| handle.join().unwrap_or_else(|bug| std::panic::resume_unwind(bug))).collect()
    });
    let mut changes = Vec::with_capacity(files.len());
    for result in results {
        changes.extend(result?);
    }
    Ok(changes)
}

fn parse_chunk(root: &Path, files: &[&ListedFile]) -> Result<Vec<Parsed>, Error> {
    let vfs = RealVfs::new(root);
    let resolver = SourceResolver::new(WorkspaceSources::new(&vfs));
    files
        .iter()
        .map(|file| {
            Ok(match read_file(file)? {
                Some(read) => {
                    let mut events = file_events(&read.path, &read.bytes, &resolver);
                    // The order the index keeps them in, so that the offsets line up.
                    events.sort_by(|a, b| (a.line, &a.event_id).cmp(&(b.line, &b.event_id)));
                    let records = locate_records(&read.path, &read.bytes, &events);
                    Parsed::Read { events, path: read.path, on_disk: OnDisk { disk: file.disk.clone(), records } }
                }
                None => Parsed::Gone { path: file.path.clone() },
            })
        })
        .collect()
}

/// The bytes of a listed file, or `None` when it vanished since the listing.
fn read_file(file: &ListedFile) -> Result<Option<WorkspaceFile>, Error> {
    match std::fs::read(&file.disk) {
        Ok(bytes) => Ok(Some(WorkspaceFile { path: file.path.clone(), bytes })),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(read_failed(&file.disk, err)),
    }
}

/// The runtime directory, if it is a real folder (never followed through a link).
fn runtime_dir(root: &Path) -> Option<PathBuf> {
    let dir = root.join(RUNTIME_DIR);
    std::fs::symlink_metadata(&dir).ok().filter(|meta| meta.is_dir()).map(|_| dir)
}

/// The cached index and its fingerprints, or why there is none to use.
fn load(root: &Path) -> Result<Index, CacheState> {
    let Some(dir) = runtime_dir(root) else { return Err(CacheState::Missing) };
    let path = dir.join(CACHE_NAME);
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return Err(CacheState::Rejected("not a regular file".into())),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Err(CacheState::Missing),
        Err(err) => return Err(CacheState::Rejected(format!("cannot read: {err}"))),
    }
    let cannot_read = |err: std::io::Error| CacheState::Rejected(format!("cannot read: {err}"));
    let mut file = std::fs::File::open(&path).map_err(cannot_read)?;
    let size = file.metadata().map_err(cannot_read)?.len();
    let mut header = [0u8; HEADER_LEN];
    if size < HEADER_LEN as u64 {
        return Err(CacheState::Rejected("shorter than its header".into()));
    }
    std::io::Read::read_exact(&mut file, &mut header).map_err(cannot_read)?;
    let payload_len = size - HEADER_LEN as u64;
    let stored_sum = check_header(&header, payload_len).map_err(CacheState::Rejected)?;
    let mut prefix = [0u8; PART_PREFIX];
    std::io::Read::read_exact(&mut file, &mut prefix).map_err(cannot_read)?;
    let first_len = u64::from_le_bytes(prefix);
    let second_len = payload_len.checked_sub(PART_PREFIX as u64).and_then(|rest| rest.checked_sub(first_len));
    let second_len = second_len.ok_or_else(|| CacheState::Rejected("part lengths do not match".into()))?;
    // The parts are read through one open file (never the path again, which a writer
    // may have renamed another file over), each at its own position.
    let first_at = (HEADER_LEN + PART_PREFIX) as u64;
    let (mut first, mut second) =
        (FileAt { file: &file, at: first_at }, FileAt { file: &file, at: first_at + first_len });
    let mut first = Reader::streaming(&mut first, first_len);
    let mut second = Reader::streaming(&mut second, second_len);
    // Decoded while read, but used only once the checksum of every byte matches.
    let decoded = Index::decode(&mut first, &mut second, |path| Some(root.join(path)));
    let sums = first.checksum().zip(second.checksum());
    if sums.map(|(first, second)| combined(&[first, second])) != Some(stored_sum) {
        return Err(CacheState::Rejected("checksum does not match".into()));
    }
    let (mut index, fingerprints) = decoded.map_err(|damage| CacheState::Rejected(damage.0.into()))?;
    index.disk = DiskState { fingerprints, unsaved: false };
    Ok(index)
}

/// A reader of one open file from position `at` on, which does not move the file's own
/// position: several can read one file at once.
struct FileAt<'a> {
    file: &'a std::fs::File,
    at: u64,
}

impl std::io::Read for FileAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        #[cfg(unix)]
        let read = std::os::unix::fs::FileExt::read_at(self.file, buf, self.at)?;
        #[cfg(windows)]
        let read = std::os::windows::fs::FileExt::seek_read(self.file, buf, self.at)?;
        #[cfg(not(any(unix, windows)))]
        let read = {
            let _ = buf;
            return Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "no positional reads here"));
        };
        self.at += read as u64;
        Ok(read)
    }
}

/// The checksum a cache header states, after checking its magic, version and the
/// payload length (`payload_len`: the bytes after the header).
fn check_header(header: &[u8], payload_len: u64) -> Result<u64, String> {
    let header = header.get(..HEADER_LEN).ok_or("shorter than its header")?;
    let (magic, rest) = header.split_at(8);
    if magic != MAGIC {
        return Err("not a Scriptorium index cache".into());
    }
    let word = |at: usize, len: usize| -> u64 {
        rest.get(at..at + len).map_or(0, |b| b.iter().rev().fold(0u64, |acc, &x| (acc << 8) | u64::from(x)))
    };
    let version = word(0, 4);
    if !(u64::from(CACHE_OLDEST_SUPPORTED_VERSION)..=u64::from(CACHE_FORMAT_VERSION)).contains(&version) {
        return Err(format!("format version {version} is not readable by this build"));
    }
    if payload_len != word(4, 8) {
        return Err("length does not match (truncated or extended)".into());
    }
    Ok(word(12, 8))
}

/// The payload of a cache file after checking magic, version, length and checksum.
#[cfg(test)]
pub(crate) fn unframe(bytes: &[u8]) -> Result<&[u8], String> {
    let payload = bytes.get(HEADER_LEN..).ok_or("shorter than its header")?;
    if payload.len() < PART_PREFIX {
        return Err("shorter than its header".into());
    }
    if payload_checksum(payload) != check_header(bytes, payload.len() as u64)? {
        return Err("checksum does not match".into());
    }
    Ok(payload)
}

/// The header of a cache file whose payload has `len` bytes and `checksum`.
fn header(len: u64, checksum: u64) -> [u8; HEADER_LEN] {
    let mut out = [0u8; HEADER_LEN];
    let parts: [&[u8]; 4] = [MAGIC, &CACHE_FORMAT_VERSION.to_le_bytes(), &len.to_le_bytes(), &checksum.to_le_bytes()];
    for (cell, byte) in out.iter_mut().zip(parts.into_iter().flatten()) {
        *cell = *byte;
    }
    out
}

/// A whole cache file for `payload`.
#[cfg(test)]
pub(crate) fn frame(payload: &[u8]) -> Vec<u8> {
    [&header(payload.len() as u64, payload_checksum(payload))[..], payload].concat()
}

/// Write the cache atomically: a unique temporary file in the runtime directory,
/// synced, renamed over the old cache, then the directory synced.
fn save(root: &Path, encode: impl FnOnce(&mut Writer)) -> std::io::Result<()> {
    let dir = match runtime_dir(root) {
        Some(dir) => dir,
        None => {
            let dir = root.join(RUNTIME_DIR);
            if std::fs::symlink_metadata(&dir).is_ok() {
                return Err(std::io::Error::other(format!("{} is not a folder", dir.display())));
            }
            create_private_dir(&dir)?;
            dir
        }
    };
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
    let temp = dir.join(format!(".{CACHE_NAME}.{}-{}-{unique}.tmp", std::process::id(), nanos(SystemTime::now())));
    let result = write_synced(&temp, encode).and_then(|()| std::fs::rename(&temp, dir.join(CACHE_NAME)));
    if result.is_err() {
        // Best effort: a leftover temporary file is harmless, never read.
        let _ = std::fs::remove_file(&temp);
    }
    result?;
    sync_dir(&dir);
    Ok(())
}

/// Stream the payload `encode` writes (in two parts) after a placeholder header and
/// part-1 length, then write the real ones (known only at the end) and sync.
fn write_synced(path: &Path, encode: impl FnOnce(&mut Writer)) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(&[0u8; HEADER_LEN + PART_PREFIX])?;
    let mut out = Writer::to_file(file);
    encode(&mut out);
    let (file, parts) = out.finish()?;
    let mut file = file.ok_or_else(|| std::io::Error::other("the cache writer lost its file"))?;
    let [(first_len, first_sum), (second_len, second_sum)] = parts[..] else {
        return Err(std::io::Error::other("the cache encoding is not two parts"));
    };
    let len = PART_PREFIX as u64 + first_len + second_len;
    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(0))?;
    file.write_all(&header(len, combined(&[first_sum, second_sum])))?;
    file.write_all(&first_len.to_le_bytes())?;
    file.sync_all()
}

/// The runtime directory is private (decision "file modes": 0700).
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(dir) {
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        other => other,
    }
}

/// Make the rename durable. Best effort: not every platform can sync a directory, and
/// a lost rename only costs a rebuild.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(handle) = std::fs::File::open(dir) {
        let _ = handle.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}
