//! How the index holds an event: its id and content in one text buffer per file, the
//! fields that many events share (headings, speaker, metadata, dates) interned behind
//! one pointer, and a [`MemoryEvent`] rebuilt only for the rows a caller asks for.
//!
//! A `MemoryEvent` costs ~350 bytes of struct and a dozen allocations; at 1M events
//! that was most of the index's memory, while a query reads only the k result rows.

use std::borrow::Cow;
use std::collections::HashSet;
use std::hash::Hash;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use scriptorium_archive_format::text::{is_space, split_whitespace};
use scriptorium_archive_format::{AuthorityTier, clean_retrieval_text};

use crate::cache::codec::checksum;
use crate::error::{Error, ErrorCode};
use crate::event::{FileKind, MemoryEvent, Trust};
use crate::filter::event_speakers;
use crate::fxhash::FxBuildHasher;

/// The fields a thread's events mostly share: headings, speaker and frame metadata.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Context {
    pub(crate) headings: Vec<String>,
    pub(crate) speaker_id: String,
    pub(crate) speaker_display: String,
    pub(crate) speaker_label: String,
    pub(crate) speaker_kind: String,
    pub(crate) principal_id: String,
    pub(crate) visibility: Option<String>,
    /// Casefolded speaker fields (sources only), for the speaker filter.
    pub(crate) speakers: Vec<String>,
}

impl Context {
    /// Whether `event` has this context (its speakers follow from the other fields and
    /// whether it is a source's, which contexts of sources with speakers show).
    fn holds(&self, event: &MemoryEvent) -> bool {
        self.speaker_id == event.speaker_id
            && self.speaker_display == event.speaker_display
            && self.speaker_label == event.speaker_label
            && self.speaker_kind == event.speaker_kind
            && self.principal_id == event.principal_id
            && self.visibility == event.visibility
            && self.headings == event.headings
            && self.speakers.is_empty() != (event.is_source() && has_speaker(event))
    }

    /// The casefolded speakers a source event with this context has (see [`event_speakers`]).
    pub(crate) fn source_speakers(&self) -> Vec<String> {
        let mut event = crate::event::topic_event(String::new(), "sources/", 0, Vec::new());
        event.speaker_id.clone_from(&self.speaker_id);
        event.speaker_display.clone_from(&self.speaker_display);
        event.speaker_label.clone_from(&self.speaker_label);
        event_speakers(&event)
    }
}

/// Whether a source event with these fields has casefolded speakers (see [`event_speakers`]).
fn has_speaker(event: &MemoryEvent) -> bool {
    !(event.speaker_id.is_empty() && event.speaker_display.is_empty() && event.speaker_label.is_empty())
}

/// An event's dates: many events share a day.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Dates {
    pub(crate) date: Option<String>,
    pub(crate) dates: Vec<String>,
}

/// An event's refs; most source events cite exactly themselves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refs {
    /// `[event_id]`.
    Own,
    /// Any other list (often empty).
    List(Box<[Box<str>]>),
}

/// What a file's events share: its path, one buffer holding every event's id (and the
/// content of the events whose content is not read back from disk), and the file on disk
/// that the other contents are read back from.
#[derive(Debug)]
pub(crate) struct FileText {
    pub(crate) path: Box<str>,
    text: Box<str>,
    disk: Option<PathBuf>,
}

/// The ids and contents of one file's events, as they are added.
#[derive(Debug, Default)]
pub(crate) struct TextArena {
    text: String,
}

/// Where an event's id and content sit: the id in its file's text, the content right
/// after it or, when it is a byte range of the file on disk, there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TextSpan {
    start: u32,
    id_len: u32,
    content_len: u32,
    on_disk: Option<DiskSpan>,
}

/// A content that is the cleaned text of the bytes at `offset` of its file on disk (the
/// span's length long), with the content's checksum: a file changed since it was indexed
/// can never pass off other text as the indexed one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DiskSpan {
    pub(crate) offset: u64,
    pub(crate) checksum: u32,
}

/// The checksum of a content read back from disk: 32 bits of its 64-bit checksum, since
/// it only has to tell a changed record from the indexed one, and it is stored per event.
fn content_checksum(content: &str) -> u32 {
    (checksum(content.as_bytes()) >> 32) as u32
}

