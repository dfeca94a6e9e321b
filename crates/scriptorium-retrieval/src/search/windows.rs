//! Cutting a query's pass into windows of slots, and reading them on this thread
//! and a helper.
//!
//! A window's sums and lengths (12 bytes a slot) stay in a core's cache while every
//! term is read over it, where a pass over every slot would stream them from memory
//! once per term. Windows are claimed one at a time by whichever thread is free, so a
//! helper that starts late (starting a thread took 30–400 µs on the 2-core test VM)
//! only takes fewer of them and never delays the query.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use super::estimate_pass::Window;
use crate::index::Posting;

/// How a pass is cut into windows, and whether a helper thread reads some of them.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cutting {
    /// The most slots in one window.
    window_slots: usize,
    /// Passes reading fewer postings are read on this thread alone: below it, starting
    /// a thread costs more than it saves.
    helped_postings_min: usize,
    /// Tests: a helper may start on a machine with one core, and small filtered passes
    /// are cut too.
    any_machine: bool,
}

impl Cutting {
    const DEFAULT: Cutting = Cutting { window_slots: 16 << 10, helped_postings_min: 150_000, any_machine: false };

    /// Windows of `window_slots` slots and a helper for every pass, whatever its size
    /// and the machine's (tests).
    #[cfg(test)]
    pub(super) fn always(window_slots: usize) -> Cutting {
        Cutting { window_slots, helped_postings_min: 0, any_machine: true }
    }

    /// The cutting queries use: [`Cutting::DEFAULT`], or a test's.
    pub(super) fn current() -> Cutting {
        #[cfg(test)]
        if let Some(cutting) = TEST_CUTTING.get() {
            return cutting;
        }
        Cutting::DEFAULT
    }

    /// Windows over `sums`, `found` (at least as long) and `met` (a bit per slot), in
    /// slot order, of about equal size, at most `window_slots` slots rounded up to a
    /// multiple of 64 (each window owns whole words of `met`). `tracked` and `top_k` as
    /// [`Window::new`] takes them.
    pub(super) fn cut<'a>(
        self,
        mut sums: &'a mut [f64],
        mut found: &'a mut [u32],
        mut met: &'a mut [u64],
        tracked: bool,
        top_k: usize,
        filtered: Option<usize>,
    ) -> Windows<'a> {
        // A small filtered pass (`filtered`: how many postings it may read) stays whole:
        // a window's bookkeeping (a seek per term, its share of the candidates' ranges)
        // would cost more than locality saves on its few candidates.
        let whole = filtered.is_some_and(|postings| postings < self.helped_postings_min) && !self.any_machine;
        let count = if whole { 1 } else { sums.len().div_ceil(self.window_slots.max(1)).max(1) };
        let size = sums.len().div_ceil(count).next_multiple_of(64);
        let mut windows = Vec::with_capacity(count);
        let mut from = 0;
        while !sums.is_empty() {
            let (size, found_size) = (size.min(sums.len()), size.min(found.len()));
            let words = size.div_ceil(64).min(met.len());
            let (window_sums, rest_sums) = std::mem::take(&mut sums).split_at_mut(size);
            let (window_found, rest_found) = std::mem::take(&mut found).split_at_mut(found_size);
            let (window_met, rest_met) = std::mem::take(&mut met).split_at_mut(words);
            let start = u32::try_from(from).unwrap_or(u32::MAX);
            let window = Window::new(start, window_sums, window_found, window_met, tracked, top_k);
            windows.push(Mutex::new(window));
            (sums, found, met) = (rest_sums, rest_found, rest_met);
            from += size;
        }
        Windows { windows, cutting: self }
    }
}

#[cfg(test)]
thread_local! {
    /// The cutting this thread's queries use instead of [`Cutting::DEFAULT`].
    pub(super) static TEST_CUTTING: std::cell::Cell<Option<Cutting>> = const { std::cell::Cell::new(None) };
}

/// The windows of one pass.
pub(super) struct Windows<'a> {
    windows: Vec<Mutex<Window<'a>>>,
    cutting: Cutting,
}

impl<'a> Windows<'a> {
    /// Call `read` on every window, each once, with per-thread state from `state`; a
    /// helper thread takes windows too when the pass reads at least the cutting's
    /// postings and the machine has a second core.
    pub(super) fn read_each<S>(
        &self,
        postings: usize,
        state: impl Fn() -> S + Sync,
        read: impl Fn(&mut Window<'a>, &mut S) + Sync,
    ) {
        let next = AtomicUsize::new(0);
        let claim = || {
            let mut state = state();
            while let Some(window) = self.windows.get(next.fetch_add(1, Ordering::Relaxed)) {
                read(&mut window.lock().unwrap_or_else(PoisonError::into_inner), &mut state);
            }
        };
        let helped = self.windows.len() >= 2
            && postings >= self.cutting.helped_postings_min
            && (self.cutting.any_machine || two_cores());
        if !helped {
            claim();
            return;
        }
        std::thread::scope(|scope| {
            // Without a helper (none could start), this thread claims every window.
            let helper = std::thread::Builder::new().spawn_scoped(scope, claim);
            claim();
            if let Ok(Err(payload)) = helper.map(|helper| helper.join()) {
                // Its panic is this query's, as if its windows had been read here.
                std::panic::resume_unwind(payload);
            }
        });
    }

    /// Give each window a spare buffer for the postings it keeps, if there is one.
    pub(super) fn give_kept(&mut self, spare: &mut Vec<Vec<Posting>>) {
        for window in &mut self.windows {
            let window = window.get_mut().unwrap_or_else(PoisonError::into_inner);
            if let Some(buffer) = spare.pop() {
                window.lend_kept(buffer);
            }
        }
    }

    /// How many postings of term `term` the windows kept, all told.
    pub(super) fn kept_count(&self, term: usize) -> usize {
        let count = |window: &Mutex<Window<'a>>| window.lock().unwrap_or_else(PoisonError::into_inner).kept_count(term);
        self.windows.iter().map(count).sum()
    }

    /// The windows, in slot order.
    pub(super) fn into_inner(self) -> impl Iterator<Item = Window<'a>> {
        self.windows.into_iter().map(|window| window.into_inner().unwrap_or_else(PoisonError::into_inner))
    }
}

/// Whether this machine has a second core (asked once: the answer reads cgroup files).
fn two_cores() -> bool {
    static TWO: OnceLock<bool> = OnceLock::new();
    *TWO.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2))
}
