//! The inverted index: term → postings (slot, tf, field flags), per-slot document
//! lengths, a live-slot bitset, and each file's contiguous slot range.
//!
//! Memory (1M events, spec 03 P11): posting lists are delta-varint bytes (~2 bytes a
//! posting, `index::postings`); events are compact (`index::stored`): id and content in one text
//! buffer per file, headings, speaker, metadata and dates interned, and a
//! [`MemoryEvent`] built only for result rows (or on the first [`Index::events`]).
//!
//! Files are the unit of change: [`Index::apply`] frees a file's slots and appends the
//! new events at fresh slots. The freed slots' postings stay in the lists, dead (no query
//! counts a slot that is not live, and the cache does not store them), until a rebuild
//! reclaims both once freed slots outnumber live ones. After every batch the
//! workspace-wide rules run again: v2 preference (a legacy source event whose id a v2
//! frame also has is not live) and topic trust resolution. Both read every event of
//! their kind, never a cache, so promotion takes effect on the next refresh (spec 02 §5);
//! a workspace without legacy archives or topics skips them.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::OnceLock;

use scriptorium_topic_markdown::SourceResolver;

use self::postings::PostingList;
pub(crate) use self::postings::SortedSlots;
use self::stored::{Interner, OnDisk, StoredEvent, TextArena};
use self::tally::Tally;
use self::terms::Terms;
use crate::bitset::BitSet;
use crate::collect::{SourcesAmong, file_events};
use crate::embed::VectorCache;
use crate::error::Error;
use crate::event::{FileKind, MemoryEvent};
use crate::filter::Selection;
use crate::fxhash::FxBuildHasher;
use crate::scan::{WorkspaceFile, scan_workspace};
use crate::tokenize::for_each_token;

/// Rebuild once this many slots are free and they outnumber the live ones.
const COMPACT_MIN_FREE: usize = 1024;

/// Posting flag: the term occurs in the event's content (rule `exact_terms`).
const IN_CONTENT: u32 = 1 << 31;
/// Posting flag: the term occurs in the path or a heading (rule `path_heading`).
const IN_PATH_HEADING: u32 = 1 << 30;
const TF_MASK: u32 = IN_PATH_HEADING - 1;

/// One document holding a term.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Posting {
    pub(crate) slot: u32,
    packed: u32,
}

impl Posting {
    /// How the document holds the term.
    pub(crate) fn occurrence(self) -> Occurrence {
        Occurrence(self.packed)
    }
}

/// How one document holds one term: tf and field flags in one word, so that a query
/// keeps a table of them per matched document.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Occurrence(u32);

impl Occurrence {
    /// A term the document does not hold: tf 0, no flags.
    pub(crate) const ABSENT: Occurrence = Occurrence(0);

    /// How often the term occurs in the document text.
    pub(crate) fn tf(self) -> u32 {
        self.0 & TF_MASK
    }

    pub(crate) fn in_content(self) -> bool {
        self.0 & IN_CONTENT != 0
    }

    pub(crate) fn in_path_heading(self) -> bool {
        self.0 & IN_PATH_HEADING != 0
    }
}

/// An indexed event and what filters need of it.
#[derive(Clone, Debug)]
pub(crate) struct Slot {
    pub(crate) event: StoredEvent,
    pub(crate) kind: FileKind,
}

impl Slot {
    /// The event as callers see it, its content read back from its file when the index
    /// does not hold it (see `index::stored`).
    ///
    /// Errors: [`ErrorCode::ReadFailed`](crate::ErrorCode::ReadFailed) when the file cannot
    /// be read or no longer holds the indexed text (the index is behind: refresh it).
    pub(crate) fn try_to_event(&self) -> Result<MemoryEvent, Error> {
        self.event.to_event().map_err(|why| why.into_error(self.event.path()))
    }

    /// [`Self::try_to_event`] for callers that cannot report an error: a content that
    /// cannot be read back is empty, never another text.
    pub(crate) fn to_event(&self) -> MemoryEvent {
        self.event.to_event().unwrap_or_else(|_| self.event.event_with(String::new()))
    }

    /// Casefolded speaker fields (sources only), for the speaker filter.
    pub(crate) fn speakers(&self) -> &[String] {
        &self.event.context.speakers
    }

    /// Whether the event lives under `sources/`.
    pub(crate) fn is_source(&self) -> bool {
        self.event.path().starts_with("sources/")
    }
}

/// The slot range `first..first + len` of one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileSlots {
    pub(crate) first: u32,
    pub(crate) len: u32,
}

