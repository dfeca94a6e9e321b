//! The read-only view of `sources/` that citations resolve against (spec 01 §6.5,
//! §3.4), and a resolver that reads and scans each distinct archive once.
//!
//! This crate does no I/O: a [`SourceLookup`] hands it file bytes. The resolver keeps,
//! per file, the anchor → source id map of its valid v2 frames (or, for a legacy or
//! benchmark file, its `<a id>` anchors and runtime header pairs).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;

use scriptorium_archive_format::{
    TrustState, is_v2_source_path, is_valid_v2_source_id, legacy_location, parse_bytes, source_anchor, split_source_id,
    v2_location,
};

use crate::hash::{FastMap, FastSet};
use crate::paths::{dirname, join_normalized, relpath};
use crate::text::strip;

/// Read access to source archives by workspace-relative path (`sources/…`).
///
/// Implementations own the file-system policy: a real workspace returns `Ok(None)` for
/// a missing file and for any path that reaches a file through a symbolic link.
pub trait SourceLookup {
    /// The bytes of the file at `path`, or `Ok(None)` when there is none.
    fn read_source(&self, path: &str) -> std::io::Result<Option<Vec<u8>>>;
}

impl<T: SourceLookup + ?Sized> SourceLookup for &T {
    fn read_source(&self, path: &str) -> std::io::Result<Option<Vec<u8>>> {
        (**self).read_source(path)
    }
}

/// Source files held in memory, keyed by workspace-relative path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemorySources {
    files: BTreeMap<String, Vec<u8>>,
}

impl MemorySources {
    /// No source files at all.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add or replace the file at `path` (for example `sources/D1.md`).
    pub fn insert(&mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) {
        self.files.insert(path.into(), bytes.into());
    }
}

impl<P: Into<String>, B: Into<Vec<u8>>> FromIterator<(P, B)> for MemorySources {
    fn from_iter<I: IntoIterator<Item = (P, B)>>(iter: I) -> Self {
        MemorySources { files: iter.into_iter().map(|(p, b)| (p.into(), b.into())).collect() }
    }
}

impl SourceLookup for MemorySources {
    fn read_source(&self, path: &str) -> std::io::Result<Option<Vec<u8>>> {
        Ok(self.files.get(path).cloned())
    }
}

/// A resolved link target: its source id, and whether the target text is already the
/// canonical relative link to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Target {
    pub(crate) id: String,
    pub(crate) canonical: bool,
}

/// A source file the lookup could not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceReadError {
    /// The workspace-relative path.
    pub path: String,
    /// The I/O error, as text.
    pub message: String,
}

impl std::fmt::Display for SourceReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot read {}: {}", self.path, self.message)
    }
}

impl std::error::Error for SourceReadError {}

/// What one source file offers to citation resolution.
#[derive(Debug)]
enum SourceFile {
    Missing,
    Unreadable(String),
    /// A v2 archive: anchor → id, and id → (anchor, trust), of its valid frames.
    V2 {
        by_anchor: FastMap<String, String>,
        frames: FastMap<String, (String, TrustState)>,
    },
    /// Any other file: every `<a id="X"></a>` anchor, and runtime header pairs
    /// (`<a id>` line followed by a `source-id` line) whose legacy location is this file.
    Plain {
        anchors: FastSet<String>,
        pairs: FastMap<String, String>,
    },
}

/// Resolves citation targets and source ids against a [`SourceLookup`], reading each
/// distinct file at most once.
///
/// Invariant: the cache is filled lazily and never invalidated; build a new resolver
/// when the sources change. Not `Sync` (interior mutability through `RefCell`).
#[derive(Debug)]
pub struct SourceResolver<L> {
    lookup: L,
    files: RefCell<FastMap<String, Arc<SourceFile>>>,
    /// Resolved targets per topic directory: many definitions repeat the same link.
    targets: RefCell<FastMap<String, FastMap<String, Option<Target>>>>,
    /// Canonical relative links per topic directory and source id.
    links: RefCell<FastMap<String, FastMap<String, Option<String>>>>,
}

