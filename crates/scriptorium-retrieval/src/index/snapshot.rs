//! The index as cache bytes and back (the payload of `.scriptorium/retrieval-index.bin`,
//! framed by `crate::cache`).
//!
//! Layout, all integers LEB128 varints unless said otherwise, in two parts that are
//! decoded at the same time on two threads (see `cache::codec` for how parts are framed
//! and checksummed). Part 1, the events:
//! 1. files, in slot order: path, fingerprint (or none: re-read on the next open), event count;
//! 2. the shared event parts, each once: contexts (headings, speaker id and display
//!    name, a flag saying whether the label is derived from them — else the label
//!    follows — and whether the event is a source's (its casefolded speakers are then
//!    recomputed), speaker kind, principal, visibility), then dates;
//! 3. per file, in slot order, each event: document length, line (zig-zag delta from
//!    the previous event's), id (length of the prefix it shares with the previous id,
//!    then the rest), flags (trust as the file gave it, never as resolution left it;
//!    speaker-trusted; authority tier; whether the content is on disk; whether the refs
//!    are the event's own id), the content —
//!    on disk: its record's byte length, its offset in the file (zig-zag delta from the
//!    end of the previous one) and the content's checksum (4 bytes LE); else the text
//!    itself —, the refs unless they are the event's own id (count, then each), a tier
//!    name when the flags say "other", context number and dates number (zig-zag deltas
//!    from the previous event's: a thread's speakers have neighbouring numbers);
//!
//! Part 2, the postings: the number of slots (the events of part 1), then
//! 4. terms, sorted: length of the prefix shared with the previous term, the rest,
//!    posting count, byte length, the list in its stored form (see `index::postings`).
//!
//! Event text is not stored when it is a byte range of the event's file (v2 records,
//! most legacy records): the cache holds where it is, and a query reads back its result
//! rows' contents, checked against the checksum (`index::stored`). Topic claims, whose
//! content is composed, keep their text.
//!
//! Loading appends postings as stored, without tokenizing anything; slots are renumbered
//! densely on save (freed slots dropped), in an order that keeps every list sorted.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use scriptorium_archive_format::AuthorityTier;

use super::postings::PostingList;
use super::stored::{Context, Dates, DiskSpan, FileText, Refs, StoredContent, StoredEvent, TextArena, TextSpan};
use super::terms::Terms;
use super::{FileSlots, Index, Posting, Slot};
#[cfg(test)]
use crate::cache::codec::split_parts;
use crate::cache::codec::{Damaged, Reader, Writer};
use crate::cache::fingerprint::Fingerprint;
use crate::event::{FileKind, Trust};

/// Marks a slot that a saved file does not hold.
const NO_SLOT: u32 = u32::MAX;

impl Index {
    /// The encoded index, in memory (see [`Self::encode_into`]).
    #[cfg(test)]
    pub(crate) fn encode(&self, fingerprints: &BTreeMap<String, Fingerprint>) -> Vec<u8> {
        let mut out = Writer::default();
        self.encode_into(fingerprints, &mut out);
        out.into_payload()
    }