impl FileSlots {
    pub(crate) fn range(self) -> std::ops::Range<u32> {
        self.first..self.first + self.len
    }
}

/// One change to the indexed files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileChange {
    /// Index `events` as the whole content of `path`, replacing what it held.
    Upsert {
        /// The workspace-relative path.
        path: String,
        /// Its events before v2 preference and trust resolution (see [`file_events`](crate::file_events)).
        events: Vec<MemoryEvent>,
    },
    /// Forget `path`.
    Remove {
        /// The workspace-relative path.
        path: String,
    },
}

/// The BM25 index of one workspace: every event, ready for queries.
///
/// Build it with [`Index::from_workspace`] or [`Index::from_files`], keep it current
/// with [`Index::apply`], query it with [`Index::search`](crate::Index::search).
#[derive(Debug, Default)]
pub struct Index {
    files: BTreeMap<String, FileSlots>,
    slots: Vec<Option<Slot>>,
    lengths: Vec<u32>,
    dictionary: Terms,
    postings: Vec<PostingList>,
    live: BitSet,
    /// Slots whose event has refs (rule `source_grounded`), kept apart from the events so
    /// that a query over many candidates reads bits, not events.
    grounded: BitSet,
    /// Per casefolded speaker, the slots whose event has it, sorted: a speaker filter
    /// visits only its own events.
    speaker_slots: HashMap<String, Vec<u32>, FxBuildHasher>,
    /// Per slot, its position in (path, line, event id) order (rebuilt by `resolve`), so
    /// that ties in score are broken by comparing two numbers, not two paths.
    ranks: Vec<u32>,
    live_docs: u64,
    live_tokens: u64,
    free: usize,
    /// Shares the fields many events have in common.
    interner: Interner,
    /// Scratch space counting one event's terms (emptied after every batch).
    tally: Tally,
    /// Events inserted since the last [`Index::finish_changes`].
    inserted: usize,
    /// Every live event as a `MemoryEvent`, built on the first call of [`Index::events`].
    materialized: OnceLock<Vec<MemoryEvent>>,
    pub(crate) vectors: VectorCache,
    /// What the files on disk looked like when last read (see `crate::cache`).
    pub(crate) disk: crate::cache::DiskState,
}

/// The candidates of one query: a slot set with its size and total length.
pub(crate) struct Candidates<'a> {
    pub(crate) set: Cow<'a, BitSet>,
    pub(crate) docs: u64,
    pub(crate) tokens: u64,
    /// Sorted, disjoint slot ranges holding every candidate (and maybe other slots;
    /// `None`: all live slots), so that a query reads only the parts of its posting lists
    /// that reach them.
    pub(crate) ranges: Option<Vec<std::ops::Range<u32>>>,
}

impl Index {
    /// An index with no files.
    pub fn new() -> Self {
        Self::default()
    }

    /// Read and index every indexable file of the workspace at `root` (see [`scan_workspace`]),
    /// on this thread, without the cache.
    ///
    /// Every file is read into memory first and every event keeps its text, so memory
    /// peaks at about twice the workspace's archives (926 MB for a million events in
    /// 440 MB of archives). For a large workspace use [`Index::open`], which reads
    /// archives a few at a time and keeps no source text (422 MB for the same one).
    ///
    /// Errors: [`ErrorCode::ReadFailed`](crate::ErrorCode::ReadFailed) when a folder or file cannot be read.
    pub fn from_workspace(root: &Path) -> Result<Self, Error> {
        Ok(Self::from_files(scan_workspace(root)?))
    }

    /// Index the given files (workspace-relative paths); topic citations resolve against
    /// the `sources/` files among them.
    pub fn from_files(files: impl IntoIterator<Item = WorkspaceFile>) -> Self {
        let files: Vec<WorkspaceFile> = files.into_iter().collect();
        // Borrowed: a source is copied only when a topic cites it.
        let sources: SourcesAmong<'_> = files
            .iter()
            .filter(|file| file.path.starts_with("sources/"))
            .map(|file| (&*file.path, &*file.bytes))
            .collect();
        let resolver = SourceResolver::new(sources);
        let changes = files.iter().map(|file| FileChange::Upsert {
            path: file.path.clone(),
            events: file_events(&file.path, &file.bytes, &resolver),
        });
        let mut index = Index::new();
        index.apply(changes);
        index
    }

