//! One term's posting list, delta-varint encoded in memory: a posting takes ~2.5 bytes
//! instead of 8, and the cache stores the same bytes followed by the skip table, so
//! loading checks the skip table (one entry per 64 postings) and the last block, and
//! copies, rather than walking every posting again.
//!
//! Each posting is two LEB128 varints: the slot minus the previous posting's slot (the
//! first: the slot itself), then `tf·4 + flags` (the two field flags of [`Posting`]).
//!
//! Every [`SKIP_EVERY`] postings a skip entry records where a block starts, so that a
//! filtered query decodes only the blocks that reach its candidates' slot ranges
//! ([`PostingList::for_each_within`]) instead of the whole list: 8 bytes per 64 postings,
//! kept in their stored form (two little-endian `u32`).
//!
//! Stored form (the cache's bytes for one list of `count` postings): the postings, then
//! `(count − 1) / 64` skip entries.

use std::ops::Range;

use super::{Posting, TF_MASK};

/// The field flags sit in the top two bits of a posting's packed word.
const FLAG_SHIFT: u32 = 30;

/// Postings per block between two skip entries.
const SKIP_EVERY: u32 = 64;

/// Bytes of one skip entry: the slot its block's first delta is taken from, then its offset.
const SKIP_BYTES: usize = 8;

/// Where block `i + 1` of a list starts (entry `i`): the slot its first delta is taken
/// from (the last slot of the block before) and its byte offset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Skip {
    before: u32,
    offset: u32,
}

/// A few slots whose postings are looked up in several lists: sorted, distinct, and
/// their runs of consecutive slots, the ranges whose blocks are read.
#[derive(Clone, Debug, Default)]
pub(crate) struct SortedSlots {
    slots: Vec<u32>,
    runs: Vec<Range<u32>>,
}

impl SortedSlots {
    /// `slots` must be sorted and distinct.
    pub(crate) fn new(slots: Vec<u32>) -> Self {
        let mut runs: Vec<Range<u32>> = Vec::new();
        for &slot in &slots {
            match runs.last_mut() {
                Some(last) if last.end == slot => last.end = slot.saturating_add(1),
                _ => runs.push(slot..slot.saturating_add(1)),
            }
        }
        SortedSlots { slots, runs }
    }
}

/// A term's postings, sorted by slot.
#[derive(Clone, Debug, Default)]
pub(crate) struct PostingList {
    bytes: Vec<u8>,
    /// The skip entries, [`SKIP_BYTES`] each, as the cache stores them.
    skips: Vec<u8>,
    /// The slot of the last posting.
    last: u32,
    len: u32,
}

impl PostingList {
    /// No postings.
    pub(crate) const EMPTY: PostingList = PostingList { bytes: Vec::new(), skips: Vec::new(), last: 0, len: 0 };

    /// Append a posting at a slot above every slot in the list.
    pub(crate) fn push(&mut self, posting: Posting) {
        if self.len > 0 && self.len.is_multiple_of(SKIP_EVERY) {
            let offset = u32::try_from(self.bytes.len()).unwrap_or(u32::MAX);
            self.skips.extend_from_slice(&self.last.to_le_bytes());
            self.skips.extend_from_slice(&offset.to_le_bytes());
        }
        let previous = if self.len == 0 { 0 } else { self.last };
        put(&mut self.bytes, u64::from(posting.slot.wrapping_sub(previous)));
        put(&mut self.bytes, packed_to_word(posting.packed));
        self.last = posting.slot;
        self.len = self.len.saturating_add(1);
    }