    /// Encode the index; `fingerprints` gives each file's trusted fingerprint (a file
    /// without one is re-read on the next open).
    pub(crate) fn encode_into(&self, fingerprints: &BTreeMap<String, Fingerprint>, out: &mut Writer) {
        let mut files: Vec<(&String, FileSlots)> = self.files.iter().map(|(path, file)| (path, *file)).collect();
        // Slot order, so that renumbering keeps every posting list sorted.
        files.sort_by_key(|(_, file)| file.first);
        out.usize(files.len());
        for (path, file) in &files {
            out.str(path);
            match fingerprints.get(*path) {
                Some(print) => {
                    out.bool(true);
                    out.u64(print.len);
                    out.i64(print.mtime_ns);
                    out.i64(print.ctime_ns);
                    out.u64(print.inode);
                }
                None => out.bool(false),
            }
            out.u64(u64::from(file.len));
        }
        let stored =
            || files.iter().flat_map(|(_, file)| file.range()).filter_map(|slot| Some((slot, self.slot(slot)?)));
        // The shared parts, numbered by first use.
        let mut contexts: HashMap<*const Context, usize> = HashMap::new();
        let mut dates: HashMap<*const Dates, usize> = HashMap::new();
        let (mut context_list, mut dates_list) = (Vec::new(), Vec::new());
        for (_, entry) in stored() {
            let next = contexts.len();
            contexts.entry(Arc::as_ptr(&entry.event.context)).or_insert_with(|| {
                context_list.push(&*entry.event.context);
                next
            });
            let next = dates.len();
            dates.entry(Arc::as_ptr(&entry.event.dates)).or_insert_with(|| {
                dates_list.push(&*entry.event.dates);
                next
            });
        }
        out.usize(context_list.len());
        for context in context_list {
            out.strings(&context.headings);
            out.str(&context.speaker_id);
            out.str(&context.speaker_display);
            // The label and the casefolded speakers are mostly derived from the id and the
            // display name: a flag says so instead of the text.
            let label = Label::of(context);
            out.u64(label as u64 | if context.speakers.is_empty() { 0 } else { HAS_SPEAKERS });
            if label == Label::Other {
                out.str(&context.speaker_label);
            }
            out.str(&context.speaker_kind);
            out.str(&context.principal_id);
            out.option_str(context.visibility.as_deref());
        }
        out.usize(dates_list.len());
        for value in dates_list {
            out.option_str(value.date.as_deref());
            out.strings(&value.dates);
        }
        let mut remap = vec![NO_SLOT; self.slots.len()];
        let mut next = 0u32;
        for (_, file) in &files {
            let mut previous = Previous::default();
            for (slot, entry) in file.range().filter_map(|slot| Some((slot, self.slot(slot)?))) {
                if let Some(cell) = remap.get_mut(slot as usize) {
                    *cell = next;
                }
                next += 1;
                encode_event(out, self.length(slot), entry, &contexts, &dates, &mut previous);
            }
        }
        out.end_part();
        out.u64(u64::from(next));
        // Postings of removed files point at slots without an event: not stored. Without
        // removed files the slots keep their numbers and the lists are copied as they are.
        let renumbered = remap.iter().enumerate().any(|(slot, to)| *to as usize != slot);
        let live = |slot: u32| remap.get(slot as usize).is_some_and(|s| *s != NO_SLOT);
        let stored_terms = (self.dictionary.iter())
            .filter_map(|(id, text)| Some((text, self.postings.get(id as usize)?)))
            .filter(|(_, list)| !renumbered || list.iter().any(|p| live(p.slot)));
        // Sorted, so that each term shares a long prefix with the one before it.
        let mut stored_terms: Vec<(&str, &PostingList)> = stored_terms.collect();
        stored_terms.sort_unstable_by_key(|(text, _)| *text);
        out.usize(stored_terms.len());
        let mut previous: &str = "";
        for (text, list) in stored_terms {
            let kept;
            let list = if renumbered {
                let mut fresh = PostingList::default();
                for posting in list.iter() {
                    if let Some(&slot) = remap.get(posting.slot as usize).filter(|s| **s != NO_SLOT) {
                        fresh.push(Posting { slot, ..posting });
                    }
                }
                kept = fresh;
                &kept
            } else {
                list
            };
            let shared = shared_prefix(previous, text);
            out.usize(shared);
            out.str(text.get(shared..).unwrap_or_default());
            previous = text;
            out.usize(list.len());
            out.usize(list.stored_len());
            list.write_stored(|part| out.raw(part));
        }
        out.end_part();
    }

    /// Decode an index saved by [`Index::encode_into`] from its two parts, on two
    /// threads when the machine has them, with the stored fingerprints; trust and v2
    /// preference are resolved afresh. `disk` gives the file on disk of a workspace path,
    /// for the contents stored as byte ranges. The callers check the parts' checksums.
    pub(crate) fn decode(
        first: &mut Reader<'_>,
        second: &mut Reader<'_>,
        disk: impl Fn(&str) -> Option<PathBuf>,
    ) -> Result<Decoded, Damaged> {
        let (events, terms) = if std::thread::available_parallelism().map_or(1, usize::from) >= 2 {
            std::thread::scope(|scope| {
                let terms = scope.spawn(|| decode_terms(second));
                let events = decode_events(first, &disk);
                // A panic in the decoder is a bug: pass it on unchanged rather than relabel it.
                (events, terms.join().unwrap_or_else(|bug| std::panic::resume_unwind(bug)))
            })
        } else {
            (decode_events(first, &disk), decode_terms(second))
        };
        let (events, terms) = (events?, terms?);
        if events.slots != terms.slots {
            return Err(Damaged("parts of different indexes"));
        }
        let EventsPart { mut index, prints, contexts, context_slots, .. } = events;
        index.dictionary = terms.dictionary;
        index.postings = terms.postings;
        for (context, slots) in contexts.iter().zip(context_slots) {
            for speaker in &context.speakers {
                index.speaker_slots.entry(speaker.clone()).or_default().extend_from_slice(&slots);
            }
        }
        // Each context's slots ascend; a speaker's list joins several contexts' runs.
        index.speaker_slots.values_mut().for_each(|slots| slots.sort_unstable());
        index.resolve();
        Ok((index, prints))
    }

