//! The index as cache bytes and back (the payload of `.scriptorium/retrieval-index.bin`,
//! framed by `crate::cache`).
//!
//! Layout, all integers LEB128 varints:
//! 1. files, in slot order: path, fingerprint (or none: re-read on the next open), event count;
//! 2. the shared event parts, each once: contexts (headings, speaker and frame
//!    metadata, casefolded speakers), then dates;
//! 3. per file, in slot order: the text of its events (ids and contents, one string),
//!    then each event: document length, id length, content length, line, refs (0: the
//!    event's own id, else count + 1 and the list), speaker-trusted, trust as the file
//!    gave it (never as resolution left it), authority tier, context number, dates number;
//! 4. terms: text, posting count, byte length, postings as in memory (see
//!    `index::postings`: per posting, slot delta and tf·4 + field flags).
//!
//! Loading appends postings as stored, without tokenizing anything; slots are renumbered
//! densely on save (freed slots dropped), in an order that keeps every list sorted.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use scriptorium_archive_format::AuthorityTier;

use super::postings::PostingList;
use super::stored::{Context, Dates, FileText, Refs, StoredEvent, TextSpan};
use super::{FileSlots, Index, Posting, Slot};
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
        out.bytes
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
            out.str(&context.speaker_label);
            out.str(&context.speaker_kind);
            out.str(&context.principal_id);
            out.option_str(context.visibility.as_deref());
            out.strings(&context.speakers);
        }
        out.usize(dates_list.len());
        for value in dates_list {
            out.option_str(value.date.as_deref());
            out.strings(&value.dates);
        }
        let mut remap = vec![NO_SLOT; self.slots.len()];
        let mut next = 0u32;
        for (_, file) in &files {
            // The file's text (every event's id and content), then its events.
            out.str(file.range().find_map(|slot| self.slot(slot)).map_or("", |entry| entry.event.file.text()));
            for (slot, entry) in file.range().filter_map(|slot| Some((slot, self.slot(slot)?))) {
                if let Some(cell) = remap.get_mut(slot as usize) {
                    *cell = next;
                }
                next += 1;
                encode_event(out, self.length(slot), entry, &contexts, &dates);
            }
        }
        // Postings of removed files
        // Postings of removed files point at slots without an event: not stored. Without
        // removed files the slots keep their numbers and the lists are copied as they are.
        let renumbered = remap.iter().enumerate().any(|(slot, to)| *to as usize != slot);
        let live = |slot: u32| remap.get(slot as usize).is_some_and(|s| *s != NO_SLOT);
        let stored_terms = (self.dictionary.iter())
            .filter_map(|(text, &id)| Some((text, self.postings.get(id as usize)?)))
            .filter(|(_, list)| !renumbered || list.iter().any(|p| live(p.slot)));
        out.usize(stored_terms.clone().count());
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
            out.str(text);
            out.usize(list.len());
            out.usize(list.bytes().len());
            out.raw(list.bytes());
        }
    }

    /// Decode an index saved by [`Index::encode`], with the stored fingerprints; trust
    /// and v2 preference are resolved afresh.
    pub(crate) fn decode(input: &mut Reader<'_>) -> Result<(Index, BTreeMap<String, Option<Fingerprint>>), Damaged> {
        let file_count = input.count()?;
        let mut listed: Vec<(String, Option<Fingerprint>, u32)> = Vec::with_capacity(file_count);
        for _ in 0..file_count {
            let path = input.string()?;
            let print = if input.bool()? {
                Some(Fingerprint {
                    len: input.u64()?,
                    mtime_ns: input.i64()?,
                    ctime_ns: input.i64()?,
                    inode: input.u64()?,
                })
            } else {
                None
            };
            listed.push((path, print, input.u32()?));
        }
        let mut index = Index::new();
        let context_count = input.count()?;
        let mut contexts = Vec::with_capacity(context_count);
        for _ in 0..context_count {
            let context = Context {
                headings: input.strings()?,
                speaker_id: input.string()?,
                speaker_display: input.string()?,
                speaker_label: input.string()?,
                speaker_kind: input.string()?,
                principal_id: input.string()?,
                visibility: input.option_string()?,
                speakers: input.strings()?,
            };
            contexts.push(index.interner.context(context));
        }
        let dates_count = input.count()?;
        let mut dates = Vec::with_capacity(dates_count);
        for _ in 0..dates_count {
            let value = Dates { date: input.option_string()?, dates: input.strings()? };
            dates.push(index.interner.dates(value));
        }
        let mut prints = BTreeMap::new();
        let mut first = 0u32;
        for (path, print, len) in listed {
            let kind = FileKind::of(&path).ok_or(Damaged("path outside topics/ and sources/"))?;
            let end = first.checked_add(len).ok_or(Damaged("too many events"))?;
            index.live.grow(end as usize);
            index.grounded.grow(end as usize);
            let text = input.string()?;
            let mut decoded = Vec::with_capacity((len as usize).min(input.remaining()));
            for _ in first..end {
                decoded.push(decode_event(input, &contexts, &dates)?);
            }
            let lengths: Vec<(u32, u32)> = decoded.iter().map(|event| event.text_lengths).collect();
            let (text, spans) = FileText::from_parts(&path, text, &lengths).ok_or(Damaged("bad event text"))?;
            for ((slot, parts), span) in (first..).zip(decoded).zip(spans) {
                let length = parts.length;
                let event = parts.into_event(&text, span);
                // Search breaks ties by slot order, which must be (line, event id) order.
                let previous = index.slots.last().and_then(Option::as_ref).filter(|_| slot > first);
                if previous.is_some_and(|p| (p.event.line, p.event.event_id()) > (event.line, event.event_id())) {
                    return Err(Damaged("events out of order"));
                }
                index.grounded.set(slot, event.has_refs());
                index.add_speakers(slot, &event.context.speakers);
                index.slots.push(Some(Slot { event, kind }));
                index.lengths.push(length);
            }
            if index.files.insert(path.clone(), FileSlots { first, len }).is_some() {
                return Err(Damaged("a file twice"));
            }
            prints.insert(path, print);
            first = end;
        }
        let term_count = input.count()?;
        let mut dictionary = HashMap::with_capacity_and_hasher(term_count, Default::default());
        let mut postings = Vec::with_capacity(term_count);
        for id in 0..term_count {
            let text: Box<str> = input.str()?.into();
            let count = input.count()?;
            let len = input.count()?;
            let bytes = input.take(len)?.to_vec();
            postings.push(PostingList::from_bytes(bytes, count, first).ok_or(Damaged("bad posting list"))?);
            let id = u32::try_from(id).map_err(|_| Damaged("too many terms"))?;
            if dictionary.insert(text, id).is_some() {
                return Err(Damaged("a term twice"));
            }
        }
        if !input.is_empty() {
            return Err(Damaged("bytes after the index"));
        }
        index.dictionary = dictionary;
        index.postings = postings;
        index.resolve();
        Ok((index, prints))
    }
}