/// Why an event's content could not be read back from its file.
#[derive(Debug)]
pub(crate) enum Unreadable {
    /// The file cannot be opened or read that far.
    Io(std::io::Error),
    /// The bytes there are no longer the indexed text.
    Changed,
}

impl Unreadable {
    /// The error a caller sees for an event of the file at workspace path `path`.
    pub(crate) fn into_error(self, path: &str) -> Error {
        match self {
            Unreadable::Io(err) => {
                Error::new(ErrorCode::ReadFailed, format!("cannot read back {path}: {err}")).with_source(err)
            }
            Unreadable::Changed => {
                Error::new(ErrorCode::ReadFailed, format!("{path} changed since it was indexed: refresh the index"))
            }
        }
    }
}

/// Where a file read from disk holds its events' record texts, per event in slot order
/// (see [`locate_records`]), and the file to read them back from.
#[derive(Debug)]
pub(crate) struct OnDisk {
    pub(crate) disk: PathBuf,
    pub(crate) records: Vec<Option<(u64, u32)>>,
}

impl TextArena {
    /// Add an event's id and content (`None` beyond 4 GiB of text in one file). With
    /// `record`, the content is the cleaned text of that byte range (offset, length) of
    /// the file on disk, and is not kept.
    pub(crate) fn push(&mut self, id: &str, content: &str, record: Option<(u64, u32)>) -> Option<TextSpan> {
        match record {
            Some((offset, len)) => self.push_stored(
                id,
                StoredContent::OnDisk { len, span: DiskSpan { offset, checksum: content_checksum(content) } },
            ),
            None => {
                let start = u32::try_from(self.text.len()).ok()?;
                let span = TextSpan {
                    start,
                    id_len: u32::try_from(id.len()).ok()?,
                    content_len: u32::try_from(content.len()).ok()?,
                    on_disk: None,
                };
                start.checked_add(span.id_len)?.checked_add(span.content_len)?;
                self.text.push_str(id);
                self.text.push_str(content);
                Some(span)
            }
        }
    }

    /// Add an event's id and content as the cache stored them (`None` beyond 4 GiB of
    /// text in one file).
    pub(crate) fn push_stored(&mut self, id: &str, content: StoredContent<'_>) -> Option<TextSpan> {
        match content {
            StoredContent::Inline(content) => self.push(id, content, None),
            StoredContent::OnDisk { len, span } => {
                let start = u32::try_from(self.text.len()).ok()?;
                start.checked_add(u32::try_from(id.len()).ok()?)?;
                self.text.push_str(id);
                Some(TextSpan { start, id_len: u32::try_from(id.len()).ok()?, content_len: len, on_disk: Some(span) })
            }
        }
    }

    /// The file's text; `disk` is where contents stored as byte ranges are read back.
    pub(crate) fn finish(self, path: &str, disk: Option<PathBuf>) -> Arc<FileText> {
        Arc::new(FileText { path: path.into(), text: self.text.into_boxed_str(), disk })
    }
}

/// An event's content as the cache gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StoredContent<'a> {
    /// Held by the index.
    Inline(&'a str),
    /// The cleaned text of `len` bytes of the file on disk.
    OnDisk { len: u32, span: DiskSpan },
}

impl FileText {
    /// The file on disk that contents stored as byte ranges are read from.
    pub(crate) fn disk(&self) -> Option<&Path> {
        self.disk.as_deref()
    }

    /// The content whose record text is at `span` (`len` bytes) of the file on disk, if
    /// it is still the indexed one.
    fn read_back(&self, len: u32, span: DiskSpan) -> Result<String, Unreadable> {
        let disk = self.disk.as_deref().ok_or(Unreadable::Changed)?;
        let mut file = std::fs::File::open(disk).map_err(Unreadable::Io)?;
        file.seek(SeekFrom::Start(span.offset)).map_err(Unreadable::Io)?;
        let mut bytes = vec![0; len as usize];
        file.read_exact(&mut bytes).map_err(|err| match err.kind() {
            std::io::ErrorKind::UnexpectedEof => Unreadable::Changed,
            _ => Unreadable::Io(err),
        })?;
        let raw = String::from_utf8(bytes).map_err(|_| Unreadable::Changed)?;
        let content = clean_retrieval_text(&raw);
        if content_checksum(&content) != span.checksum {
            return Err(Unreadable::Changed);
        }
        Ok(content)
    }
}