    /// [`Index::decode`] of a whole payload in memory (its checksums not checked).
    #[cfg(test)]
    pub(crate) fn decode_payload(payload: &[u8], disk: impl Fn(&str) -> Option<PathBuf>) -> Result<Decoded, Damaged> {
        let (mut first, mut second) = split_parts(payload).ok_or(Damaged("bad part length"))?;
        let (first_len, second_len) = (first.len() as u64, second.len() as u64);
        let mut first = Reader::streaming(&mut first, first_len);
        Index::decode(&mut first, &mut Reader::streaming(&mut second, second_len), disk)
    }

    /// The index with freed slots and unused terms dropped, through its encoding (see
    /// `Index::rebuild`); `None` if it does not decode, which would be a bug.
    pub(super) fn compacted(&self) -> Option<Index> {
        let disks: HashMap<&str, &Path> = (self.files.iter())
            .filter_map(|(path, file)| Some((path.as_str(), self.slot(file.first)?.event.file.disk()?)))
            .collect();
        let mut out = Writer::default();
        self.encode_into(&BTreeMap::new(), &mut out);
        let (mut first, mut second) = out.memory_parts()?;
        let (first_len, second_len) = (first.len() as u64, second.len() as u64);
        let (index, _) = Index::decode(
            &mut Reader::streaming(&mut first, first_len),
            &mut Reader::streaming(&mut second, second_len),
            |path| disks.get(path).map(|disk| disk.to_path_buf()),
        )
        .ok()?;
        Some(index)
    }
}

/// A decoded index and the fingerprints stored with it.
pub(crate) type Decoded = (Index, BTreeMap<String, Option<Fingerprint>>);

/// The first part of a payload, decoded: the files and their events.
struct EventsPart {
    index: Index,
    prints: BTreeMap<String, Option<Fingerprint>>,
    contexts: Vec<Arc<Context>>,
    /// Per context number, its events' slots: the speaker lists are filled per context
    /// at the end, not by looking up each event's speakers.
    context_slots: Vec<Vec<u32>>,
    /// The number of slots.
    slots: u32,
}

/// The second part of a payload, decoded: the terms and their postings.
struct TermsPart {
    dictionary: Terms,
    postings: Vec<PostingList>,
    /// The number of slots the postings point into.
    slots: u32,
}

