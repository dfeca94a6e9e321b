//! Scoring a query (long ones, as a CJK run gives, most of all) without the exact sum
//! for every matched candidate.
//!
//! The exact raw score is a left-to-right sum over every query token, so its cost is
//! tokens × candidates. Instead each candidate first gets a cheap estimate: `base` plus,
//! per term it holds, `count·idf · g(tf, length)`, where `g` is the BM25 saturation the
//! exact score also computes (`idf·(δ + g)` per token). That is one multiplication and
//! one addition per (term, holder), made as the posting is decoded, into a per-slot sum
//! ([`read_terms`](super::read::read_terms)). Estimate and exact sum add up the same
//! real numbers in a different order and rounding, so they differ by at most
//! [`QueryRun::error_bound`]. Only the candidates whose estimate can reach the result
//! are numbered at all; the exact sum is then computed for those that can reach the
//! maximum or the result, reading their occurrences back from the posting lists (only
//! the blocks holding them); every other candidate provably ranks below the result, so
//! rankings and scores are unchanged.

use super::QueryRun;
use super::scratch::Scratch;
use super::select::{BAND_REACH, Best};
use crate::bm25::{Bm25Weight, length_norm};
use crate::index::{Occurrence, SortedSlots};
use crate::rules::SOURCE_GROUNDED;

/// The raw score of a candidate holding no query term: `Σ idf·δ` over the tokens
/// (`positions`: per token, its term), in token order.
pub(super) fn absent_sum(positions: &[usize], weights: &[Option<Bm25Weight>]) -> f64 {
    let mut base = 0.0;
    for weight in positions.iter().filter_map(|&term| *weights.get(term)?) {
        base += weight.absent_score();
    }
    base
}

/// A bound on |estimate − exact sum|: both are sums of at most `tokens + terms + 2`
/// floats, each token adding less than `3.5 · idf` (δ + (k1+1)), so each differs from
/// the real sum by at most `n·u·Σ|x|`; the factor 4 leaves room for the products (a
/// share `count·idf · g` and the exact `idf·(δ + g)` use the same float `g`, and each
/// differs from its real value by two roundings).
pub(super) fn estimate_error(positions: &[usize], weights: &[Option<Bm25Weight>]) -> f64 {
    let total: f64 = positions.iter().filter_map(|&term| *weights.get(term)?).map(|w| 3.5 * w.idf()).sum();
    let n = (positions.len() + weights.len() + 8) as f64;
    4.0 * 2.0 * n * f64::EPSILON * total
}