    pub(crate) fn iter(&self) -> PostingIter<'_> {
        PostingIter { bytes: &self.bytes, slot: 0 }
    }

    /// The postings from the block that holds the first posting at or after `slot` (a
    /// few before it may come first): a cursor for a window of slots.
    pub(crate) fn iter_from(&self, slot: u32) -> PostingIter<'_> {
        match self.skips_below(slot).checked_sub(1).and_then(|block| self.skip(block)) {
            Some(skip) => {
                PostingIter { bytes: self.bytes.get(skip.offset as usize..).unwrap_or_default(), slot: skip.before }
            }
            None => self.iter(),
        }
    }

    fn skip_count(&self) -> usize {
        self.skips.len() / SKIP_BYTES
    }

    fn skip(&self, at: usize) -> Option<Skip> {
        let entry = self.skips.get(at * SKIP_BYTES..(at + 1) * SKIP_BYTES)?;
        let word = |from: usize| entry.get(from..from + 4).and_then(|b| b.try_into().ok()).map(u32::from_le_bytes);
        Some(Skip { before: word(0)?, offset: word(4)? })
    }

    /// How many skip entries come before the first whose block starts at or after
    /// `slot` (entries are sorted by `before`).
    fn skips_below(&self, slot: u32) -> usize {
        let (mut low, mut high) = (0, self.skip_count());
        while low < high {
            let middle = low + (high - low) / 2;
            if self.skip(middle).is_some_and(|skip| skip.before < slot) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        low
    }

    /// Call `visit` with every posting whose slot lies in one of `ranges` (sorted,
    /// disjoint), in slot order, decoding only the blocks that reach a range.
    pub(crate) fn for_each_within(&self, ranges: &[Range<u32>], mut visit: impl FnMut(Posting)) {
        let mut ranges = ranges.iter().filter(|range| !range.is_empty()).peekable();
        let mut next_block = 0;
        while let Some(range) = ranges.peek() {
            // Blocks ending below the range cannot reach it; nor can those already read.
            let block = self.skips_below(range.start).max(next_block);
            let postings = if block == 0 {
                self.iter()
            } else if let Some(skip) = self.skip(block - 1) {
                let bytes = self.bytes.get(skip.offset as usize..).unwrap_or_default();
                PostingIter { bytes, slot: skip.before }
            } else {
                return; // beyond the last block
            };
            // The block's last slot (the next block's deltas start from it), if any.
            let last = self.skip(block).map_or(u32::MAX, |skip| skip.before);
            for posting in postings.take(SKIP_EVERY as usize) {
                while ranges.next_if(|range| range.end <= posting.slot).is_some() {}
                match ranges.peek() {
                    None => return,
                    Some(range) if range.start <= posting.slot => visit(posting),
                    // The rest of the block lies before the next range.
                    Some(range) if range.start > last => break,
                    Some(_) => {}
                }
            }
            next_block = block + 1;
        }
    }

    /// Call `visit` with each posting at one of `slots`, and that slot's index among
    /// them, decoding only the blocks that hold them.
    pub(crate) fn for_each_at(&self, slots: &SortedSlots, mut visit: impl FnMut(usize, Posting)) {
        let mut next = 0;
        self.for_each_within(&slots.runs, |posting| {
            while slots.slots.get(next).is_some_and(|&slot| slot < posting.slot) {
                next += 1;
            }
            if slots.slots.get(next) == Some(&posting.slot) {
                visit(next, posting);
            }
        });
    }

    /// The length of the stored form (see the module documentation).
    pub(crate) fn stored_len(&self) -> usize {
        self.bytes.len() + self.skips.len()
    }

    /// Give `write` the stored form, in parts.
    pub(crate) fn write_stored(&self, mut write: impl FnMut(&[u8])) {
        write(&self.bytes);
        write(&self.skips);
    }

    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    /// Give back over-reserved memory.
    pub(crate) fn shrink(&mut self) {
        if self.bytes.capacity() > self.bytes.len() + self.bytes.len() / 8 {
            self.bytes.shrink_to_fit();
        }
        self.skips.shrink_to_fit();
    }

    /// A list of `count` postings from its stored form, with every slot below `slots`.
    /// `None` when the form does not hold together: its size, a skip entry out of order
    /// or out of range, the last block (walked: it gives the last slot). The other blocks
    /// are not walked (the cache file is checksummed as a whole); a bad varint found while
    /// decoding them later only ends the list, it never panics.
    pub(crate) fn from_bytes(mut stored: Vec<u8>, count: usize, slots: u32) -> Option<PostingList> {
        if count == 0 {
            return stored.is_empty().then_some(PostingList::EMPTY);
        }
        let len = u32::try_from(count).ok()?;
        let skip_count = (count - 1) / SKIP_EVERY as usize;
        let tail = skip_count.checked_mul(SKIP_BYTES)?;
        // Every posting takes 2 to 10 bytes (two varints of at most 5 bytes each).
        let postings_len = stored.len().checked_sub(tail).filter(|n| (2 * count..=10 * count).contains(n))?;
        let skips = stored.split_off(postings_len);
        let mut list = PostingList { bytes: stored, skips, last: 0, len };
        // Blocks start in order inside the postings, each at least one posting (2 bytes)
        // after the one before, and name increasing slots.
        let mut previous: Option<Skip> = None;
        for at in 0..skip_count {
            let skip = list.skip(at)?;
            let in_order = previous.is_none_or(|p| skip.before > p.before && skip.offset >= p.offset.saturating_add(2));
            if !in_order || (skip.offset as usize) < 2 || skip.offset as usize > postings_len - 2 {
                return None;
            }
            previous = Some(skip);
        }
        // The last block is walked in full: it must hold the postings left, in order,
        // end exactly with the bytes, and its last slot is the list's.
        let (start, from) = previous.map_or((0, 0), |p| (p.offset as usize, p.before));
        let left = count - skip_count * SKIP_EVERY as usize;
        list.last = checked_block(list.bytes.get(start..)?, from, start == 0, left).filter(|last| *last < slots)?;
        Some(list)
    }
}