fn decode_events(input: &mut Reader<'_>, disk: &impl Fn(&str) -> Option<PathBuf>) -> Result<EventsPart, Damaged> {
    let file_count = input.count()?;
    let mut listed: Vec<(String, Option<Fingerprint>, u32)> = Vec::with_capacity(file_count);
    for _ in 0..file_count {
        let path = input.string()?;
        let print = if input.bool()? {
            Some(Fingerprint { len: input.u64()?, mtime_ns: input.i64()?, ctime_ns: input.i64()?, inode: input.u64()? })
        } else {
            None
        };
        listed.push((path, print, input.u32()?));
    }
    let mut index = Index::new();
    // Every event takes a few bytes: a lying count cannot reserve more than the input.
    let events = listed.iter().map(|(_, _, len)| *len as usize).fold(0usize, usize::saturating_add);
    let events = events.min(input.remaining());
    // Reserved at once: a million slots grown by doubling would be copied twice over.
    index.slots.reserve_exact(events);
    index.lengths.reserve_exact(events);
    let context_count = input.count()?;
    let mut contexts = Vec::with_capacity(context_count);
    for _ in 0..context_count {
        let (headings, speaker_id, speaker_display) = (input.strings()?, input.string()?, input.string()?);
        let flags = input.u64()?;
        let speaker_label = match flags & !HAS_SPEAKERS {
            0 => input.string()?,
            label => Label::from_code(label).ok_or(Damaged("bad speaker label"))?.text(&speaker_id, &speaker_display),
        };
        let mut context = Context {
            headings,
            speaker_id,
            speaker_display,
            speaker_label,
            speaker_kind: input.string()?,
            principal_id: input.string()?,
            visibility: input.option_string()?,
            speakers: Vec::new(),
        };
        if flags & HAS_SPEAKERS != 0 {
            context.speakers = context.source_speakers();
        }
        contexts.push(index.interner.adopt_context(context));
    }
    let dates_count = input.count()?;
    let mut dates = Vec::with_capacity(dates_count);
    for _ in 0..dates_count {
        let value = Dates { date: input.option_string()?, dates: input.strings()? };
        dates.push(index.interner.adopt_dates(value));
    }
    let mut context_slots: Vec<Vec<u32>> = vec![Vec::new(); contexts.len()];
    let shared = Shared { contexts, dates };
    let mut prints = BTreeMap::new();
    let mut first = 0u32;
    let mut decoded = Vec::new();
    for (path, print, len) in listed {
        let kind = FileKind::of(&path).ok_or(Damaged("path outside topics/ and sources/"))?;
        let end = first.checked_add(len).ok_or(Damaged("too many events"))?;
        index.live.grow(end as usize);
        index.grounded.grow(end as usize);
        let mut arena = TextArena::default();
        decoded.clear();
        decoded.reserve((len as usize).min(input.remaining()));
        let mut previous = Previous::default();
        let mut on_disk = false;
        for _ in first..end {
            let (event, span, is_on_disk) = decode_event(input, &shared, &mut previous, &mut arena)?;
            on_disk |= is_on_disk;
            decoded.push((event, span, previous.context));
        }
        let disk = if on_disk { Some(disk(&path).ok_or(Damaged("contents on disk without a file"))?) } else { None };
        let text = arena.finish(&path, disk);
        for (slot, (parts, span, context)) in (first..).zip(decoded.drain(..)) {
            let length = parts.length;
            let event = parts.into_event(&text, span);
            // Search breaks ties by slot order, which must be (line, event id) order.
            let previous = index.slots.last().and_then(Option::as_ref).filter(|_| slot > first);
            if previous.is_some_and(|p| (p.event.line, p.event.event_id()) > (event.line, event.event_id())) {
                return Err(Damaged("events out of order"));
            }
            index.grounded.set(slot, event.has_refs());
            if let Some(slots) = context_slots.get_mut(context).filter(|_| !event.context.speakers.is_empty()) {
                slots.push(slot);
            }
            index.slots.push(Some(Slot { event, kind }));
            index.lengths.push(length);
        }
        if index.files.insert(path.clone(), FileSlots { first, len }).is_some() {
            return Err(Damaged("a file twice"));
        }
        prints.insert(path, print);
        first = end;
    }
    if !input.is_empty() {
        return Err(Damaged("bytes after the events"));
    }
    Ok(EventsPart { index, prints, contexts: shared.contexts, context_slots, slots: first })
}

fn decode_terms(input: &mut Reader<'_>) -> Result<TermsPart, Damaged> {
    let slots = input.u32()?;
    let term_count = input.count()?;
    let mut dictionary = Terms::with_capacity(term_count, 0);
    let mut postings = Vec::with_capacity(term_count);
    let mut text = String::new();
    for id in 0..term_count {
        let kept = input.usize()?;
        if kept > text.len() || !text.is_char_boundary(kept) {
            return Err(Damaged("bad term prefix"));
        }
        let rest = input.str()?;
        // Strictly ascending, so each term is there once: the part after the shared
        // prefix sorts after the previous term's.
        if id > 0 && rest.as_bytes() <= text.as_bytes().get(kept..).unwrap_or_default() {
            return Err(Damaged("terms out of order"));
        }
        text.truncate(kept);
        text.push_str(rest);
        let count = input.count()?;
        let len = input.count()?;
        let bytes = input.take(len)?.to_vec();
        postings.push(PostingList::from_bytes(bytes, count, slots).ok_or(Damaged("bad posting list"))?);
        dictionary.push_unindexed(&text).ok_or(Damaged("too many terms"))?;
    }
    if !input.is_empty() {
        return Err(Damaged("bytes after the index"));
    }
    dictionary.index_all();
    Ok(TermsPart { dictionary, postings, slots })
}

/// The trust to store for a slot: a source event's own (its file says it); a topic
/// event's is recomputed on every load, so `Unknown`, as parsing leaves it.
fn stored_trust(entry: &Slot) -> Trust {
    if entry.kind == FileKind::Topic { Trust::Unknown } else { entry.event.trust_state }
}