impl<L: SourceLookup> SourceResolver<L> {
    /// A resolver over `lookup` with an empty cache.
    pub fn new(lookup: L) -> Self {
        SourceResolver {
            lookup,
            files: RefCell::new(FastMap::default()),
            targets: RefCell::new(FastMap::default()),
            links: RefCell::new(FastMap::default()),
        }
    }

    /// The lookup this resolver reads from.
    pub fn lookup(&self) -> &L {
        &self.lookup
    }

    fn file(&self, path: &str) -> Result<Arc<SourceFile>, SourceReadError> {
        if let Some(file) = self.files.borrow().get(path) {
            return checked(path, Arc::clone(file));
        }
        let file = Arc::new(match self.lookup.read_source(path) {
            Ok(None) => SourceFile::Missing,
            Ok(Some(bytes)) => scan_file(path, &bytes),
            Err(e) => SourceFile::Unreadable(e.to_string()),
        });
        self.files.borrow_mut().insert(path.to_owned(), Arc::clone(&file));
        checked(path, file)
    }

    /// Resolve a definition link target written in the topic file `topic_path`
    /// (workspace-relative) to a source id, following spec 01 §6.5:
    /// a plain handle is the id itself; `path#anchor` must name a valid frame (v2) or a
    /// runtime header pair (legacy); a final `#d<c>-<t>` fragment means `D<c>:<t>`.
    /// `Ok(None)` means the target is invalid.
    pub fn resolve_target(&self, topic_path: &str, target: &str) -> Result<Option<String>, SourceReadError> {
        Ok(self.resolve_with_link(topic_path, target)?.map(|resolved| resolved.id))
    }

    /// [`Self::resolve_target`], also telling whether `target` already is the
    /// canonical relative link of the id it resolves to (memoized per directory).
    pub(crate) fn resolve_with_link(&self, topic_path: &str, target: &str) -> Result<Option<Target>, SourceReadError> {
        let dir = dirname(topic_path);
        if let Some(known) = self.targets.borrow().get(dir).and_then(|targets| targets.get(target)) {
            return Ok(known.clone());
        }
        let resolved = match self.resolve_uncached(dir, target)? {
            // Found by anchor in the archive where the id lives: `locate(id)` is that
            // file and anchor, so the canonical link is known without building it.
            Some((id, Some((file, anchor)))) if v2_location(&id).as_deref() == Some(file.as_str()) => {
                let relative = relpath(&file, dir);
                let canonical =
                    target.strip_prefix(relative.as_str()).and_then(|r| r.strip_prefix('#')) == Some(anchor);
                Some(Target { id, canonical })
            }
            Some((id, _)) => {
                let canonical = self.relative_link(topic_path, &id)?.is_some_and(|link| link == target);
                Some(Target { id, canonical })
            }
            None => None,
        };
        let mut cache = self.targets.borrow_mut();
        let targets = match cache.get_mut(dir) {
            Some(targets) => targets,
            None => cache.entry(dir.to_owned()).or_default(),
        };
        targets.insert(target.to_owned(), resolved.clone());
        Ok(resolved)
    }

    /// Whether `target` resolves (`None` when not) and is already the canonical relative
    /// link of its id; [`Self::resolve_with_link`] without copying a cached id.
    pub(crate) fn is_canonical(&self, topic_path: &str, target: &str) -> Result<Option<bool>, SourceReadError> {
        let dir = dirname(topic_path);
        if let Some(known) = self.targets.borrow().get(dir).and_then(|targets| targets.get(target)) {
            return Ok(known.as_ref().map(|resolved| resolved.canonical));
        }
        Ok(self.resolve_with_link(topic_path, target)?.map(|resolved| resolved.canonical))
    }

