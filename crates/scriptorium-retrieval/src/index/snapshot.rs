//! The index as cache bytes and back (the payload of `.scriptorium/retrieval-index.bin`,
//! framed by `crate::cache`).
//!
//! Layout, all integers LEB128 varints:
//! 1. files, in slot order: path, fingerprint (or none: re-read on the next open), event count;
//! 2. events, in the same order: document length, then every `MemoryEvent` field except
//!    the path (the file's) — trust as the file gave it, never as resolution left it;
//! 3. terms: text, posting count, postings as (slot delta, tf and flags).
//!
//! Loading appends postings as stored, without tokenizing anything; slots are renumbered
//! densely on save (freed slots dropped), in an order that keeps every list sorted.

use std::collections::{BTreeMap, HashMap};

use scriptorium_archive_format::AuthorityTier;

use super::{FileSlots, Index, Posting, Slot};
use crate::cache::codec::{Damaged, Reader, Writer};
use crate::cache::fingerprint::Fingerprint;
use crate::event::{FileKind, MemoryEvent, Trust};
use crate::filter::event_speakers;

/// Marks a slot that a saved file does not hold.
const NO_SLOT: u32 = u32::MAX;

impl Index {
    /// Encode the index; `fingerprints` gives each file's trusted fingerprint (a file
    /// without one is re-read on the next open).
    pub(crate) fn encode(&self, fingerprints: &BTreeMap<String, Fingerprint>) -> Vec<u8> {
        let mut out = Writer::default();
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
        let mut remap = vec![NO_SLOT; self.slots.len()];
        let mut next = 0u32;
        for (_, file) in &files {
            for slot in file.range() {
                let Some(entry) = self.slot(slot) else { continue };
                if let Some(cell) = remap.get_mut(slot as usize) {
                    *cell = next;
                }
                next += 1;
                out.u64(u64::from(self.length(slot)));
                encode_event(&mut out, &entry.event, stored_trust(entry));
            }
        }
        // Postings of removed files point at slots without an event: not stored.
        let terms: Vec<(&str, Vec<(u32, u32)>)> = self
            .dictionary
            .iter()
            .filter_map(|(text, &id)| {
                let list = self.postings.get(id as usize)?;
                let kept: Vec<(u32, u32)> = (list.iter())
                    .filter_map(|p| Some((remap.get(p.slot as usize).copied().filter(|s| *s != NO_SLOT)?, p.packed)))
                    .collect();
                (!kept.is_empty()).then_some((&**text, kept))
            })
            .collect();
        out.usize(terms.len());
        for (text, list) in terms {
            out.str(text);
            out.usize(list.len());
            let mut previous = 0u32;
            for (slot, packed) in list {
                out.u64(u64::from(slot.wrapping_sub(previous)));
                out.u64(u64::from(packed));
                previous = slot;
            }
        }
        out.bytes
    }

    /// Decode an index saved by [`Index::encode`], with the stored fingerprints; trust
    /// and v2 preference are resolved afresh.
    pub(crate) fn decode(bytes: &[u8]) -> Result<(Index, BTreeMap<String, Option<Fingerprint>>), Damaged> {
        let mut input = Reader::new(bytes);
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
        let mut prints = BTreeMap::new();
        let mut first = 0u32;
        for (path, print, len) in listed {
            let kind = FileKind::of(&path).ok_or(Damaged("path outside topics/ and sources/"))?;
            let end = first.checked_add(len).ok_or(Damaged("too many events"))?;
            index.live.grow(end as usize);
            index.grounded.grow(end as usize);
            for slot in first..end {
                let length = input.u32()?;
                let event = decode_event(&mut input, &path)?;
                // Search breaks ties by slot order, which must be (line, event id) order.
                let previous = index.slots.last().and_then(Option::as_ref).filter(|_| slot > first);
                if previous.is_some_and(|p| (p.event.line, &p.event.event_id) > (event.line, &event.event_id)) {
                    return Err(Damaged("events out of order"));
                }
                index.grounded.set(slot, !event.refs.is_empty());
                let speakers = event_speakers(&event);
                index.add_speakers(slot, &speakers);
                index.slots.push(Some(Slot { event, kind, speakers }));
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
            let text = input.str()?;
            let count = input.count()?;
            let mut list = Vec::with_capacity(count);
            let mut slot = 0u32;
            for at in 0..count {
                let delta = input.u32()?;
                if at > 0 && delta == 0 {
                    return Err(Damaged("posting list not sorted"));
                }
                slot = slot.checked_add(delta).filter(|s| *s < first).ok_or(Damaged("posting beyond the slots"))?;
                list.push(Posting { slot, packed: input.u32()? });
            }
            postings.push(list);
            let id = u32::try_from(id).map_err(|_| Damaged("too many terms"))?;
            if dictionary.insert(text.into(), id).is_some() {
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

fn encode_event(out: &mut Writer, event: &MemoryEvent, trust: Trust) {
    out.str(&event.event_id);
    out.usize(event.line);
    out.strings(&event.headings);
    out.option_str(event.date.as_deref());
    out.strings(&event.dates);
    out.str(&event.content);
    out.strings(&event.refs);
    out.str(&event.speaker_id);
    out.str(&event.speaker_display);
    out.str(&event.speaker_label);
    out.bool(event.speaker_trusted);
    out.u64(match trust {
        Trust::Trusted => 0,
        Trust::Pending => 1,
        Trust::Unknown => 2,
    });
    out.str(&event.speaker_kind);
    out.str(&event.principal_id);
    out.option_str(event.authority_tier.map(AuthorityTier::as_str));
    out.option_str(event.visibility.as_deref());
}

fn decode_event(input: &mut Reader<'_>, path: &str) -> Result<MemoryEvent, Damaged> {
    Ok(MemoryEvent {
        event_id: input.string()?,
        path: path.to_owned(),
        line: input.usize()?,
        headings: input.strings()?,
        date: input.option_string()?,
        dates: input.strings()?,
        content: input.string()?,
        refs: input.strings()?,
        speaker_id: input.string()?,
        speaker_display: input.string()?,
        speaker_label: input.string()?,
        speaker_trusted: input.bool()?,
        trust_state: match input.u64()? {
            0 => Trust::Trusted,
            1 => Trust::Pending,
            2 => Trust::Unknown,
            _ => return Err(Damaged("bad trust state")),
        },
        speaker_kind: input.string()?,
        principal_id: input.string()?,
        authority_tier: match input.option_string()? {
            None => None,
            Some(name) => Some(AuthorityTier::from_name(&name).ok_or(Damaged("bad authority tier"))?),
        },
        visibility: input.option_string()?,
    })
}