impl QueryRun<'_> {
    /// After [`estimate_terms`]: the estimates in `raws`, and the exact maximum in `max_raw`.
    pub(super) fn finish_estimate(&mut self) {
        let base = self.exact_base();
        self.scratch.raws.iter_mut().for_each(|raw| *raw += base);
        self.base = base;
        let epsilon = self.error_bound();
        let top = self.scratch.raws.iter().copied().fold(0.0, f64::max);
        // The exact maximum is among the candidates whose estimate is within 2ε of the
        // best estimate: any other is exactly below the one with the best estimate.
        let near: Vec<usize> = (self.scratch.raws.iter().enumerate())
            .filter(|(_, raw)| **raw >= top - 2.0 * epsilon)
            .map(|(m, _)| m)
            .collect();
        self.exact_raws(&near);
        let mut max_raw = near.iter().filter_map(|&m| self.scratch.raws.get(m).copied()).fold(0.0, f64::max);
        if self.candidates.docs > self.matched_total {
            max_raw = max_raw.max(base);
        }
        self.max_raw = max_raw;
    }

    /// The raw score of a candidate holding no query term: `Σ idf·δ` in token order.
    fn exact_base(&self) -> f64 {
        absent_sum(&self.positions, &self.weights())
    }

    /// A bound on |estimate − exact sum| ([`estimate_error`]).
    pub(super) fn error_bound(&self) -> f64 {
        estimate_error(&self.positions, &self.weights())
    }

    fn weights(&self) -> Vec<Option<Bm25Weight>> {
        self.terms.iter().map(|term| term.weight).collect()
    }

    /// The matched candidates that can still reach the best `top_k` once exact (their
    /// raw scores made exact), given the estimates in `raws`; `unmatched` are exact.
    pub(super) fn survivors(
        &mut self,
        unmatched: &[super::Row],
        top_k: usize,
        rerank: bool,
        dates: &[&str],
    ) -> Vec<usize> {
        // |exact final − estimated final| ≤ ε/max plus the rounding of one division and
        // one addition.
        let slack = 2.0 * self.error_bound() / self.max_raw + 1e-12;
        // Adjustments are never negative, so the k-th largest estimated lexical score is
        // a floor for the k-th best estimate from the start (one comparison per row).
        let mut largest = Best::new(top_k);
        self.scratch.raws.iter().for_each(|&raw| largest.offer(raw));
        let floor = self.lexical(largest.least());
        let mut best = Best::new(top_k);
        let ceiling = self.adjustment_ceiling(rerank, dates);
        // (m, estimate) of the rows not yet ruled out.
        let mut estimates = Vec::new();
        for (m, (&slot, &raw)) in self.scratch.matched.iter().zip(&self.scratch.raws).enumerate() {
            let lexical = self.lexical(raw);
            // Below the floor of any k-th estimate to come even with the largest adjustment.
            if lexical + ceiling < best.least().max(floor) - 2.0 * slack - BAND_REACH {
                continue;
            }
            let adjustment = if rerank { self.adjustment(m, slot, dates) } else { 0.0 };
            let estimate = lexical + adjustment;
            // Only rows the drop rule keeps may set the cut; a dropped one stays a
            // survivor if high enough, which is merely conservative.
            if lexical > 0.0 || adjustment > SOURCE_GROUNDED {
                best.offer(estimate);
            }
            estimates.push((m, estimate));
        }
        unmatched.iter().for_each(|row| best.offer(row.final_score));
        let Some(kth) = best.kth() else { return Vec::new() };
        // The exact k-th score is at least `kth − slack`, and the rounding band around it
        // starts at most 10⁻⁶ (plus float error) below it.
        let cut = kth - 2.0 * slack - BAND_REACH;
        let survivors: Vec<usize> =
            estimates.iter().filter(|(_, estimate)| *estimate >= cut).map(|&(m, _)| m).collect();
        self.exact_raws(&survivors);
        survivors
    }

    /// Replace the estimates of matched candidates `ms` by their exact raw scores,
    /// summed as [`QueryRun::score`] sums them: per query token, from `0.0`.
    fn exact_raws(&mut self, ms: &[usize]) {
        let width = self.terms.len();
        // Their slots in order (each with its row), as ranges for the posting lists.
        let mut rows: Vec<(u32, usize)> =
            ms.iter().enumerate().filter_map(|(at, &m)| Some((*self.scratch.matched.get(m)?, at))).collect();
        rows.sort_unstable();
        let slots = SortedSlots::new(rows.iter().map(|&(slot, _)| slot).collect());
        let mut table = vec![Occurrence::ABSENT; ms.len() * width];
        for (term, query_term) in self.terms.iter().enumerate() {
            if query_term.weight.is_none() {
                continue;
            }
            self.index.posting_list(&query_term.text).for_each_at(&slots, |row, posting| {
                if let Some(cell) = rows.get(row).and_then(|&(_, at)| table.get_mut(at * width + term)) {
                    *cell = posting.occurrence();
                }
            });
        }
        let average_len = self.terms.iter().find_map(|term| term.weight).map_or(1.0, |w| w.average_len());
        let tokens: Vec<(usize, crate::bm25::Bm25Weight)> =
            self.positions.iter().filter_map(|&term| Some((term, self.terms.get(term)?.weight?))).collect();
        let Scratch { matched, raws, .. } = &mut self.scratch;
        for (at, &m) in ms.iter().enumerate() {
            let row = table.get(at * width..(at + 1) * width).unwrap_or_default();
            // The floats `QueryRun::score` computes: the same expressions.
            let norm = length_norm(matched.get(m).map_or(0, |&slot| self.index.length(slot)), average_len);
            let mut raw = 0.0;
            for &(term, weight) in &tokens {
                let tf = row.get(term).map_or(0, |cell| cell.tf());
                raw += if tf == 0 { weight.absent_score() } else { weight.score_with_norm(tf, norm) };
            }
            if let Some(slot) = raws.get_mut(m) {
                *slot = raw;
            }
        }
    }
}
