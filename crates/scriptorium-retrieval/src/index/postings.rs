//! One term's posting list, delta-varint encoded in memory: a posting takes ~2.5 bytes
//! instead of 8, and the cache stores the same bytes, so loading copies them rather
//! than decoding and re-allocating every posting.
//!
//! Each posting is two LEB128 varints: the slot minus the previous posting's slot (the
//! first: the slot itself), then `tf·4 + flags` (the two field flags of [`Posting`]).

use super::{Posting, TF_MASK};

/// The field flags sit in the top two bits of a posting's packed word.
const FLAG_SHIFT: u32 = 30;

/// A term's postings, sorted by slot.
#[derive(Clone, Debug, Default)]
pub(crate) struct PostingList {
    bytes: Vec<u8>,
    /// The slot of the last posting.
    last: u32,
    len: u32,
}

impl PostingList {
    /// No postings.
    pub(crate) const EMPTY: PostingList = PostingList { bytes: Vec::new(), last: 0, len: 0 };

    /// Append a posting at a slot above every slot in the list.
    pub(crate) fn push(&mut self, posting: Posting) {
        let previous = if self.len == 0 { 0 } else { self.last };
        put(&mut self.bytes, u64::from(posting.slot.wrapping_sub(previous)));
        put(&mut self.bytes, packed_to_word(posting.packed));
        self.last = posting.slot;
        self.len = self.len.saturating_add(1);
    }

    pub(crate) fn iter(&self) -> PostingIter<'_> {
        PostingIter { bytes: &self.bytes, slot: 0, first: true }
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
    }

    /// A list from cache bytes, checked: `count` postings, strictly increasing slots
    /// below `slots`, tf in range, nothing left over. `None` when any check fails.
    pub(crate) fn from_bytes(bytes: Vec<u8>, count: usize, slots: u32) -> Option<PostingList> {
        let mut rest = bytes.as_slice();
        let (mut slot, mut seen) = (0u32, 0usize);
        while !rest.is_empty() {
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
        Some(PostingList { bytes, last: slot, len })
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
    first: bool,
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
        self.slot = if self.first { delta as u32 } else { self.slot.wrapping_add(delta as u32) };
        self.first = false;
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
}
