//! Power-loss states from a trace, in the manner of ALICE and SQLite's crash tests
//! (spec 04 §C4 T3).
//!
//! The model, per operation of the issued prefix:
//! - A write is durable once a later sync of its file succeeded; a directory-entry
//!   operation (create, rename, unlink) once a later sync of its directory succeeded (for
//!   a rename, the destination directory). Durable operations always survive.
//! - Unsynced directory operations survive or not. Half the states use an *ordered*
//!   journal (ext4, xfs): the survivors are every operation before a random cut that lies
//!   after the last sync. The other half choose each one independently (a weaker file
//!   system that reorders).
//! - Unsynced file data is kept, dropped (the file is empty), or torn at a 4 KiB page:
//!   the first pages kept and the rest zero-filled, garbage-filled or cut off.
//! - Inodes and directory entries persist separately: every inode the prefix created
//!   exists in the image, reachable only through the entries that survived (synced data
//!   whose entry was lost is unreachable; a surviving rename links its inode at the new
//!   name even if the entry that created it was lost). An operation on a directory
//!   that is not there is skipped.

use std::collections::BTreeSet;

use super::image::{Image, Op};

/// The page size at which unsynced writes tear.
const PAGE: usize = 4096;

/// Counts describing one generated state.
#[derive(Debug, Default)]
pub(super) struct Stats {
    pub(super) unsynced: usize,
    pub(super) dropped: usize,
    pub(super) torn: usize,
}

/// SplitMix64: tiny, seedable and good enough to pick crash states reproducibly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: usize) -> usize {
        usize::try_from(self.next()).unwrap_or(usize::MAX).checked_rem(bound).unwrap_or(0)
    }
}

/// What happens to one write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Kept,
    Dropped,
    Torn { pages: usize, fill: Fill },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fill {
    Zero,
    Garbage,
    Cut,
}

fn is_entry_op(op: &Op) -> bool {
    matches!(op, Op::Create { .. } | Op::Rename { .. } | Op::Unlink { .. })
}

/// Which operations a later sync in the same prefix made durable.
fn pinned(trace: &[Op]) -> Vec<bool> {
    let mut synced_files = BTreeSet::new();
    let mut synced_dirs = BTreeSet::new();
    let mut pinned = vec![false; trace.len()];
    for (index, op) in trace.iter().enumerate().rev() {
        let durable = match op {
            Op::SyncFile { node } => {
                synced_files.insert(*node);
                true
            }
            Op::SyncDir { node } => {
                synced_dirs.insert(*node);
                true
            }
            Op::Write { node, .. } => synced_files.contains(node),
            Op::Create { parent, .. } | Op::Unlink { parent, .. } => synced_dirs.contains(parent),
            Op::Rename { to_parent, .. } => synced_dirs.contains(to_parent),
        };
        if let Some(slot) = pinned.get_mut(index) {
            *slot = durable;
        }
    }
    pinned
}

fn torn(data: &[u8], pages: usize, fill: Fill, rng: &mut Rng) -> Vec<u8> {
    let keep = pages.saturating_mul(PAGE).min(data.len());
    let mut out = data.get(..keep).unwrap_or_default().to_vec();
    match fill {
        Fill::Zero => out.resize(data.len(), 0),
        Fill::Garbage => out.extend((keep..data.len()).map(|_| (rng.next() & 0xff) as u8)),
        Fill::Cut => {}
    }
    out
}

/// Build one crash state of `trace` (already cut to the issued prefix) over `base`.
pub(super) fn generate(base: &Image, trace: &[Op], seed: u64) -> (Image, Stats) {
    let mut rng = Rng(seed);
    let pinned = pinned(trace);
    let mut stats = Stats::default();

    // Ordered journal: everything up to the last sync is on disk, then a prefix of the rest.
    let ordered = rng.below(2) == 0;
    let last_sync = trace.iter().rposition(|op| matches!(op, Op::SyncFile { .. } | Op::SyncDir { .. }));
    let floor = last_sync.map_or(0, |index| index + 1);
    let cut = floor + rng.below(trace.len().saturating_sub(floor) + 1);

    let mut applied = vec![false; trace.len()];
    let mut fates = vec![Fate::Kept; trace.len()];
    for (index, op) in trace.iter().enumerate() {
        let durable = pinned.get(index).copied().unwrap_or(false);
        let (Some(slot), Some(fate)) = (applied.get_mut(index), fates.get_mut(index)) else { continue };
        if durable || matches!(op, Op::SyncFile { .. } | Op::SyncDir { .. }) {
            *slot = true;
            continue;
        }
        stats.unsynced += 1;
        if is_entry_op(op) {
            *slot = if ordered { index < cut } else { rng.below(2) == 0 };
        } else if let Op::Write { data, .. } = op {
            let pages = data.len().div_ceil(PAGE);
            *fate = match rng.below(4) {
                0 => Fate::Kept,
                1 => Fate::Dropped,
                _ => {
                    let fill = [Fill::Zero, Fill::Garbage, Fill::Cut].get(rng.below(3)).copied().unwrap_or(Fill::Cut);
                    Fate::Torn { pages: rng.below(pages.max(1)), fill }
                }
            };
            *slot = *fate != Fate::Dropped;
        }
        if !*slot || matches!(fate, Fate::Torn { .. }) {
            if matches!(fate, Fate::Torn { .. }) {
                stats.torn += 1;
            } else {
                stats.dropped += 1;
            }
        }
    }

    let mut image = base.clone();
    for op in trace {
        if let Op::Create { node, kind, .. } = op {
            image.allocate(*node, kind);
        }
    }
    for (index, op) in trace.iter().enumerate() {
        if !applied.get(index).copied().unwrap_or(false) {
            continue;
        }
        match (op, fates.get(index).copied().unwrap_or(Fate::Kept)) {
            (Op::Write { node, data }, Fate::Torn { pages, fill }) => {
                let data = torn(data, pages, fill, &mut rng);
                image.apply(&Op::Write { node: *node, data });
            }
            _ => {
                image.apply(op);
            }
        }
    }
    (image, stats)
}
