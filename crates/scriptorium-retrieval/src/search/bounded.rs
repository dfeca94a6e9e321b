//! Scoring a long query (many tokens, as a CJK run gives) without the exact sum for every
//! matched candidate.
//!
//! The exact raw score is a left-to-right sum over every query token, so its cost is
//! tokens × candidates. Instead each candidate first gets a cheap estimate, `base` plus,
//! per term it holds, `(score − idf·δ) × the term's token count`: one addition per
//! (term, holder). Estimate and exact sum are sums of the same floats in a different
//! order, so they differ by at most [`QueryRun::error_bound`]. The exact sum is then
//! computed only for the candidates whose estimate can reach the maximum or the result;
//! every other candidate provably ranks below the result, so rankings and scores are
//! unchanged.

use super::select::Best;
use super::{QueryRun, memoised_score};
use crate::index::Occurrence;
use crate::rules::SOURCE_GROUNDED;

/// Queries with more tokens than this are scored by estimate first.
pub(super) const EXACT_TOKENS_MAX: usize = 8;

impl QueryRun<'_> {
    /// Estimates for every matched candidate in `raws`, the exact maximum in `max_raw`.
    pub(super) fn score_by_estimate(&mut self, average_len: f64) {
        let base = self.exact_base();
        let width = self.terms.len();
        let mut token_counts = vec![0u32; width];
        for &term in &self.positions {
            if let Some(count) = token_counts.get_mut(term) {
                *count += 1;
            }
        }
        let super::Scratch { matched, lengths, holders, raws, term_scores, .. } = &mut self.scratch;
        raws.clear();
        raws.resize(matched.len(), 0.0);
        for (term, query_term) in self.terms.iter().enumerate() {
            let Some(weight) = query_term.weight else { continue };
            let count = f64::from(token_counts.get(term).copied().unwrap_or(0));
            let absent = weight.absent_score();
            for &(m, occurrence) in holders.get(query_term.holders.clone()).unwrap_or_default() {
                let length = lengths.get(m as usize).copied().unwrap_or(0);
                let score = memoised_score(term_scores, term, weight, occurrence.tf(), length, average_len);
                if let Some(raw) = raws.get_mut(m as usize) {
                    *raw += count * (score - absent);
                }
            }
        }
        raws.iter_mut().for_each(|raw| *raw += base);
        self.base = base;
        self.estimated = true;
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
        if self.candidates.docs > self.scratch.matched.len() as u64 {
            max_raw = max_raw.max(base);
        }
        self.max_raw = max_raw;
    }

    /// The raw score of a candidate holding no query term: `Σ idf·δ` in token order.
    fn exact_base(&self) -> f64 {
        let mut base = 0.0;
        for weight in self.positions.iter().filter_map(|&term| self.terms.get(term)?.weight) {
            base += weight.absent_score();
        }
        base
    }

    /// A bound on |estimate − exact sum|: both are sums of at most `tokens + terms + 2`
    /// floats, each token adding less than `3.5 · idf` (δ + (k1+1)), so each differs from
    /// the real sum by at most `n·u·Σ|x|`; the factor 4 leaves room for the products.
    pub(super) fn error_bound(&self) -> f64 {
        let total: f64 =
            self.positions.iter().filter_map(|&term| self.terms.get(term)?.weight).map(|w| 3.5 * w.idf()).sum();
        let n = (self.positions.len() + self.terms.len() + 8) as f64;
        4.0 * 2.0 * n * f64::EPSILON * total
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
        let mut best = Best::new(top_k);
        let mut estimates = Vec::with_capacity(self.scratch.matched.len());
        for (m, (&slot, &raw)) in self.scratch.matched.iter().zip(&self.scratch.raws).enumerate() {
            let adjustment = if rerank { self.adjustment(m, slot, dates) } else { 0.0 };
            let lexical = self.lexical(raw);
            let estimate = lexical + adjustment;
            // Only rows the drop rule keeps may set the cut; a dropped one stays a
            // survivor if high enough, which is merely conservative.
            if lexical > 0.0 || adjustment > SOURCE_GROUNDED {
                best.offer(estimate);
            }
            estimates.push(estimate);
        }
        unmatched.iter().for_each(|row| best.offer(row.final_score));
        let Some(kth) = best.kth() else { return Vec::new() };
        // The exact k-th score is at least `kth − slack`, and the rounding band around it
        // starts at most 10⁻⁶ (plus float error) below it.
        let floor = kth - 2.0 * slack - 3e-6;
        let survivors: Vec<usize> =
            estimates.iter().enumerate().filter(|(_, estimate)| **estimate >= floor).map(|(m, _)| m).collect();
        self.exact_raws(&survivors);
        survivors
    }

    /// Replace the estimates of matched candidates `ms` by their exact raw scores,
    /// summed as [`QueryRun::score`] sums them: per query token, from `0.0`.
    fn exact_raws(&mut self, ms: &[usize]) {
        let width = self.terms.len();
        let mut pick = vec![u32::MAX; self.scratch.matched.len()];
        for (at, &m) in ms.iter().enumerate() {
            if let Some(entry) = pick.get_mut(m) {
                *entry = u32::try_from(at).unwrap_or(u32::MAX);
            }
        }
        let mut table = vec![Occurrence::ABSENT; ms.len() * width];
        if ms.len() * width * 32 < self.scratch.holders.len() {
            // Few candidates: look each one up in the posting lists.
            for (at, &m) in ms.iter().enumerate() {
                let Some(&slot) = self.scratch.matched.get(m) else { continue };
                for (term, query_term) in self.terms.iter().enumerate() {
                    if let Some(cell) = table.get_mut(at * width + term) {
                        *cell = query_term.occurrence(&self.scratch, slot);
                    }
                }
            }
        } else {
            for (term, query_term) in self.terms.iter().enumerate() {
                for &(m, occurrence) in self.scratch.holders.get(query_term.holders.clone()).unwrap_or_default() {
                    let Some(&at) = pick.get(m as usize).filter(|at| **at != u32::MAX) else { continue };
                    if let Some(cell) = table.get_mut(at as usize * width + term) {
                        *cell = occurrence;
                    }
                }
            }
        }
        let average_len = self.terms.iter().find_map(|term| term.weight).map_or(1.0, |w| w.average_len());
        let tokens: Vec<(usize, crate::bm25::Bm25Weight)> =
            self.positions.iter().filter_map(|&term| Some((term, self.terms.get(term)?.weight?))).collect();
        let super::Scratch { lengths, raws, term_scores, .. } = &mut self.scratch;
        for (at, &m) in ms.iter().enumerate() {
            let row = table.get(at * width..(at + 1) * width).unwrap_or_default();
            let length = lengths.get(m).copied().unwrap_or(0);
            let mut raw = 0.0;
            for &(term, weight) in &tokens {
                let tf = row.get(term).map_or(0, |cell| cell.tf());
                raw += if tf == 0 {
                    weight.absent_score()
                } else {
                    memoised_score(term_scores, term, weight, tf, length, average_len)
                };
            }
            if let Some(slot) = raws.get_mut(m) {
                *slot = raw;
            }
        }
    }
}