    /// Apply a batch of file changes, then run v2 preference and trust resolution once.
    pub fn apply(&mut self, changes: impl IntoIterator<Item = FileChange>) {
        for change in changes {
            self.apply_one(change);
        }
        self.finish_changes();
    }

    /// One change of a batch; [`Self::finish_changes`] must follow the batch.
    pub(crate) fn apply_one(&mut self, change: FileChange) {
        match change {
            FileChange::Upsert { path, events } => {
                self.remove_file(&path);
                self.insert_file(path, events, None);
            }
            FileChange::Remove { path } => self.remove_file(&path),
        }
    }

    /// [`Self::apply_one`] for a file read from disk: the contents whose record text it
    /// holds (`on_disk`, per event in (line, event id) order) are read back from there, not kept.
    pub(crate) fn upsert_on_disk(&mut self, path: String, events: Vec<MemoryEvent>, on_disk: OnDisk) {
        self.remove_file(&path);
        self.insert_file(path, events, Some(on_disk));
    }

    /// After a batch of changes: compact if worth it, run the workspace-wide rules.
    pub(crate) fn finish_changes(&mut self) {
        if self.free >= COMPACT_MIN_FREE && self.free > self.slots.len() - self.free {
            self.rebuild();
        }
        self.interner.prune();
        // After a large batch (a build), give back what posting lists over-reserved as
        // they grew (up to half of their memory); small batches keep the reserve, or
        // every refresh would copy the long lists.
        if self.inserted >= COMPACT_MIN_FREE && self.inserted * 4 >= self.slots.len() {
            self.postings.iter_mut().for_each(PostingList::shrink);
            self.dictionary.shrink_to_fit();
        }
        self.inserted = 0;
        self.tally = Tally::default();
        self.resolve();
        self.vectors.clear();
        self.materialized = OnceLock::new();
    }

    /// The live events (legacy copies of v2 ids excluded, topic trust resolved), sorted
    /// by path, then line, then event id.
    ///
    /// The index keeps events compact; the first call builds every `MemoryEvent` (and
    /// keeps them until the next change), so it is for tools and tests, not for queries,
    /// which build only their result rows.
    pub fn events(&self) -> impl Iterator<Item = &MemoryEvent> {
        self.materialized
            .get_or_init(|| {
                self.files.values().flat_map(|file| self.live_slots(*file)).map(|(_, slot)| slot.to_event()).collect()
            })
            .iter()
    }

    /// The live events of the indexed file `path` (empty for a file not indexed), in
    /// line order, as [`Index::events`] gives them, but built for this file only.
    pub fn events_in(&self, path: &str) -> Vec<MemoryEvent> {
        self.files.get(path).map_or_else(Vec::new, |file| self.live_slots(*file).map(|(_, s)| s.to_event()).collect())
    }

    /// The number of live events.
    pub fn len(&self) -> usize {
        usize::try_from(self.live_docs).unwrap_or(usize::MAX)
    }

    /// Whether no event is live.
    pub fn is_empty(&self) -> bool {
        self.live_docs == 0
    }

    /// The indexed file paths, sorted.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// The live slots of one file, in slot order (= line, then event id).
    pub(crate) fn live_slots(&self, file: FileSlots) -> impl Iterator<Item = (u32, &Slot)> {
        file.range().filter(|slot| self.live.contains(*slot)).filter_map(|slot| Some((slot, self.slot(slot)?)))
    }

    pub(crate) fn files(&self) -> &BTreeMap<String, FileSlots> {
        &self.files
    }

    pub(crate) fn slot(&self, slot: u32) -> Option<&Slot> {
        self.slots.get(slot as usize).and_then(Option::as_ref)
    }

    pub(crate) fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// Whether the event at `slot` has refs.
    pub(crate) fn is_grounded(&self, slot: u32) -> bool {
        self.grounded.contains(slot)
    }

    /// The position of `slot` in (path, line, event id) order.
    pub(crate) fn rank(&self, slot: u32) -> u32 {
        self.ranks.get(slot as usize).copied().unwrap_or(u32::MAX)
    }

    /// The length in tokens of the event at each slot.
    pub(crate) fn lengths(&self) -> &[u32] {
        &self.lengths
    }

    pub(crate) fn length(&self, slot: u32) -> u32 {
        self.lengths.get(slot as usize).copied().unwrap_or(0)
    }

    /// The posting list of `term` (empty for an unknown term), for cursors and lengths.
    pub(crate) fn posting_list(&self, term: &str) -> &PostingList {
        static EMPTY: PostingList = PostingList::EMPTY;
        self.dictionary.get(term).and_then(|id| self.postings.get(id as usize)).unwrap_or(&EMPTY)
    }

