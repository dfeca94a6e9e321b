//! The one pass of a query (see [`super::read`]) over a window of slots: each posting
//! adds its share of its candidate's estimate into that slot's sum as it is decoded
//! (see [`super::bounded`]).
//!
//! The per-posting work is kept to loads, a multiplication, an addition and a store,
//! without a branch the data decides. The slots met are listed after the pass, from the
//! sums that are no longer 0; a pass over few postings lists a slot as it meets it
//! first (written to the next free cell of `found` whether or not it is new, the count
//! moving on only when it is). [`Window::close`] then marks them in a bitset and notes
//! the largest estimates, which decide what the read numbers.
//!
//! A window is a range of slots, so that a large query can be read on two threads, a
//! window at a time: each window's sums and lengths then stay in its core's cache.

use std::ops::Range;

use super::candidate_postings::CandidatePostings;
use super::select::Best;
use crate::bm25::{length_norm, saturation};
use crate::index::Posting;

/// Saturations are memoised for tf in `1..=MEMO_TF` ...
const MEMO_TF: u32 = 3;
/// ... and document lengths below `MEMO_LEN`; others are computed each time.
const MEMO_LEN: u32 = 512;

/// What one query term adds to a holder's estimate: `scale · saturation(tf, length)`.
#[derive(Clone, Copy, Debug)]
pub(super) struct TermShare {
    /// The term's idf times how many query tokens are this term.
    pub(super) scale: f64,
    /// Whether the fields it is found in are noted (the rules read the long terms).
    pub(super) long: bool,
}

/// `tf·(k1+1) / (norm + tf)`: the part of every term's share that depends on the
/// document (its tf and length), the same function for every term of one query (they
/// share the average length). Memoised by (tf, length) for tf `1..=MEMO_TF` and
/// lengths below `MEMO_LEN`, per thread: a term then costs no table of its own.
pub(super) struct Saturation {
    average_len: f64,
    memo: Vec<f64>,
}

/// Memo rows are tf 1..=3; the last column (longer documents) is never filled.
const MEMO_WIDTH: usize = MEMO_LEN as usize + 1;

impl Saturation {
    pub(super) fn new(average_len: f64) -> Self {
        Saturation { average_len, memo: vec![f64::NAN; MEMO_TF as usize * MEMO_WIDTH] }
    }

    #[inline(always)]
    fn get(&mut self, tf: u32, length: u32) -> f64 {
        // Any tf outside 1..=3 falls outside the memo (as does a long document).
        let at = tf.wrapping_sub(1) as usize * MEMO_WIDTH + length.min(MEMO_LEN) as usize;
        match self.memo.get(at) {
            Some(&value) if !value.is_nan() => value,
            _ => {
                let value = saturation(tf, length_norm(length, self.average_len));
                if length < MEMO_LEN
                    && let Some(cell) = self.memo.get_mut(at)
                {
                    *cell = value;
                }
                value
            }
        }
    }
}

/// What the pass found in one window.
pub(super) struct WindowRead {
    /// Where the slots met sit in the whole `found` buffer (the window's part of it
    /// starts at its first slot).
    pub(super) found: Range<usize>,
    /// The largest estimates met (as many as a query returns) and the largest of all.
    pub(super) best: Best,
    pub(super) top: f64,
    /// Per term: whether some candidate met holds it in its content, and in its path or
    /// headings (kept for the long terms only, which the rules read).
    pub(super) fields: Vec<(bool, bool)>,
    /// The buffer of [`Window::gather`], empty, for the next query.
    pub(super) kept: Vec<Posting>,
}

/// One window's sums and what the pass found in it.
pub(super) struct Window<'a> {
    /// The first slot of the window (a multiple of 64: `met` starts with it).
    from: u32,
    /// Per slot of the window: its estimate so far (0: not met yet).
    sums: &'a mut [f64],
    /// Its first `found_len` cells: the slots met.
    found: &'a mut [u32],
    found_len: usize,
    /// A bit per slot of the window, set for the slots met (by [`Window::close`]).
    met: &'a mut [u64],
    /// Whether the slots met are listed as the postings are read, rather than by
    /// [`Window::close`] after the last term.
    tracked: bool,
    best: Best,
    top: f64,
    fields: Vec<(bool, bool)>,
    /// A filtered pass: the postings at candidates, term after term ([`Window::gather`]),
    /// and each term's range of them.
    kept: Vec<Posting>,
    kept_spans: Vec<Range<usize>>,
}

impl<'a> Window<'a> {
    /// A window over slots `from..from + sums.len()`: `found` must be at least as long
    /// as `sums` (each slot is met first once), and `met` hold a bit for each slot.
    /// `tracked`: the slots met are listed as the postings are read (worth it when they
    /// are few); otherwise [`Window::close`] finds them from the sums. `top_k`: how many
    /// of the largest estimates to keep.
    pub(super) fn new(
        from: u32,
        sums: &'a mut [f64],
        found: &'a mut [u32],
        met: &'a mut [u64],
        tracked: bool,
        top_k: usize,
    ) -> Self {
        Window {
            from,
            sums,
            found,
            found_len: 0,
            met,
            tracked,
            best: Best::new(top_k),
            top: 0.0,
            fields: Vec::new(),
            kept: Vec::new(),
            kept_spans: Vec::new(),
        }
    }

    /// Give the window a buffer for [`Window::gather`] (a spare one, to reuse its memory).
    pub(super) fn lend_kept(&mut self, mut kept: Vec<Posting>) {
        kept.clear();
        self.kept = kept;
    }

