//! Scoring a long query (many tokens, as a CJK run gives) without the exact sum for every
//! matched candidate.
//!
//! The exact raw score is a left-to-right sum over every query token, so its cost is
//! tokens × candidates. Instead each candidate first gets a cheap estimate, `base` plus,
//! per term it holds, `(score − idf·δ) × the term's token count`: one addition per
//! (term, holder), made as the posting is decoded, into a per-slot sum (so each term's
//! pass touches memory in slot order only). Estimate and exact sum are sums of the same
//! floats in a different order, so they differ by at most [`QueryRun::error_bound`]. The
//! exact sum is then computed only for the candidates whose estimate can reach the
//! maximum or the result, reading their occurrences back from the posting lists (only
//! the blocks holding them); every other candidate provably ranks below the result, so
//! rankings and scores are unchanged.

use std::ops::Range;

use super::candidate_postings::CandidatePostings;
use super::scratch::{Scratch, UNSEEN};
use super::select::{BAND_REACH, Best};
use super::{MEMO_LEN, MEMO_TF, QueryRun, TermsRead, memoised_score};
use crate::bm25::{Bm25Weight, TermStats, length_norm};
use crate::index::{Occurrence, Posting};
use crate::rules::{MIN_RULE_TOKEN_CHARS, SOURCE_GROUNDED};

/// Queries with more tokens than this are scored by estimate first.
pub(super) const EXACT_TOKENS_MAX: usize = 8;

/// The memo of one term's estimate shares, `count·(score − idf·δ)`, by (tf, length).
const DELTA_ROWS: usize = MEMO_TF as usize;
const DELTA_WIDTH: usize = MEMO_LEN as usize + 1;

/// Read the postings of a long query once, term by term: number the matched candidates
/// and add each posting's share of its candidate's estimate (`Scratch::raws`, without
/// `base`) as it is decoded. Holders are listed only for the long terms, which the rules
/// read; the exact sums look the others up in the posting lists ([`QueryRun::exact_raws`]).
pub(super) fn estimate_terms(
    postings: &CandidatePostings<'_>,
    texts: &[String],
    positions: &[usize],
    scratch: &mut Scratch,
) -> TermsRead {
    let (docs, tokens) = postings.candidates();
    let index = postings.index;
    let mut token_counts = vec![0u32; texts.len()];
    for &term in positions {
        if let Some(count) = token_counts.get_mut(term) {
            *count += 1;
        }
    }
    let mut weights = Vec::with_capacity(texts.len());
    let mut spans = Vec::with_capacity(texts.len());
    let Scratch { seen, matched, lengths, holders, raws, deltas, sums, kept, .. } = scratch;
    // Sums by slot: each term's postings then touch memory in slot order only.
    if sums.len() < seen.len() {
        sums.resize(seen.len(), 0.0);
    }
    for (text, &count) in texts.iter().zip(&token_counts) {
        let (first_holder, first_found) = (holders.len(), matched.len());
        // Filtered: the candidates' postings are kept for the second look the weight
        // needs (their count is the df), rather than decoded and tested twice.
        let mut kept_len = 0;
        let df = if postings.every_slot() {
            postings.index.posting_list(text).len() as u64
        } else {
            kept_len = postings.collect(text, kept);
            kept_len as u64
        };
        let weight = Bm25Weight::for_term(&TermStats { docs, tokens, df }, text);
        if let Some(weight) = weight {
            let (count, absent, average_len) = (f64::from(count), weight.absent_score(), weight.average_len());
            let long = text.chars().count() >= MIN_RULE_TOKEN_CHARS;
            deltas.clear();
            deltas.resize(DELTA_ROWS * DELTA_WIDTH, f64::NAN);
            let mut add = posting_visitor(
                #[inline(always)]
                |posting: Posting| {
                    let slot = posting.slot;
                    let occurrence = posting.occurrence();
                    let (Some(sum), length, tf) = (sums.get_mut(slot as usize), index.length(slot), occurrence.tf())
                    else {
                        return;
                    };
                    // Rows tf 1..=3, columns the lengths below `MEMO_LEN` and one that is
                    // never filled (longer documents); any other tf falls outside.
                    let at = tf.wrapping_sub(1) as usize * DELTA_WIDTH + length.min(MEMO_LEN) as usize;
                    let delta = match deltas.get(at) {
                        Some(&delta) if !delta.is_nan() => delta,
                        _ => {
                            // The float `memoised_score` gives, so estimates stay as they were.
                            let score = weight.score_with_norm(tf, length_norm(length, average_len));
                            let delta = count * (score - absent);
                            if length < MEMO_LEN
                                && let Some(cell) = deltas.get_mut(at)
                            {
                                *cell = delta;
                            }
                            delta
                        }
                    };
                    // Every share is positive (tf ≥ 1, idf > 0): a sum still 0 is a
                    // candidate met first, numbered now.
                    if *sum == 0.0
                        && delta > 0.0
                        && let Some(entry) = seen.get_mut(slot as usize)
                    {
                        *entry = u32::try_from(matched.len()).unwrap_or(UNSEEN);
                        matched.push(slot);
                        lengths.push(length);
                    }
                    *sum += delta;
                    if long && let Some(&entry) = seen.get(slot as usize) {
                        holders.push((entry, occurrence));
                    }
                },
            );
            // Plain loops calling `add` directly, so that it is inlined.
            if postings.every_slot() {
                for posting in index.postings(text) {
                    add(posting);
                }
            } else {
                for &posting in kept.get(..kept_len).unwrap_or_default() {
                    add(posting);
                }
            }
        }
        weights.push(weight);
        spans.push((first_holder..holders.len(), first_found..matched.len()));
    }
    raws.clear();
    for &slot in matched.iter() {
        if let Some(sum) = sums.get_mut(slot as usize) {
            raws.push(std::mem::take(sum));
        }
    }
    (weights, spans)
}