    /// The candidates a selection keeps, with their count and total length.
    pub(crate) fn candidates(&self, selection: &Selection) -> Candidates<'_> {
        if selection.is_everything() {
            let (docs, tokens) = (self.live_docs, self.live_tokens);
            return Candidates { set: Cow::Borrowed(&self.live), docs, tokens, ranges: None };
        }
        let mut set = BitSet::with_len(self.slots.len());
        let (mut docs, mut tokens) = (0u64, 0u64);
        let mut keep = |slot: u32, set: &mut BitSet| {
            if set.contains(slot) || !self.live.contains(slot) {
                return;
            }
            if !selection.has_window()
                || self.slot(slot).is_some_and(|entry| {
                    selection.matches_event(&entry.event.dates.dates, entry.is_source(), entry.speakers())
                })
            {
                set.set(slot, true);
                docs += 1;
                tokens += u64::from(self.length(slot));
            }
        };
        let mut ranges: Vec<std::ops::Range<u32>> = Vec::new();
        match selection.speaker_keys() {
            // Only the speaker's own slots; the date window and the path prefix are checked on them.
            Some(keys) => {
                let on_path = self.slots_on_path(selection);
                for key in keys {
                    for &slot in self.speaker_slots.get(key.as_str()).map_or(&[][..], Vec::as_slice) {
                        if on_path.as_ref().is_none_or(|on_path| on_path.contains(slot)) {
                            keep(slot, &mut set);
                            ranges.push(slot..slot.saturating_add(1));
                        }
                    }
                }
            }
            None => {
                for (path, file) in &self.files {
                    if selection.matches_path(path) {
                        file.range().for_each(|slot| keep(slot, &mut set));
                        ranges.push(file.range());
                    }
                }
            }
        }
        Candidates { set: Cow::Owned(set), docs, tokens, ranges: Some(coalesce(ranges)) }
    }

    /// The slots of the files a path prefix keeps, or `None` without a prefix.
    fn slots_on_path(&self, selection: &Selection) -> Option<BitSet> {
        if !selection.has_prefix() {
            return None;
        }
        let mut on_path = BitSet::with_len(self.slots.len());
        for (path, file) in &self.files {
            if selection.matches_path(path) {
                file.range().for_each(|slot| on_path.set(slot, true));
            }
        }
        Some(on_path)
    }

    /// Record that the event at `slot` (the highest slot so far) has `speakers`.
    fn add_speakers(&mut self, slot: u32, speakers: &[String]) {
        for speaker in speakers {
            match self.speaker_slots.get_mut(speaker.as_str()) {
                Some(slots) => slots.push(slot),
                None => {
                    self.speaker_slots.insert(speaker.clone(), vec![slot]);
                }
            }
        }
    }

    fn insert_file(&mut self, path: String, mut events: Vec<MemoryEvent>, on_disk: Option<OnDisk>) {
        let Some(kind) = FileKind::of(&path) else { return };
        events.sort_by(|a, b| (a.line, &a.event_id).cmp(&(b.line, &b.event_id)));
        let Ok(first) = u32::try_from(self.slots.len()) else { return };
        let Some(len) = u32::try_from(events.len()).ok().filter(|len| first.checked_add(*len).is_some()) else {
            return; // beyond u32 slots: the index holds at most 4 billion events
        };
        self.inserted += events.len();
        self.live.grow(self.slots.len() + events.len());
        self.grounded.grow(self.slots.len() + events.len());
        let mut arena = TextArena::default();
        // The records follow the events' order, which the sort above keeps (it is stable).
        let (records, disk) = match on_disk {
            Some(on_disk) if on_disk.records.len() == events.len() => (on_disk.records, Some(on_disk.disk)),
            _ => (Vec::new(), None),
        };
        let record = |n: usize| records.get(n).copied().flatten();
        let Some(spans) = (events.iter().enumerate())
            .map(|(n, event)| arena.push(&event.event_id, &event.content, record(n)))
            .collect::<Option<Vec<_>>>()
        else {
            return; // beyond 4 GiB of event text in one file
        };
        let text = arena.finish(&path, disk);
        for ((slot, mut event), span) in (first..).zip(events).zip(spans) {
            event.path.clone_from(&path);
            let length = self.add_postings(slot, &event);
            let event = self.interner.store(event, &text, span);
            self.add_speakers(slot, &event.context.speakers);
            self.grounded.set(slot, event.has_refs());
            self.slots.push(Some(Slot { event, kind }));
            self.lengths.push(length);
            self.live.set(slot, true);
        }
        self.files.insert(path, FileSlots { first, len });
    }

    /// Add the postings of `event` at `slot`; returns its length in tokens.
    fn add_postings(&mut self, slot: u32, event: &MemoryEvent) -> u32 {
        self.tally.start();
        for_each_field_token(event, |token, flag| {
            // `None` only beyond 4 GiB of distinct term text or 4 billion terms.
            let Some((id, new)) = self.dictionary.insert(token) else { return };
            if new {
                self.postings.push(PostingList::default());
            }
            self.tally.add(id, flag);
        });
        // Each term's list gets one posting, so their order among terms does not matter.
        for &(id, tf, flags) in self.tally.counts() {
            if let Some(list) = self.postings.get_mut(id as usize) {
                list.push(Posting { slot, packed: tf.min(TF_MASK) | flags });
            }
        }
        self.tally.tokens()
    }

    fn remove_file(&mut self, path: &str) {
        let Some(file) = self.files.remove(path) else { return };
        // The file's postings stay behind, pointing at dead slots that no query counts
        // (candidates are live), until the next rebuild drops them: removing them from
        // the middle of every long posting list would cost more than the whole refresh.
        let mut speakers: HashSet<&str> = HashSet::new();
        for slot in file.range() {
            if let Some(entry) = self.slots.get(slot as usize).and_then(Option::as_ref) {
                speakers.extend(entry.speakers().iter().map(String::as_str));
            }
        }
        let range = file.range();
        for speaker in speakers {
            if let Some(slots) = self.speaker_slots.get_mut(speaker) {
                let start = slots.partition_point(|slot| *slot < range.start);
                let end = slots.partition_point(|slot| *slot < range.end);
                slots.drain(start..end);
            }
        }
        for slot in range {
            if let Some(entry) = self.slots.get_mut(slot as usize) {
                *entry = None;
            }
            if let Some(length) = self.lengths.get_mut(slot as usize) {
                *length = 0;
            }
            self.live.set(slot, false);
            self.grounded.set(slot, false);
        }
        self.free += file.len as usize;
    }

    /// Renumber every file at compact slots, dropping freed slots and unused terms, by
    /// a round trip through the cache encoding (`index::snapshot`), which does exactly
    /// that without re-reading or re-tokenizing any event (contents may live on disk).
    fn rebuild(&mut self) {
        if let Some(compact) = self.compacted() {
            *self =
                Index { vectors: std::mem::take(&mut self.vectors), disk: std::mem::take(&mut self.disk), ..compact };
        }
    }
}