/// What an event's encoding is relative to: the previous event of its file.
#[derive(Default)]
struct Previous {
    line: usize,
    id: String,
    /// Where the previous content on disk ended.
    disk_end: u64,
    context: usize,
    dates: usize,
}

/// The parts every event refers to by number.
struct Shared {
    contexts: Vec<Arc<Context>>,
    dates: Vec<Arc<Dates>>,
}

/// Context flag: the casefolded speakers are those of a source event (else none).
const HAS_SPEAKERS: u64 = 1 << 2;

/// How a context's speaker label follows from its id and display name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Label {
    /// Stored as it is.
    Other = 0,
    /// `display (id)`.
    Both = 1,
    /// The display name.
    Display = 2,
    /// The id.
    Id = 3,
}

impl Label {
    fn of(context: &Context) -> Label {
        [Label::Both, Label::Display, Label::Id]
            .into_iter()
            .find(|label| label.text(&context.speaker_id, &context.speaker_display) == context.speaker_label)
            .unwrap_or(Label::Other)
    }

    fn from_code(code: u64) -> Option<Label> {
        [Label::Other, Label::Both, Label::Display, Label::Id].into_iter().find(|label| *label as u64 == code)
    }

    fn text(self, id: &str, display: &str) -> String {
        match self {
            Label::Other => String::new(),
            Label::Both => format!("{display} ({id})"),
            Label::Display => display.to_owned(),
            Label::Id => id.to_owned(),
        }
    }
}

const FLAG_SPEAKER_TRUSTED: u64 = 1 << 2;
const TIER_SHIFT: u64 = 3;
const FLAG_ON_DISK: u64 = 1 << 5;
/// Event flag: the event's refs are its own id (most source events); else the list follows.
const FLAG_OWN_REFS: u64 = 1 << 6;
/// Tier codes: none, owner, paired, or another one whose name follows.
const TIER_OTHER: u64 = 3;

fn tier_code(tier: Option<AuthorityTier>) -> u64 {
    match tier {
        None => 0,
        Some(AuthorityTier::Owner) => 1,
        Some(AuthorityTier::Paired) => 2,
        Some(_) => TIER_OTHER,
    }
}

fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

fn unzigzag(raw: u64) -> i64 {
    ((raw >> 1) as i64) ^ -((raw & 1) as i64)
}

/// The length of the longest common prefix of `a` and `b` that ends on a character boundary.
fn shared_prefix(a: &str, b: &str) -> usize {
    let mut len = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    while !a.is_char_boundary(len) {
        len -= 1;
    }
    len
}

fn encode_event(
    out: &mut Writer,
    length: u32,
    entry: &Slot,
    contexts: &HashMap<*const Context, usize>,
    dates: &HashMap<*const Dates, usize>,
    previous: &mut Previous,
) {
    let event = &entry.event;
    out.u64(u64::from(length));
    out.u64(zigzag(event.line as i64 - previous.line as i64));
    previous.line = event.line;
    let id = event.event_id();
    let shared = shared_prefix(&previous.id, id);
    out.usize(shared);
    out.str(id.get(shared..).unwrap_or_default());
    previous.id.clear();
    previous.id.push_str(id);
    let trust = match stored_trust(entry) {
        Trust::Trusted => 0,
        Trust::Pending => 1,
        Trust::Unknown => 2,
    };
    let content = event.stored_content();
    let on_disk = matches!(content, StoredContent::OnDisk { .. });
    out.u64(
        trust
            | if event.speaker_trusted { FLAG_SPEAKER_TRUSTED } else { 0 }
            | tier_code(event.authority_tier) << TIER_SHIFT
            | if on_disk { FLAG_ON_DISK } else { 0 }
            | if matches!(event.refs, Refs::Own) { FLAG_OWN_REFS } else { 0 },
    );
    match content {
        StoredContent::Inline(text) => out.str(text),
        StoredContent::OnDisk { len, span } => {
            out.u64(u64::from(len));
            out.u64(zigzag(span.offset.wrapping_sub(previous.disk_end) as i64));
            out.fixed_u32(span.checksum);
            previous.disk_end = span.offset.wrapping_add(u64::from(len));
        }
    }
    if let Refs::List(list) = &event.refs {
        out.usize(list.len());
        list.iter().for_each(|r| out.str(r));
    }
    if tier_code(event.authority_tier) == TIER_OTHER {
        out.str(event.authority_tier.map_or("", AuthorityTier::as_str));
    }
    let context = contexts.get(&Arc::as_ptr(&event.context)).copied().unwrap_or(0);
    out.u64(zigzag(context as i64 - previous.context as i64));
    previous.context = context;
    let dates = dates.get(&Arc::as_ptr(&event.dates)).copied().unwrap_or(0);
    out.u64(zigzag(dates as i64 - previous.dates as i64));
    previous.dates = dates;
}