    /// A filtered pass, first look: keep each term's postings at a candidate inside the
    /// window, so that the shares (which need the document frequencies over every
    /// window) are added without decoding and testing the lists again.
    pub(super) fn gather(&mut self, candidates: &CandidatePostings<'_>, texts: &[String]) {
        let window = self.from..self.end();
        let clipped = candidates.ranges_within(&window);
        let Window { kept, kept_spans, .. } = self;
        for text in texts {
            let first = kept.len();
            candidates.for_each_in(text, &window, clipped.as_deref(), |posting| kept.push(posting));
            kept_spans.push(first..kept.len());
        }
    }

    /// How many postings of term `term` [`Window::gather`] kept.
    pub(super) fn kept_count(&self, term: usize) -> usize {
        self.kept_spans.get(term).map_or(0, |span| span.len())
    }

    /// A filtered pass, second look: add the shares of the postings kept.
    pub(super) fn add_kept(&mut self, shares: &[Option<TermShare>], lengths: &[u32], saturation: &mut Saturation) {
        let (kept, spans) = (std::mem::take(&mut self.kept), std::mem::take(&mut self.kept_spans));
        for (term, (span, &share)) in spans.iter().zip(shares).enumerate() {
            let postings = kept.get(span.clone()).unwrap_or_default().iter().copied();
            self.add_term(term, postings, share, lengths, saturation);
        }
        (self.kept, self.kept_spans) = (kept, spans);
    }

    /// The first slot of the window.
    pub(super) fn start(&self) -> u32 {
        self.from
    }

    /// The slot just past the window.
    fn end(&self) -> u32 {
        self.from.saturating_add(u32::try_from(self.sums.len()).unwrap_or(u32::MAX))
    }

    /// What the pass found, without the borrows.
    pub(super) fn finish(self) -> WindowRead {
        let from = self.from as usize;
        let mut kept = self.kept;
        kept.clear();
        WindowRead { found: from..from + self.found_len, best: self.best, top: self.top, fields: self.fields, kept }
    }

    /// Add the shares of term `term`'s `postings` (in slot order; those before the window
    /// are passed over, the first after it ends the term) to the window's sums.
    #[inline(always)]
    pub(super) fn add_term(
        &mut self,
        term: usize,
        postings: impl Iterator<Item = Posting>,
        share: Option<TermShare>,
        lengths: &[u32],
        saturation: &mut Saturation,
    ) {
        let Some(TermShare { scale, long }) = share else { return };
        if !long {
            match self.tracked {
                true => self.add::<true>(postings, scale, lengths, saturation),
                false => self.add::<false>(postings, scale, lengths, saturation),
            };
            return;
        }
        let fields = match self.tracked {
            true => self.add::<true>(postings, scale, lengths, saturation),
            false => self.add::<false>(postings, scale, lengths, saturation),
        };
        if self.fields.len() <= term {
            self.fields.resize(term + 1, (false, false));
        }
        if let Some(seen) = self.fields.get_mut(term) {
            *seen = (seen.0 || fields.0, seen.1 || fields.1);
        }
    }

    /// After the last term: list the slots met (unless tracked, in one pass over the
    /// sums in slot order, without a branch the data decides), mark them in `met`, and
    /// note the largest estimates.
    pub(super) fn close(&mut self) {
        if !self.tracked {
            let mut found_len = 0;
            for (slot, &sum) in (self.from..).zip(self.sums.iter()) {
                if let Some(cell) = self.found.get_mut(found_len) {
                    *cell = slot;
                }
                found_len += usize::from(sum != 0.0);
            }
            self.found_len = found_len;
        }
        let Window { from, sums, found, found_len, met, best, top, .. } = self;
        for &slot in found.get(..*found_len).unwrap_or_default() {
            let at = slot.wrapping_sub(*from) as usize;
            if let Some(word) = met.get_mut(at / 64) {
                *word |= 1 << (at % 64);
            }
            let sum = sums.get(at).copied().unwrap_or(0.0);
            best.offer(sum);
            *top = top.max(sum);
        }
    }

    /// Add one term's shares; returns whether some posting is in content, and whether
    /// one is in the path or headings.
    #[inline(always)]
    fn add<const TRACKED: bool>(
        &mut self,
        postings: impl Iterator<Item = Posting>,
        scale: f64,
        lengths: &[u32],
        saturation: &mut Saturation,
    ) -> (bool, bool) {
        let (from, end) = (self.from, self.end());
        let (mut in_content, mut in_path_heading) = (false, false);
        let Window { sums, found, found_len, .. } = self;
        for posting in postings {
            let slot = posting.slot;
            if slot >= end {
                break;
            }
            // Below the window: wraps to an offset past its end.
            let Some(sum) = sums.get_mut(slot.wrapping_sub(from) as usize) else { continue };
            let occurrence = posting.occurrence();
            let length = lengths.get(slot as usize).copied().unwrap_or(0);
            let share = scale * saturation.get(occurrence.tf(), length);
            if TRACKED {
                // Every share is positive (tf ≥ 1, idf > 0), so a sum still 0 is a slot
                // met first: always written, counted only then.
                let fresh = usize::from(*sum == 0.0);
                if let Some(cell) = found.get_mut(*found_len) {
                    *cell = slot;
                }
                *found_len += fresh;
            }
            *sum += share;
            in_content |= occurrence.in_content();
            in_path_heading |= occurrence.in_path_heading();
        }
        (in_content, in_path_heading)
    }
}