    /// The id `target` resolves to, with the archive path and anchor when a v2
    /// archive's frame anchor gave it.
    fn resolve_uncached<'t>(
        &self,
        dir: &str,
        target: &'t str,
    ) -> Result<Option<(String, Option<ArchiveAnchor<'t>>)>, SourceReadError> {
        let target = strip(target);
        if is_plain_handle(target) {
            return Ok(Some((target.to_owned(), None)));
        }
        let (path, fragment) = target.split_once('#').unwrap_or((target, ""));
        if !path.is_empty() && !path.starts_with('/') {
            let joined = join_normalized(dir, path);
            if is_under_sources(&joined) {
                let found = match &*self.file(&joined)? {
                    SourceFile::V2 { by_anchor, .. } => by_anchor.get(fragment).cloned().map(|id| (id, true)),
                    SourceFile::Plain { pairs, .. } => pairs.get(fragment).cloned().map(|id| (id, false)),
                    SourceFile::Missing | SourceFile::Unreadable(_) => None,
                };
                if let Some((id, v2)) = found {
                    return Ok(Some((id, v2.then_some((joined, fragment)))));
                }
            }
        }
        Ok(d_fragment(target).map(|id| (id, None)))
    }

    /// Where a source id lives: the v2 archive when it holds a valid frame for it,
    /// else the legacy archive when that contains its anchor tag; `D<c>:<t>` lives at
    /// `sources/D<c>.md#d<c>-<t>` when that anchor tag exists. Returns `(path, anchor)`.
    pub fn locate(&self, id: &str) -> Result<Option<(String, String)>, SourceReadError> {
        if let Some((conversation, turn)) = split_d_handle(id) {
            let path = format!("sources/D{conversation}.md");
            let anchor = format!("d{conversation}-{turn}");
            return Ok(self.has_anchor(&path, &anchor)?.then_some((path, anchor)));
        }
        if split_source_id(id).is_none() {
            return Ok(None);
        }
        if let Some(path) = v2_location(id)
            && let SourceFile::V2 { frames, .. } = &*self.file(&path)?
            && let Some((anchor, _)) = frames.get(id)
        {
            let anchor = anchor.clone();
            return Ok(Some((path, anchor)));
        }
        if let Some(path) = legacy_location(id) {
            let anchor = source_anchor(id);
            if self.has_anchor(&path, &anchor)? {
                return Ok(Some((path, anchor)));
            }
        }
        Ok(None)
    }

    /// Whether a source id exists (spec 01 §3.4).
    pub fn exists(&self, id: &str) -> Result<bool, SourceReadError> {
        Ok(self.locate(id)?.is_some())
    }

    /// The canonical relative link from the topic file `topic_path` to the source id:
    /// `../…/sources/<p>/_v2/<t>.md#source-<16 hex>` (or the legacy / `D` location).
    pub fn relative_link(&self, topic_path: &str, id: &str) -> Result<Option<String>, SourceReadError> {
        let dir = dirname(topic_path);
        if let Some(known) = self.links.borrow().get(dir).and_then(|links| links.get(id)) {
            return Ok(known.clone());
        }
        let link = self.locate(id)?.map(|(path, anchor)| format!("{}#{anchor}", relpath(&path, dir)));
        let mut cache = self.links.borrow_mut();
        let links = match cache.get_mut(dir) {
            Some(links) => links,
            None => cache.entry(dir.to_owned()).or_default(),
        };
        links.insert(id.to_owned(), link.clone());
        Ok(link)
    }

    /// The trust state of the valid v2 frame for `id` (absent metadata counts as
    /// trusted, decision Q7), or `None` when no v2 frame holds it.
    pub fn trust(&self, id: &str) -> Result<Option<TrustState>, SourceReadError> {
        let Some(path) = v2_location(id) else { return Ok(None) };
        Ok(match &*self.file(&path)? {
            SourceFile::V2 { frames, .. } => frames.get(id).map(|(_, trust)| *trust),
            _ => None,
        })
    }

    fn has_anchor(&self, path: &str, anchor: &str) -> Result<bool, SourceReadError> {
        Ok(match &*self.file(path)? {
            SourceFile::Plain { anchors, .. } => anchors.contains(anchor),
            SourceFile::V2 { by_anchor, .. } => by_anchor.contains_key(anchor),
            SourceFile::Missing | SourceFile::Unreadable(_) => false,
        })
    }
}

