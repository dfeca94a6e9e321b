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
    /// A bit per slot, set for every candidate holding a query term (numbered in
    /// `matched` or not); all clear between queries.
    pub(super) met: Vec<u64>,
    /// The candidates holding a query term that may still rank (see `bounded`).
    pub(super) matched: Vec<u32>,
    /// Per long term, in term order: (index in `matched`, occurrence) of each candidate
    /// in `matched` holding it, in slot order (see `QueryTerm::holders`).
    pub(super) holders: Vec<(u32, Occurrence)>,
    /// The raw score of each candidate in `matched`: estimated, then exact where needed.
    pub(super) raws: Vec<f64>,
    /// Per matched candidate: how many long query terms its content / path or headings hold.
    pub(super) exact_terms: Vec<u8>,
    pub(super) path_heading_terms: Vec<u8>,
    /// The unrounded final score of each matched candidate (−∞: dropped).
    pub(super) finals: Vec<f64>,
    /// Per slot: a query's estimate of the candidate there, before `raws` takes it;
    /// all 0 between queries.
    pub(super) sums: Vec<f64>,
    /// The slots a pass met: its first cells, per window (see `estimate_pass`); never
    /// cleared, only ever written before it is read.
    pub(super) found: Vec<u32>,
    /// Spare buffers for the postings a filtered pass keeps (see
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
        if scratch.met.len() < slots.div_ceil(64) {
            scratch.met.resize(slots.div_ceil(64), 0);
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
        self.met.fill(0);
        self.matched.clear();
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