/// One event of a file, with its document length, waiting for its file's text.
struct DecodedEvent {
    length: u32,
    refs: Refs,
    context: Arc<Context>,
    dates: Arc<Dates>,
    line: usize,
    trust_state: Trust,
    speaker_trusted: bool,
    authority_tier: Option<AuthorityTier>,
}

impl DecodedEvent {
    fn into_event(self, file: &Arc<FileText>, span: TextSpan) -> StoredEvent {
        StoredEvent {
            file: Arc::clone(file),
            span,
            refs: self.refs,
            context: self.context,
            dates: self.dates,
            line: self.line,
            trust_state: self.trust_state,
            speaker_trusted: self.speaker_trusted,
            authority_tier: self.authority_tier,
        }
    }
}

/// One event, its id and content added to `arena`; whether its content is on disk.
fn decode_event(
    input: &mut Reader<'_>,
    shared: &Shared,
    previous: &mut Previous,
    arena: &mut TextArena,
) -> Result<(DecodedEvent, TextSpan, bool), Damaged> {
    let length = input.u32()?;
    let line = i64::try_from(previous.line).ok().and_then(|line| line.checked_add(unzigzag(input.u64().ok()?)));
    let line = line.and_then(|line| usize::try_from(line).ok()).ok_or(Damaged("bad line"))?;
    previous.line = line;
    let kept = input.usize()?;
    if kept > previous.id.len() || !previous.id.is_char_boundary(kept) {
        return Err(Damaged("bad id prefix"));
    }
    previous.id.truncate(kept);
    previous.id.push_str(input.str()?);
    let flags = input.u64()?;
    let trust_state = match flags & 3 {
        0 => Trust::Trusted,
        1 => Trust::Pending,
        2 => Trust::Unknown,
        _ => return Err(Damaged("bad trust state")),
    };
    if flags >> 7 != 0 {
        return Err(Damaged("bad flags"));
    }
    let speaker_trusted = flags & FLAG_SPEAKER_TRUSTED != 0;
    let tier = (flags >> TIER_SHIFT) & 3;
    let on_disk = flags & FLAG_ON_DISK != 0;
    let content = if on_disk {
        let len = input.u32()?;
        let offset = previous.disk_end.wrapping_add(unzigzag(input.u64()?) as u64);
        let checksum = input.fixed_u32()?;
        previous.disk_end = offset.checked_add(u64::from(len)).ok_or(Damaged("bad content range"))?;
        StoredContent::OnDisk { len, span: DiskSpan { offset, checksum } }
    } else {
        StoredContent::Inline(input.str()?)
    };
    let span = arena.push_stored(&previous.id, content).ok_or(Damaged("too much event text"))?;
    let refs = if flags & FLAG_OWN_REFS != 0 {
        Refs::Own
    } else {
        let len = input.count()?;
        (0..len).map(|_| input.str().map(Box::from)).collect::<Result<_, _>>().map(Refs::List)?
    };
    let authority_tier = match tier {
        0 => None,
        1 => Some(AuthorityTier::Owner),
        2 => Some(AuthorityTier::Paired),
        _ => Some(AuthorityTier::from_name(input.str()?).ok_or(Damaged("bad authority tier"))?),
    };
    let number =
        |previous: usize, delta: u64| usize::try_from(i64::try_from(previous).ok()?.checked_add(unzigzag(delta))?).ok();
    previous.context = number(previous.context, input.u64()?).ok_or(Damaged("no such context"))?;
    let context = shared.contexts.get(previous.context).ok_or(Damaged("no such context"))?;
    previous.dates = number(previous.dates, input.u64()?).ok_or(Damaged("no such dates"))?;
    let dates = shared.dates.get(previous.dates).ok_or(Damaged("no such dates"))?;
    let event = DecodedEvent {
        length,
        refs,
        context: Arc::clone(context),
        dates: Arc::clone(dates),
        line,
        trust_state,
        speaker_trusted,
        authority_tier,
    };
    Ok((event, span, on_disk))
}