/// Candidate ranges closer than this many slots are merged: a block of postings spans
/// more, so a smaller gap would skip nothing and only cost a range check.
const RANGE_GAP: u32 = 256;

/// `ranges` sorted and merged where they overlap or lie within [`RANGE_GAP`] slots.
fn coalesce(mut ranges: Vec<std::ops::Range<u32>>) -> Vec<std::ops::Range<u32>> {
    ranges.sort_unstable_by_key(|range| range.start);
    let mut merged: Vec<std::ops::Range<u32>> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match merged.last_mut() {
            Some(last) if range.start <= last.end.saturating_add(RANGE_GAP) => last.end = last.end.max(range.end),
            _ => merged.push(range),
        }
    }
    merged
}

/// Every token of an event's document text with the field flag it earns: the text is
/// `content + path (without topics/) + headings + dates` (spec 02 §6.3), and tokens never
/// cross the spaces that join these parts, so tokenizing the parts one by one gives the
/// same tokens in the same order.
pub(crate) fn for_each_field_token(event: &MemoryEvent, mut emit: impl FnMut(&str, u32)) {
    for_each_token(&event.content, |token| emit(token, IN_CONTENT));
    for_each_token(search_path(&event.path), |token| emit(token, IN_PATH_HEADING));
    for heading in &event.headings {
        for_each_token(heading, |token| emit(token, IN_PATH_HEADING));
    }
    for date in &event.dates {
        for_each_token(date, |token| emit(token, 0));
    }
}

/// The path as the document text holds it: without `topics/` (`/` and `_` separate
/// tokens anyway, so turning them into spaces changes nothing).
fn search_path(path: &str) -> &str {
    path.strip_prefix("topics/").unwrap_or(path)
}

mod postings;
mod resolve;
mod snapshot;
pub(crate) mod stored;
mod tally;
mod terms;
#[cfg(test)]
mod tests;