impl TextSpan {}

/// Where each event's record text is in a source file's bytes: a byte range whose
/// cleaned form ([`clean_retrieval_text`], as the parsers make contents) is exactly the
/// event's content, or `None` (topic claims, whose content is composed; a file that is
/// not UTF-8; a record not found). `events` must be sorted by line; a record is looked
/// for from the start of its event's line and of the few lines after it.
pub(crate) fn locate_records(path: &str, bytes: &[u8], events: &[MemoryEvent]) -> Vec<Option<(u64, u32)>> {
    /// How many lines after an event's first line its record may start.
    const LOOKAHEAD_LINES: usize = 4;
    let text = match FileKind::of(path) {
        Some(FileKind::V2Source | FileKind::LegacySource) => std::str::from_utf8(bytes).ok(),
        // A topic's contents are composed; a text that is not UTF-8 was repaired or
        // shortened by the parser, so its offsets are not the file's.
        Some(FileKind::Topic) | None => None,
    };
    let Some(text) = text else { return vec![None; events.len()] };
    // The cursor: the start of 1-based line `line`.
    let (mut line, mut at) = (1usize, 0usize);
    let next_line = |from: usize| text.get(from..).and_then(|rest| rest.find('\n')).map(|n| from + n + 1);
    events
        .iter()
        .map(|event| {
            while line < event.line {
                at = next_line(at)?;
                line += 1;
            }
            if event.content.is_empty() {
                return None;
            }
            let mut start = at;
            for _ in 0..=LOOKAHEAD_LINES {
                if let Some(len) = record_len(text.get(start..)?, &event.content) {
                    return Some((u64::try_from(start).ok()?, u32::try_from(len).ok()?));
                }
                start = next_line(start)?;
            }
            None
        })
        .collect()
}

/// The length of the text at the start of `raw` that cleans to `content`, if any.
fn record_len(raw: &str, content: &str) -> Option<usize> {
    /// Lines tried when the record holds comments or links.
    const MAX_RECORD_LINES: usize = 64;
    // Without comments or links, cleaning only collapses whitespace: match word by word.
    if let Some(len) = collapsed_prefix_len(raw, content) {
        let candidate = raw.get(..len)?;
        if !candidate.contains("<!--") && !candidate.contains("](") {
            return Some(len);
        }
    }
    let first = raw.split('\n').next()?;
    if !first.contains(['<', '[']) && collapsed_prefix_len(first, content).is_none() {
        // The first line holds no markup and its words are not the content's.
        let words = split_whitespace(first).next();
        if words.is_some_and(|word| !content.starts_with(word)) {
            return None;
        }
    }
    let mut end = 0;
    for _ in 0..MAX_RECORD_LINES {
        end = match raw.get(end..)?.find('\n') {
            Some(n) => end + n,
            None => raw.len(),
        };
        let candidate = raw.get(..end)?;
        if clean_retrieval_text(candidate) == content {
            return Some(end);
        }
        if end == raw.len() {
            return None;
        }
        end += 1;
    }
    None
}

/// The length of the text at the start of `raw` whose whitespace-separated words are
/// those of `content` (words joined by single spaces), if any.
fn collapsed_prefix_len(raw: &str, content: &str) -> Option<usize> {
    let mut want = content.split(' ');
    let mut next = want.next()?;
    let mut at = 0;
    loop {
        let rest = raw.get(at..)?;
        at += rest.find(|c: char| !is_space(c))?;
        let rest = raw.get(at..)?;
        let word = rest.find(is_space).unwrap_or(rest.len());
        if rest.get(..word)? != next {
            return None;
        }
        at += word;
        match want.next() {
            Some(word) => next = word,
            None => return Some(at),
        }
    }
}