/// `visit` itself: a closure given as an argument can be marked `#[inline(always)]`.
fn posting_visitor<F: FnMut(Posting)>(visit: F) -> F {
    visit
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
        let ceiling = self.adjustment_ceiling(rerank, dates);
        let mut estimates = Vec::with_capacity(self.scratch.matched.len());
        for (m, (&slot, &raw)) in self.scratch.matched.iter().zip(&self.scratch.raws).enumerate() {
            let lexical = self.lexical(raw);
            // Below the floor of any k-th estimate to come even with the largest adjustment.
            if lexical + ceiling < best.least() - 2.0 * slack - BAND_REACH {
                estimates.push(f64::NEG_INFINITY);
                continue;
            }
            let adjustment = if rerank { self.adjustment(m, slot, dates) } else { 0.0 };
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
        let floor = kth - 2.0 * slack - BAND_REACH;
        let survivors: Vec<usize> =
            estimates.iter().enumerate().filter(|(_, estimate)| **estimate >= floor).map(|(m, _)| m).collect();
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
        let ranges: Vec<Range<u32>> = rows.iter().map(|&(slot, _)| slot..slot.saturating_add(1)).collect();
        let mut table = vec![Occurrence::ABSENT; ms.len() * width];
        for (term, query_term) in self.terms.iter().enumerate() {
            if query_term.weight.is_none() {
                continue;
            }
            let mut next = 0;
            self.index.posting_list(&query_term.text).for_each_within(&ranges, |posting| {
                while rows.get(next).is_some_and(|&(slot, _)| slot < posting.slot) {
                    next += 1;
                }
                if let Some(&(slot, at)) = rows.get(next)
                    && slot == posting.slot
                    && let Some(cell) = table.get_mut(at * width + term)
                {
                    *cell = posting.occurrence();
                }
            });
        }
        let average_len = self.terms.iter().find_map(|term| term.weight).map_or(1.0, |w| w.average_len());
        let tokens: Vec<(usize, crate::bm25::Bm25Weight)> =
            self.positions.iter().filter_map(|&term| Some((term, self.terms.get(term)?.weight?))).collect();
        let Scratch { lengths, raws, term_scores, .. } = &mut self.scratch;
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