/// The slot of the last of the `count` postings making up all of `bytes` (deltas from
/// slot `from`; the first delta may be 0 only at the start of a list), or `None` when
/// they are not exactly that: a cut-off or overlong varint, a slot not above the one
/// before, a tf out of range, bytes left over.
fn checked_block(mut bytes: &[u8], from: u32, list_start: bool, count: usize) -> Option<u32> {
    let mut slot = from;
    for seen in 0..count {
        let delta = u32::try_from(take(&mut bytes)?).ok()?;
        if delta == 0 && !(list_start && seen == 0) {
            return None;
        }
        slot = slot.checked_add(delta)?;
        if take(&mut bytes)? >> 2 > u64::from(TF_MASK) {
            return None;
        }
    }
    bytes.is_empty().then_some(slot)
}

/// A posting's packed word (tf and flags) as stored: `tf·4 + flags`.
fn packed_to_word(packed: u32) -> u64 {
    (u64::from(packed & TF_MASK) << 2) | u64::from(packed >> FLAG_SHIFT)
}

fn put(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The next varint of `rest`, or `None` when it is cut off or too long.
#[inline]
fn take(rest: &mut &[u8]) -> Option<u64> {
    // Most words are one byte (small deltas, tf < 32): the loop is for the others.
    if let Some((&byte, tail)) = rest.split_first()
        && byte < 0x80
    {
        *rest = tail;
        return Some(u64::from(byte));
    }
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, tail) = rest.split_first()?;
        *rest = tail;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

/// The postings of one list, in slot order.
#[derive(Clone, Debug)]
pub(crate) struct PostingIter<'a> {
    bytes: &'a [u8],
    slot: u32,
}