/// One indexed event, compact.
#[derive(Clone, Debug)]
pub(crate) struct StoredEvent {
    pub(crate) file: Arc<FileText>,
    pub(crate) span: TextSpan,
    pub(crate) refs: Refs,
    pub(crate) context: Arc<Context>,
    pub(crate) dates: Arc<Dates>,
    pub(crate) line: usize,
    pub(crate) trust_state: Trust,
    pub(crate) speaker_trusted: bool,
    pub(crate) authority_tier: Option<AuthorityTier>,
}

impl StoredEvent {
    pub(crate) fn event_id(&self) -> &str {
        let start = self.span.start as usize;
        self.file.text.get(start..start + self.span.id_len as usize).unwrap_or_default()
    }

    /// The content, read back from the file on disk when the index does not hold it.
    pub(crate) fn read_content(&self) -> Result<Cow<'_, str>, Unreadable> {
        match self.span.on_disk {
            Some(span) => self.file.read_back(self.span.content_len, span).map(Cow::Owned),
            None => Ok(Cow::Borrowed(match self.stored_content() {
                StoredContent::Inline(content) => content,
                StoredContent::OnDisk { .. } => "",
            })),
        }
    }

    /// The content as the cache stores it: the text, or where it is on disk.
    pub(crate) fn stored_content(&self) -> StoredContent<'_> {
        match self.span.on_disk {
            Some(span) => StoredContent::OnDisk { len: self.span.content_len, span },
            None => {
                let start = self.span.start as usize + self.span.id_len as usize;
                StoredContent::Inline(
                    self.file.text.get(start..start + self.span.content_len as usize).unwrap_or_default(),
                )
            }
        }
    }

    pub(crate) fn path(&self) -> &str {
        &self.file.path
    }

    /// Whether the event has refs (rule `source_grounded`).
    pub(crate) fn has_refs(&self) -> bool {
        match &self.refs {
            Refs::Own => true,
            Refs::List(list) => !list.is_empty(),
        }
    }

    /// Every ref, in order.
    pub(crate) fn refs(&self) -> impl Iterator<Item = &str> {
        let list: &[Box<str>] = match &self.refs {
            Refs::Own => &[],
            Refs::List(list) => list,
        };
        let own = matches!(self.refs, Refs::Own).then(|| self.event_id());
        own.into_iter().chain(list.iter().map(|r| &**r))
    }

    pub(crate) fn date(&self) -> Option<&str> {
        self.dates.date.as_deref()
    }

    /// The event as callers see it.
    pub(crate) fn to_event(&self) -> Result<MemoryEvent, Unreadable> {
        let content = self.read_content()?.into_owned();
        Ok(self.event_with(content))
    }

    /// The event as callers see it, with `content`.
    pub(crate) fn event_with(&self, content: String) -> MemoryEvent {
        let context = &*self.context;
        MemoryEvent {
            event_id: self.event_id().to_owned(),
            path: self.path().to_owned(),
            line: self.line,
            headings: context.headings.clone(),
            date: self.dates.date.clone(),
            dates: self.dates.dates.clone(),
            content,
            refs: self.refs().map(str::to_owned).collect(),
            speaker_id: context.speaker_id.clone(),
            speaker_display: context.speaker_display.clone(),
            speaker_label: context.speaker_label.clone(),
            speaker_trusted: self.speaker_trusted,
            trust_state: self.trust_state,
            speaker_kind: context.speaker_kind.clone(),
            principal_id: context.principal_id.clone(),
            authority_tier: self.authority_tier,
            visibility: context.visibility.clone(),
        }
    }
}

/// Shares equal contexts and dates among events.
#[derive(Debug, Default)]
pub(crate) struct Interner {
    contexts: HashSet<Arc<Context>, FxBuildHasher>,
    dates: HashSet<Arc<Dates>, FxBuildHasher>,
    /// The contexts used last (a thread's few speakers take turns), found by comparing
    /// fields before the speakers are casefolded and the whole context hashed.
    recent: Vec<Arc<Context>>,
    /// The dates used last (a thread's events share days).
    recent_dates: Option<Arc<Dates>>,
    /// Values a loaded cache holds (each once), not yet in the sets: they are hashed only
    /// when an event is next stored, so that opening an unchanged workspace hashes none.
    adopted: (Vec<Arc<Context>>, Vec<Arc<Dates>>),
}