/// The trust to store for a slot: a source event's own (its file says it); a topic
/// event's is recomputed on every load, so `Unknown`, as parsing leaves it.
fn stored_trust(entry: &Slot) -> Trust {
    if entry.kind == FileKind::Topic { Trust::Unknown } else { entry.event.trust_state }
}

fn encode_event(
    out: &mut Writer,
    length: u32,
    entry: &Slot,
    contexts: &HashMap<*const Context, usize>,
    dates: &HashMap<*const Dates, usize>,
) {
    let event = &entry.event;
    out.u64(u64::from(length));
    let (id_len, content_len) = event.span.lengths();
    out.u64(u64::from(id_len));
    out.u64(u64::from(content_len));
    out.usize(event.line);
    match &event.refs {
        Refs::Own => out.u64(0),
        Refs::List(list) => {
            out.usize(list.len() + 1);
            list.iter().for_each(|r| out.str(r));
        }
    }
    out.bool(event.speaker_trusted);
    out.u64(match stored_trust(entry) {
        Trust::Trusted => 0,
        Trust::Pending => 1,
        Trust::Unknown => 2,
    });
    out.option_str(event.authority_tier.map(AuthorityTier::as_str));
    out.usize(contexts.get(&Arc::as_ptr(&event.context)).copied().unwrap_or(0));
    out.usize(dates.get(&Arc::as_ptr(&event.dates)).copied().unwrap_or(0));
}

/// One event of a file, with its document length, waiting for its file's text.
struct DecodedEvent {
    length: u32,
    text_lengths: (u32, u32),
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

fn decode_event(
    input: &mut Reader<'_>,
    contexts: &[Arc<Context>],
    dates: &[Arc<Dates>],
) -> Result<DecodedEvent, Damaged> {
    let length = input.u32()?;
    let text_lengths = (input.u32()?, input.u32()?);
    let line = input.usize()?;
    let refs = match input.usize()? {
        0 => Refs::Own,
        n => {
            let len = n - 1;
            if len > input.remaining() {
                return Err(Damaged("count beyond the end"));
            }
            (0..len).map(|_| input.str().map(Box::from)).collect::<Result<_, _>>().map(Refs::List)?
        }
    };
    let speaker_trusted = input.bool()?;
    let trust_state = match input.u64()? {
        0 => Trust::Trusted,
        1 => Trust::Pending,
        2 => Trust::Unknown,
        _ => return Err(Damaged("bad trust state")),
    };
    let authority_tier = match input.option_str()? {
        None => None,
        Some(name) => Some(AuthorityTier::from_name(name).ok_or(Damaged("bad authority tier"))?),
    };
    let context = contexts.get(input.usize()?).ok_or(Damaged("no such context"))?;
    let dates = dates.get(input.usize()?).ok_or(Damaged("no such dates"))?;
    Ok(DecodedEvent {
        length,
        text_lengths,
        refs,
        context: Arc::clone(context),
        dates: Arc::clone(dates),
        line,
        trust_state,
        speaker_trusted,
        authority_tier,
    })
}