impl Iterator for PostingIter<'_> {
    type Item = Posting;

    #[inline]
    fn next(&mut self) -> Option<Posting> {
        // Lists are checked when built or loaded, so a bad varint only ends the list.
        let (delta, word) = match *self.bytes {
            // The common posting: both words one byte.
            [delta, word, ..] if delta < 0x80 && word < 0x80 => {
                self.bytes = self.bytes.get(2..).unwrap_or_default();
                (u64::from(delta), u64::from(word))
            }
            _ => (take(&mut self.bytes)?, take(&mut self.bytes)?),
        };
        // The first delta is taken from slot 0, so it is the slot itself.
        self.slot = self.slot.wrapping_add(delta as u32);
        let tf = u32::try_from(word >> 2).unwrap_or(TF_MASK).min(TF_MASK);
        let flags = ((word & 3) as u32) << FLAG_SHIFT;
        Some(Posting { slot: self.slot, packed: tf | flags })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{IN_CONTENT, IN_PATH_HEADING};
    use super::*;

    fn stored(list: &PostingList) -> Vec<u8> {
        let mut out = Vec::new();
        list.write_stored(|part| out.extend_from_slice(part));
        assert_eq!(out.len(), list.stored_len());
        out
    }

    /// A list of `count` postings with gaps of 1 to 300 slots (one- and two-byte deltas).
    fn spread(count: u32) -> PostingList {
        let mut list = PostingList::default();
        let mut slot = 3u32;
        for n in 0..count {
            list.push(Posting { slot, packed: 1 + n % 5 });
            slot += 1 + (n * 37) % 300;
        }
        list
    }

    #[test]
    fn postings_round_trip_through_bytes() {
        let postings = [
            Posting { slot: 0, packed: 1 | IN_CONTENT },
            Posting { slot: 1, packed: 300 | IN_PATH_HEADING },
            Posting { slot: 70_000, packed: TF_MASK | IN_CONTENT | IN_PATH_HEADING },
            Posting { slot: u32::MAX - 1, packed: 2 },
        ];
        let mut list = PostingList::default();
        postings.iter().for_each(|p| list.push(*p));
        assert_eq!(list.iter().collect::<Vec<_>>(), postings);
        assert_eq!(list.len(), 4);
        let copy = PostingList::from_bytes(stored(&list), 4, u32::MAX).expect("valid");
        assert_eq!(copy.iter().collect::<Vec<_>>(), postings);
        assert_eq!(PostingList::from_bytes(Vec::new(), 0, 10).map(|list| list.len()), Some(0));
        // Wrong count, slot out of range, unsorted, cut off, bytes left over: all refused.
        assert!(PostingList::from_bytes(stored(&list), 3, u32::MAX).is_none());
        assert!(PostingList::from_bytes(stored(&list), 5, u32::MAX).is_none());
        assert!(PostingList::from_bytes(stored(&list), 4, u32::MAX - 1).is_none());
        assert!(PostingList::from_bytes(vec![5, 0, 0, 0, 5, 0, 0, 0], 2, 10).is_none());
        assert!(PostingList::from_bytes(vec![5, 0x80, 5, 0, 0, 0], 1, 10).is_none());
        assert!(PostingList::from_bytes(vec![5, 0, 1, 0, 5, 0, 0, 0], 1, 10).is_none());
        assert!(PostingList::from_bytes(vec![1], 0, 10).is_none());
    }

    #[test]
    fn loading_checks_the_skip_table_and_the_last_block() {
        for count in [1, 63, 64, 65, 128, 129, 1000] {
            let list = spread(count);
            let bytes = stored(&list);
            let loaded = PostingList::from_bytes(bytes.clone(), list.len(), u32::MAX).expect("valid");
            assert_eq!(loaded.skips, list.skips, "{count}");
            assert_eq!(loaded.iter().collect::<Vec<_>>(), list.iter().collect::<Vec<_>>(), "{count}");
            assert!(PostingList::from_bytes(bytes.clone(), list.len() + 1, u32::MAX).is_none(), "{count}");
            // The last block cut short (its last byte dropped, skip table kept).
            let mut cut = bytes.clone();
            cut.remove(list.bytes.len() - 1);
            assert!(PostingList::from_bytes(cut, list.len(), u32::MAX).is_none(), "{count}");
            assert!(PostingList::from_bytes(bytes.clone(), list.len(), list.last).is_none(), "{count}");
        }
        // A skip entry out of order, pointing outside the postings, or naming a slot
        // above a later one: refused without walking the blocks.
        let list = spread(200);
        let postings_len = list.bytes.len();
        let corrupt = |at: usize, value: u32| {
            let mut bytes = stored(&list);
            bytes
                .get_mut(postings_len + at..postings_len + at + 4)
                .expect("in range")
                .copy_from_slice(&value.to_le_bytes());
            PostingList::from_bytes(bytes, list.len(), u32::MAX)
        };
        assert!(corrupt(4, u32::MAX).is_none());
        assert!(corrupt(4 + SKIP_BYTES, 1).is_none());
        assert!(corrupt(SKIP_BYTES, 0).is_none());
        assert!(corrupt(2 * SKIP_BYTES, u32::MAX - 1).is_none());
        // Damage the decoder cannot see at load time (a bad varint inside an early
        // block) only ends the list when it is read: no panic.
        let mut bytes = stored(&list);
        bytes.get_mut(10..20).expect("in range").fill(0xff);
        let damaged = PostingList::from_bytes(bytes, list.len(), u32::MAX).expect("structure intact");
        assert!(damaged.iter().count() < list.len());
        let mut within = 0;
        damaged.for_each_within(&one(0..u32::MAX), |_| within += 1);
        assert!(within <= list.len());
    }

    fn one(range: Range<u32>) -> Vec<Range<u32>> {
        vec![range]
    }

    #[test]
    fn postings_within_ranges_are_exactly_those_listed() {
        let list = spread(1000);
        let slot = list.last + 1;
        let loaded = PostingList::from_bytes(stored(&list), list.len(), u32::MAX).expect("valid");
        assert_eq!(loaded.skips, list.skips);
        let all: Vec<Posting> = list.iter().collect();
        let cases: Vec<Vec<Range<u32>>> = vec![
            one(0..u32::MAX),
            vec![],
            vec![5..5, 0..3],
            one(3..4),
            one(slot..slot + 10),
            (0..slot).step_by(97).map(|start| start..start + 13).collect(),
            (0..slot).step_by(20_000).map(|start| start..start + 700).collect(),
            vec![0..10, 40_000..40_001, 75_000..90_000, 140_000..150_000],
        ];
        for ranges in cases {
            let mut within = Vec::new();
            loaded.for_each_within(&ranges, |posting| within.push(posting));
            let expected: Vec<Posting> =
                all.iter().copied().filter(|p| ranges.iter().any(|range| range.contains(&p.slot))).collect();
            assert_eq!(within, expected, "{ranges:?}");
        }
        let mut none = Vec::new();
        PostingList::EMPTY.for_each_within(&one(0..10), |posting| none.push(posting));
        assert!(none.is_empty());
    }
}