/// How many recently used contexts [`Interner::store`] compares an event with.
const RECENT_CONTEXTS: usize = 8;

impl Interner {
    pub(crate) fn context(&mut self, context: Context) -> Arc<Context> {
        self.index_adopted();
        intern(&mut self.contexts, context)
    }

    pub(crate) fn dates(&mut self, dates: Dates) -> Arc<Dates> {
        self.index_adopted();
        intern(&mut self.dates, dates)
    }

    /// Share a context a loaded cache holds once (see [`Interner::adopt_dates`]).
    pub(crate) fn adopt_context(&mut self, context: Context) -> Arc<Context> {
        let shared = Arc::new(context);
        self.adopted.0.push(Arc::clone(&shared));
        shared
    }

    /// Share dates a loaded cache holds once: an equal value stored later gets this one.
    pub(crate) fn adopt_dates(&mut self, dates: Dates) -> Arc<Dates> {
        let shared = Arc::new(dates);
        self.adopted.1.push(Arc::clone(&shared));
        shared
    }

    /// Put the adopted values into the sets (an equal value already there wins).
    fn index_adopted(&mut self) {
        let (contexts, dates) = std::mem::take(&mut self.adopted);
        for context in contexts {
            if !self.contexts.contains(&context) {
                self.contexts.insert(context);
            }
        }
        for value in dates {
            if !self.dates.contains(&value) {
                self.dates.insert(value);
            }
        }
    }

    /// The compact form of `event`, whose id and content are at `span` of `file`.
    pub(crate) fn store(&mut self, event: MemoryEvent, file: &Arc<FileText>, span: TextSpan) -> StoredEvent {
        let context = match self.recent.iter().position(|context| context.holds(&event)) {
            Some(at) => {
                let context = self.recent.remove(at);
                self.recent.insert(0, Arc::clone(&context));
                Some(context)
            }
            None => None,
        };
        let context = context.unwrap_or_else(|| {
            let speakers = event_speakers(&event);
            let context = self.context(Context {
                headings: event.headings.clone(),
                speaker_id: event.speaker_id.clone(),
                speaker_display: event.speaker_display.clone(),
                speaker_label: event.speaker_label.clone(),
                speaker_kind: event.speaker_kind.clone(),
                principal_id: event.principal_id.clone(),
                visibility: event.visibility.clone(),
                speakers,
            });
            self.recent.truncate(RECENT_CONTEXTS - 1);
            self.recent.insert(0, Arc::clone(&context));
            context
        });
        let refs = if event.refs.len() == 1 && event.refs.first() == Some(&event.event_id) {
            Refs::Own
        } else {
            Refs::List(event.refs.into_iter().map(String::into_boxed_str).collect())
        };
        let dates = match self.recent_dates.as_ref().filter(|last| last.date == event.date && last.dates == event.dates)
        {
            Some(last) => Arc::clone(last),
            None => {
                let dates = self.dates(Dates { date: event.date, dates: event.dates });
                self.recent_dates = Some(Arc::clone(&dates));
                dates
            }
        };
        StoredEvent {
            context,
            dates,
            file: Arc::clone(file),
            span,
            refs,
            line: event.line,
            trust_state: event.trust_state,
            speaker_trusted: event.speaker_trusted,
            authority_tier: event.authority_tier,
        }
    }

    /// Forget values no event holds any more.
    pub(crate) fn prune(&mut self) {
        self.recent.clear();
        self.recent_dates = None;
        self.index_adopted();
        self.contexts.retain(|value| Arc::strong_count(value) > 1);
        self.dates.retain(|value| Arc::strong_count(value) > 1);
    }
}

fn intern<T: Hash + Eq>(set: &mut HashSet<Arc<T>, FxBuildHasher>, value: T) -> Arc<T> {
    match set.get(&value) {
        Some(shared) => Arc::clone(shared),
        None => {
            let shared = Arc::new(value);
            set.insert(Arc::clone(&shared));
            shared
        }
    }
}
