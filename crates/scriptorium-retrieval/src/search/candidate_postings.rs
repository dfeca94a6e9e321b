//! The postings a query reads: those of its candidates, decoding only the parts of each
//! list that can hold one.

use std::ops::Range;

use crate::bitset::BitSet;
use crate::index::{Candidates, Index, Posting};

/// How one query walks its posting lists.
pub(super) struct CandidatePostings<'a> {
    pub(super) index: &'a Index,
    set: &'a BitSet,
    /// The number of candidates and their total length in tokens.
    docs: u64,
    tokens: u64,
    /// The candidates' slot ranges, when they cover few enough slots to skip blocks.
    ranges: Option<&'a [Range<u32>]>,
    /// Every slot is a candidate (no filter, no dead or hidden slot): no posting to test.
    every_slot: bool,
}

impl<'a> CandidatePostings<'a> {
    pub(super) fn new(index: &'a Index, candidates: &'a Candidates<'_>) -> Self {
        let every_slot = candidates.docs == index.slot_count() as u64 && index.len() == index.slot_count();
        // Ranges covering most slots would skip nothing and cost a check per posting.
        let ranges = (candidates.ranges.as_deref())
            .filter(|ranges| ranges.iter().map(|range| range.len()).sum::<usize>() < index.slot_count() / 2);
        let (docs, tokens) = (candidates.docs, candidates.tokens);
        CandidatePostings { index, set: &candidates.set, docs, tokens, ranges, every_slot }
    }

    /// The number of candidates and their total length in tokens.
    pub(super) fn candidates(&self) -> (u64, u64) {
        (self.docs, self.tokens)
    }

    /// About how many of `listed` postings (spread evenly over the slots) lie in the
    /// candidates' slot ranges, which are all a filtered read decodes.
    pub(super) fn within_ranges(&self, listed: usize) -> usize {
        match self.ranges {
            Some(ranges) => {
                let covered: usize = ranges.iter().map(|range| range.len()).sum();
                let slots = self.index.slot_count().max(1);
                usize::try_from(listed as u128 * covered as u128 / slots as u128).unwrap_or(listed)
            }
            None => listed,
        }
    }

    /// The candidates' slot ranges that meet `window`, clipped to it; `None` when the
    /// candidates have no ranges (the set alone tells them).
    pub(super) fn ranges_within(&self, window: &Range<u32>) -> Option<Vec<Range<u32>>> {
        let ranges = self.ranges?;
        let first = ranges.partition_point(|range| range.end <= window.start);
        let meeting = ranges.get(first..).unwrap_or_default().iter().take_while(|range| range.start < window.end);
        Some(meeting.map(|range| range.start.max(window.start)..range.end.min(window.end)).collect())
    }

    /// Call `visit` with each posting of `term` at a candidate inside `window`, in slot
    /// order; `clipped` is [`Self::ranges_within`] for that window.
    #[inline(always)]
    pub(super) fn for_each_in(
        &self,
        term: &str,
        window: &Range<u32>,
        clipped: Option<&[Range<u32>]>,
        mut visit: impl FnMut(Posting),
    ) {
        let list = self.index.posting_list(term);
        match clipped {
            Some(ranges) => list.for_each_within(ranges, |posting| {
                if self.set.contains(posting.slot) {
                    visit(posting);
                }
            }),
            None => {
                for posting in list.iter_from(window.start) {
                    if posting.slot >= window.end {
                        break;
                    }
                    if posting.slot >= window.start && (self.every_slot || self.set.contains(posting.slot)) {
                        visit(posting);
                    }
                }
            }
        }
    }

    /// Whether every slot is a candidate: every posting is then visited, and a list's
    /// length is its document frequency over the candidates.
    pub(super) fn every_slot(&self) -> bool {
        self.every_slot
    }
}
