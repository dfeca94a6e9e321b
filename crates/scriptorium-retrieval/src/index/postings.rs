//! One term's posting list, delta-varint encoded in memory: a posting takes ~2.5 bytes
//! instead of 8, and the cache stores the same bytes, so loading copies them rather
//! than decoding and re-allocating every posting.
//!
//! Each posting is two LEB128 varints: the slot minus the previous posting's slot (the
//! first: the slot itself), then `tf·4 + flags` (the two field flags of [`Posting`]).
//!
//! Every [`SKIP_EVERY`] postings a skip entry records where a block starts, so that a
//! filtered query decodes only the blocks that reach its candidates' slot ranges
//! ([`PostingList::for_each_within`]) instead of the whole list: 8 bytes per 64 postings.

use std::ops::Range;

use super::{Posting, TF_MASK};

/// The field flags sit in the top two bits of a posting's packed word.
const FLAG_SHIFT: u32 = 30;

/// Postings per block between two skip entries.
const SKIP_EVERY: u32 = 64;

/// Where block `i + 1` of a list starts (entry `i`): the slot its first delta is taken
/// from (the last slot of the block before) and its byte offset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Skip {
    before: u32,
    offset: u32,
}

/// A term's postings, sorted by slot.
#[derive(Clone, Debug, Default)]
pub(crate) struct PostingList {
    bytes: Vec<u8>,
    skips: Vec<Skip>,
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
            self.skips.push(Skip { before: self.last, offset });
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

    /// Call `visit` with every posting whose slot lies in one of `ranges` (sorted,
    /// disjoint), in slot order, decoding only the blocks that reach a range.
    pub(crate) fn for_each_within(&self, ranges: &[Range<u32>], mut visit: impl FnMut(Posting)) {
        let mut ranges = ranges.iter().filter(|range| !range.is_empty()).peekable();
        let mut next_block = 0;
        while let Some(range) = ranges.peek() {
            // Blocks ending below the range cannot reach it; nor can those already read.
            let block = self.skips.partition_point(|skip| skip.before < range.start).max(next_block);
            let postings = if block == 0 {
                self.iter()
            } else if let Some(skip) = self.skips.get(block - 1) {
                let bytes = self.bytes.get(skip.offset as usize..).unwrap_or_default();
                PostingIter { bytes, slot: skip.before }
            } else {
                return; // beyond the last block
            };
            for posting in postings.take(SKIP_EVERY as usize) {
                while ranges.next_if(|range| range.end <= posting.slot).is_some() {}
                match ranges.peek() {
                    None => return,
                    Some(range) if range.start <= posting.slot => visit(posting),
                    Some(_) => {}
                }
            }
            next_block = block + 1;
        }
    }

    /// The encoded postings, as the cache stores them.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
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

    /// A list from cache bytes, checked: `count` postings, strictly increasing slots
    /// below `slots`, tf in range, nothing left over. `None` when any check fails.
    pub(crate) fn from_bytes(bytes: Vec<u8>, count: usize, slots: u32) -> Option<PostingList> {
        let mut rest = bytes.as_slice();
        let (mut slot, mut seen) = (0u32, 0usize);
        let mut skips = Vec::with_capacity(count / SKIP_EVERY as usize);
        while !rest.is_empty() {
            if seen > 0 && seen.is_multiple_of(SKIP_EVERY as usize) {
                let offset = u32::try_from(bytes.len() - rest.len()).ok()?;
                skips.push(Skip { before: slot, offset });
            }
            let delta = u32::try_from(take(&mut rest)?).ok()?;
            if seen > 0 && delta == 0 {
                return None;
            }
            slot = slot.checked_add(delta).filter(|s| *s < slots)?;
            if take(&mut rest)? >> 2 > u64::from(TF_MASK) {
                return None;
            }
            seen += 1;
        }
        let len = u32::try_from(count).ok().filter(|_| seen == count)?;
        Some(PostingList { bytes, skips, last: slot, len })
    }
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
        let copy = PostingList::from_bytes(list.bytes().to_vec(), 4, u32::MAX).expect("valid");
        assert_eq!(copy.iter().collect::<Vec<_>>(), postings);
        // Wrong count, slot out of range, unsorted, cut off: all refused.
        assert!(PostingList::from_bytes(list.bytes().to_vec(), 3, u32::MAX).is_none());
        assert!(PostingList::from_bytes(list.bytes().to_vec(), 4, 70_001).is_none());
        assert!(PostingList::from_bytes(vec![5, 0, 0, 0], 2, 10).is_none());
        assert!(PostingList::from_bytes(vec![5, 0x80], 1, 10).is_none());
    }

    fn one(range: Range<u32>) -> Vec<Range<u32>> {
        vec![range]
    }

    #[test]
    fn postings_within_ranges_are_exactly_those_listed() {
        // Gaps of 1 to 300 slots (one- and two-byte deltas) over several blocks.
        let mut list = PostingList::default();
        let mut slot = 3u32;
        for n in 0..1000u32 {
            list.push(Posting { slot, packed: 1 + n % 5 });
            slot += 1 + (n * 37) % 300;
        }
        let loaded = PostingList::from_bytes(list.bytes().to_vec(), list.len(), u32::MAX).expect("valid");
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
