//! Picking the best `top_k` rows without sorting them all.
//!
//! Rows rank by their score rounded to 6 decimals, then by (path, line, event id). So
//! the `top_k`-th best *unrounded* score `kth` decides: every row that rounds above
//! `round6(kth)` is in the result (there are fewer than `top_k` of them), and the rest
//! of the result are the rows that round to exactly `round6(kth)`, first in path order.
//! Rounding is monotone, so both sets are intervals of unrounded scores, found once per
//! query by bisection; each row then costs two comparisons, and only the survivors are
//! rounded.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use crate::round::round6;

/// The `limit` largest scores offered so far.
pub(super) struct Best {
    limit: usize,
    heap: BinaryHeap<Reverse<Total>>,
    /// The least score kept once `limit` are kept (−∞ before): most offers are below
    /// it, and one comparison turns them away.
    least: f64,
}

impl Best {
    pub(super) fn new(limit: usize) -> Self {
        Best { limit: limit.max(1), heap: BinaryHeap::with_capacity(limit.max(1) + 1), least: f64::NEG_INFINITY }
    }

    #[inline]
    pub(super) fn offer(&mut self, score: f64) {
        if self.heap.len() < self.limit {
            self.heap.push(Reverse(Total(score)));
            self.note_least();
        } else if score > self.least {
            // Replace the least in place: one sift instead of a pop and a push.
            if let Some(mut least) = self.heap.peek_mut() {
                *least = Reverse(Total(score));
            }
            self.note_least();
        }
    }

    fn note_least(&mut self) {
        if self.heap.len() >= self.limit {
            self.least = self.heap.peek().map_or(f64::NEG_INFINITY, |Reverse(least)| least.0);
        }
    }

    /// The least score kept once `limit` are kept, −∞ before: the `limit`-th largest
    /// score of all offers can only be higher.
    pub(super) fn least(&self) -> f64 {
        self.least
    }

    /// The `limit`-th largest score offered (the least one when fewer were offered).
    pub(super) fn kth(&self) -> Option<f64> {
        self.heap.peek().map(|Reverse(least)| least.0)
    }

    /// How many scores are kept (at most `limit`).
    pub(super) fn len(&self) -> usize {
        self.heap.len()
    }

    /// The scores kept, in no order.
    pub(super) fn kept(&self) -> impl Iterator<Item = f64> + '_ {
        self.heap.iter().map(|Reverse(score)| score.0)
    }
}

/// An `f64` ordered by [`f64::total_cmp`].
#[derive(Clone, Copy, Debug)]
struct Total(f64);

impl PartialEq for Total {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Total {}

impl PartialOrd for Total {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Total {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// How far below `kth` a score may lie and still be in [`Band::around`] it: the band
/// starts at most 2·10⁻⁶ below, and a score lower than `kth − BAND_REACH` is outside.
pub(super) const BAND_REACH: f64 = 3e-6;

/// The unrounded scores that round to `round6(kth)`: `low <= score < high`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Band {
    pub(super) low: f64,
    pub(super) high: f64,
}

impl Band {
    /// The band of a finite `kth`. Rounding moves a value by at most 5·10⁻⁷, so both
    /// ends lie within 2·10⁻⁶ of `kth`.
    pub(super) fn around(kth: f64) -> Band {
        let target = round6(kth);
        let low = first_where(kth - 2e-6, kth, |x| round6(x) >= target);
        let high = first_where(kth, kth + 2e-6, |x| round6(x) > target);
        Band { low, high }
    }
}

/// The least float in `from..=to` where the monotone `test` holds (`to` when none does
/// before it), by bisection over the floats in order.
fn first_where(from: f64, to: f64, test: impl Fn(f64) -> bool) -> f64 {
    let (mut low, mut high) = (ordered(from), ordered(to));
    while low < high {
        let middle = low + (high - low) / 2;
        if test(unordered(middle)) {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    unordered(low)
}

/// The bits of `x` as an integer in the order of [`f64::total_cmp`].
fn ordered(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 { !bits } else { bits | 1 << 63 }
}

fn unordered(key: u64) -> f64 {
    f64::from_bits(if key >> 63 == 1 { key & !(1 << 63) } else { !key })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_keeps_the_largest() {
        let mut best = Best::new(3);
        for score in [0.5, 0.1, 0.9, 0.7, 0.2, 0.9] {
            best.offer(score);
        }
        assert_eq!(best.kth(), Some(0.7));
        let mut few = Best::new(5);
        few.offer(0.3);
        few.offer(0.4);
        assert_eq!(few.kth(), Some(0.3));
        assert_eq!(Best::new(2).kth(), None);
    }

    #[test]
    fn band_holds_exactly_the_scores_rounding_alike() {
        for kth in [0.5, 0.1234565, 0.0078125, 1.0000005, 0.75 + 1e-9, 1e-7, 0.0, -0.25] {
            let band = Band::around(kth);
            let target = round6(kth);
            assert!(band.low <= kth && kth < band.high, "{kth}: {band:?}");
            assert_eq!(round6(band.low), target, "{kth}");
            assert_ne!(round6(unordered(ordered(band.low) - 1)), target, "{kth}");
            assert!(round6(band.high) > target, "{kth}");
            assert_eq!(round6(unordered(ordered(band.high) - 1)), target, "{kth}");
        }
    }

    #[test]
    fn float_order_keys_round_trip() {
        for x in [-1.5, -0.0, 0.0, 1e-300, 2.5] {
            assert_eq!(unordered(ordered(x)).to_bits(), f64::to_bits(x));
        }
        assert!(ordered(-1.0) < ordered(-0.0) && ordered(-0.0) < ordered(0.0) && ordered(0.0) < ordered(1.0));
    }
}
