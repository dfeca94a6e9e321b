//! The buffers a query needs in proportion to the index, kept per thread between
//! queries: a query then neither allocates them nor clears more than it touched.

use std::cell::RefCell;

use crate::index::{Occurrence, Posting};

/// Per-slot marker in [`Scratch::seen`] for a slot no query term reached.
pub(super) const UNSEEN: u32 = u32::MAX;

/// Working memory of one query.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    /// Per slot: its index in `matched`, or [`UNSEEN`]. All [`UNSEEN`] between queries.
    pub(super) seen: Vec<u32>,
    /// Candidates holding at least one query term, in discovery order: those found by
    /// the first term, then those the second term added, and so on.
    pub(super) matched: Vec<u32>,
    /// The length in tokens of each matched candidate.
    pub(super) lengths: Vec<u32>,
    /// Per term, in term order: (index in `matched`, occurrence) of each candidate
    /// holding it, in slot order (see `QueryTerm::holders`).
    pub(super) holders: Vec<(u32, Occurrence)>,
    /// The raw score of each matched candidate, accumulated one query token at a time.
    pub(super) raws: Vec<f64>,
    /// Scratch for one token: the new score of each holder of its term.
    pub(super) updates: Vec<f64>,
    /// Per matched candidate: how many long query terms its content / path or headings hold.
    pub(super) exact_terms: Vec<u8>,
    pub(super) path_heading_terms: Vec<u8>,
    /// The unrounded final score of each matched candidate (−∞: dropped).
    pub(super) finals: Vec<f64>,
    /// Memoised term scores by (term, tf, length); NaN where not computed yet.
    pub(super) term_scores: Vec<f64>,
    /// Per slot: a long query's estimate of the candidate there, before `raws` takes it;
    /// all 0 between queries.
    pub(super) sums: Vec<f64>,
    /// A long query's slots met, in the order met: its first cells, per window (see
    /// `estimate_pass`); never cleared, only ever written before it is read.
    pub(super) found: Vec<u32>,
    /// Spare buffers for the postings a filtered long query's windows keep (see
    /// `estimate_pass::Window::gather`), so that their memory is reused.
    pub(super) kept: Vec<Vec<Posting>>,
}

thread_local! {
    static SPARE: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl Scratch {
    /// This thread's buffers (new ones when they are in use), with `seen` covering `slots`.
    pub(super) fn take(slots: usize) -> Scratch {
        let mut scratch = SPARE
            .try_with(|spare| spare.try_borrow_mut().map(|mut spare| std::mem::take(&mut *spare)).unwrap_or_default())
            .unwrap_or_default();
        if scratch.seen.len() < slots {
            scratch.seen.resize(slots, UNSEEN);
        }
        scratch
    }

    /// Undo what the query marked and keep the buffers for the thread's next query.
    pub(super) fn give_back(mut self) {
        for &slot in &self.matched {
            if let Some(entry) = self.seen.get_mut(slot as usize) {
                *entry = UNSEEN;
            }
        }
        self.matched.clear();
        self.lengths.clear();
        self.holders.clear();
        self.raws.clear();
        self.exact_terms.clear();
        self.path_heading_terms.clear();
        self.finals.clear();
        let _ = SPARE.try_with(|spare| {
            if let Ok(mut spare) = spare.try_borrow_mut() {
                *spare = self;
            }
        });
    }
}
