//! The workspace-wide rules that run after every batch of file changes (spec 02 §5,
//! §6.1): a legacy source event is not live when a v2 frame has the same id, and a
//! topic event is `trusted` iff every source it cites is a known trusted source event
//! (one pending or unresolvable citation makes it `pending`; citing nothing leaves it
//! `unknown`). Nothing here is cached, so a promotion shows on the next refresh.

use std::collections::{HashMap, HashSet};

use super::Index;
use crate::bitset::BitSet;
use crate::event::{FileKind, Trust};
use crate::fxhash::FxBuildHasher;

impl Index {
    /// v2 preference, then topic trust resolution, then the live totals.
    pub(super) fn resolve(&mut self) {
        let has = |kind: FileKind| self.files.keys().any(|path| FileKind::of(path) == Some(kind));
        // Each rule reads every event of one kind, so it is skipped when a workspace has
        // no file it applies to (no legacy archives, no topics): a refresh then costs
        // one walk over the slots.
        let (has_legacy, has_topics) = (has(FileKind::LegacySource), has(FileKind::Topic));
        // FxHash: this runs over every event after every refresh, and ids are short.
        let mut v2_ids: HashSet<&str, FxBuildHasher> = HashSet::default();
        if has_legacy {
            for entry in self.slots.iter().flatten() {
                if entry.kind == FileKind::V2Source {
                    v2_ids.insert(entry.event.event_id());
                }
            }
        }
        let mut shadowed = BitSet::with_len(self.slots.len());
        // Source trust by id, in path order so that a repeated id resolves the same way
        // whatever order files arrived in (the last one wins, as in a Python dict).
        let mut source_trust: HashMap<&str, Trust, FxBuildHasher> = HashMap::default();
        if has_legacy || has_topics {
            for file in self.files.values() {
                for slot in file.range() {
                    let Some(entry) = self.slots.get(slot as usize).and_then(Option::as_ref) else { continue };
                    match entry.kind {
                        FileKind::LegacySource if v2_ids.contains(entry.event.event_id()) => {
                            shadowed.set(slot, true);
                        }
                        FileKind::LegacySource | FileKind::V2Source if has_topics => {
                            source_trust.insert(entry.event.event_id(), entry.event.trust_state);
                        }
                        FileKind::LegacySource | FileKind::V2Source | FileKind::Topic => {}
                    }
                }
            }
        }
        let mut topic_trust: Vec<(u32, Trust)> = Vec::new();
        let topic_files = self.files.iter().filter(|(path, _)| FileKind::of(path) == Some(FileKind::Topic));
        for slot in topic_files.flat_map(|(_, file)| file.range()) {
            let Some(entry) = self.slots.get(slot as usize).and_then(Option::as_ref) else { continue };
            let trust = if !entry.event.has_refs() {
                Trust::Unknown
            } else if entry.event.refs().all(|id| source_trust.get(id) == Some(&Trust::Trusted)) {
                Trust::Trusted
            } else {
                Trust::Pending
            };
            topic_trust.push((slot, trust));
        }
        for (slot, trust) in topic_trust {
            if let Some(Some(entry)) = self.slots.get_mut(slot as usize) {
                entry.event.trust_state = trust;
            }
        }
        let (mut docs, mut tokens) = (0u64, 0u64);
        for (slot, entry) in (0u32..).zip(&self.slots) {
            let live = entry.is_some() && !shadowed.contains(slot);
            self.live.set(slot, live);
            if live {
                docs += 1;
                tokens += u64::from(self.lengths.get(slot as usize).copied().unwrap_or(0));
            }
        }
        self.live_docs = docs;
        self.live_tokens = tokens;
        // A file's slots are in (line, event id) order and files are walked in path order.
        self.ranks.clear();
        self.ranks.resize(self.slots.len(), u32::MAX);
        let mut next = 0u32;
        for file in self.files.values() {
            for slot in file.range() {
                if let Some(rank) = self.ranks.get_mut(slot as usize) {
                    *rank = next;
                    next = next.saturating_add(1);
                }
            }
        }
    }
}