/// A v2 archive path and a frame anchor in it.
type ArchiveAnchor<'t> = (String, &'t str);

fn checked(path: &str, file: Arc<SourceFile>) -> Result<Arc<SourceFile>, SourceReadError> {
    match &*file {
        SourceFile::Unreadable(message) => Err(SourceReadError { path: path.to_owned(), message: message.clone() }),
        _ => Ok(file),
    }
}

/// `D\d+:\d+` (ASCII digits): the benchmark handle's conversation and turn.
pub(crate) fn split_d_handle(id: &str) -> Option<(&str, &str)> {
    let (conversation, turn) = id.strip_prefix('D')?.split_once(':')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(conversation) && digits(turn)).then_some((conversation, turn))
}

/// A plain source handle: `D\d+:\d+`, or a valid v2 source id without `#`.
pub(crate) fn is_plain_handle(target: &str) -> bool {
    split_d_handle(target).is_some() || (!target.contains('#') && is_valid_v2_source_id(target))
}

/// A final `#d<c>-<t>` fragment (case-insensitive `d`) as `D<c>:<t>`.
fn d_fragment(target: &str) -> Option<String> {
    let (_, fragment) = target.rsplit_once('#')?;
    let rest = fragment.strip_prefix(['d', 'D'])?;
    let (conversation, turn) = rest.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(conversation) && digits(turn)).then(|| format!("D{conversation}:{turn}"))
}

fn is_under_sources(path: &str) -> bool {
    let mut parts = path.split('/');
    parts.next() == Some("sources") && parts.next().is_some() && !path.split('/').any(|p| p == "..")
}

fn scan_file(path: &str, bytes: &[u8]) -> SourceFile {
    if is_v2_source_path(path) {
        let parsed = parse_bytes(bytes, path);
        let mut by_anchor = FastMap::with_capacity_and_hasher(parsed.frames.len(), Default::default());
        let mut frames = FastMap::with_capacity_and_hasher(parsed.frames.len(), Default::default());
        for frame in &parsed.frames {
            let anchor = source_anchor(frame.source_id);
            by_anchor.insert(anchor.clone(), frame.source_id.to_owned());
            frames.insert(frame.source_id.to_owned(), (anchor, frame.effective_meta().trust_state));
        }
        return SourceFile::V2 { by_anchor, frames };
    }
    let text = String::from_utf8_lossy(bytes);
    let mut anchors = FastSet::default();
    let mut pairs = FastMap::default();
    let mut previous_anchor: Option<&str> = None;
    for line in text.split('\n') {
        let line = strip(line);
        if let Some(anchor) = previous_anchor.take()
            && let Some(id) = source_id_comment(line)
            && legacy_location(id).as_deref() == Some(path)
            && source_anchor(id) == anchor
        {
            pairs.insert(anchor.to_owned(), id.to_owned());
        }
        previous_anchor = anchor_line(line);
    }
    let mut rest: &str = &text;
    while let Some(pos) = rest.find("<a id=\"") {
        let after = rest.get(pos + 7..).unwrap_or_default();
        if let Some(end) = after.find('"')
            && after.get(end..).is_some_and(|tail| tail.starts_with("\"></a>"))
        {
            anchors.insert(after.get(..end).unwrap_or_default().to_owned());
        }
        rest = after;
    }
    SourceFile::Plain { anchors, pairs }
}

/// A whole (stripped) line `<a id="X"></a>`.
fn anchor_line(line: &str) -> Option<&str> {
    let inner = line.strip_prefix("<a id=\"")?.strip_suffix("\"></a>")?;
    (!inner.is_empty() && !inner.contains('"')).then_some(inner)
}

/// A whole (stripped) line `<!-- source-id:Y -->`, whitespace allowed inside.
fn source_id_comment(line: &str) -> Option<&str> {
    let inner = line.strip_prefix("<!--")?.strip_suffix("-->")?;
    let id = strip(strip(inner).strip_prefix("source-id:")?);
    (!id.is_empty()).then_some(id)
}

#[cfg(test)]
mod tests;
