//! Scoring a long query (many tokens, as a CJK run gives) without the exact sum for every
//! matched candidate.
//!
//! The exact raw score is a left-to-right sum over every query token, so its cost is
//! tokens × candidates. Instead each candidate first gets a cheap estimate: `base` plus,
//! per term it holds, `count·idf · g(tf, length)`, where `g` is the BM25 saturation the
//! exact score also computes (`idf·(δ + g)` per token). That is one multiplication and
//! one addition per (term, holder), made as the posting is decoded, into a per-slot sum
//! ([`estimate_pass`](super::estimate_pass), over windows of slots, see
//! [`windows`](super::windows)). Estimate and exact sum add up the same real numbers in
//! a different order and rounding, so they differ by at most [`QueryRun::error_bound`].
//! The exact sum is then computed only for the candidates whose estimate can reach the
//! maximum or the result, reading their occurrences back from the posting lists (only
//! the blocks holding them); every other candidate provably ranks below the result, so
//! rankings and scores are unchanged.

use std::ops::Range;

use super::candidate_postings::CandidatePostings;
use super::estimate_pass::{Saturation, TermShare, Window, WindowRead};
use super::scratch::{Scratch, UNSEEN};
use super::select::{BAND_REACH, Best};
use super::windows::Cutting;
use super::{QueryRun, TermsRead};
use crate::bm25::{Bm25Weight, TermStats, length_norm};
use crate::index::Occurrence;
use crate::rules::{MIN_RULE_TOKEN_CHARS, SOURCE_GROUNDED};

/// Queries with more tokens than this are scored by estimate first.
pub(super) const EXACT_TOKENS_MAX: usize = 8;

/// Read the postings of a long query once, term by term: add each posting's share of
/// its candidate's estimate (`Scratch::raws`, without `base`) as it is decoded, then
/// number the matched candidates. Holders are listed only for the long terms, which the
/// rules read; the exact sums look the others up in the posting lists
/// ([`QueryRun::exact_raws`]).
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
    let weight = |text: &str, df: usize| Bm25Weight::for_term(&TermStats { docs, tokens, df: df as u64 }, text);
    let shares_of = |weights: &[Option<Bm25Weight>]| -> Vec<Option<TermShare>> {
        (texts.iter().zip(weights).zip(&token_counts))
            .map(|((text, weight), &count)| {
                let long = text.chars().count() >= MIN_RULE_TOKEN_CHARS;
                weight.map(|weight| TermShare { scale: f64::from(count) * weight.idf(), long })
            })
            .collect()
    };
    // Every weight of one candidate set has this average length.
    let average_len = crate::bm25::average_len(&TermStats { docs, tokens, df: 0 });
    let slots = index.slot_count();
    let Scratch { seen, matched, holders, raws, sums, found, kept, .. } = scratch;
    // Sums by slot (all 0 between queries); `found` is only ever written before read.
    if found.len() < slots {
        found.resize(slots, 0);
    }
    if sums.len() < slots {
        sums.resize(slots, 0.0);
    }
    let (sums, found) = (sums.get_mut(..slots).unwrap_or_default(), found.get_mut(..slots).unwrap_or_default());
    let lengths = index.lengths();
    let new_saturation = || Saturation::new(average_len);
    let listed: usize = texts.iter().map(|text| index.posting_list(text).len()).sum();
    let mut weights = Vec::with_capacity(texts.len());
    let windows = if postings.every_slot() {
        // Over every slot a list's length is its document frequency.
        weights.extend(texts.iter().map(|text| weight(text, index.posting_list(text).len())));
        let shares = shares_of(&weights);
        let windows = Cutting::current().cut(sums, found, false);
        windows.read_each(listed, new_saturation, |window, saturation| {
            for (text, &share) in texts.iter().zip(&shares) {
                window.add_term(index.posting_list(text).iter_from(window.start()), share, lengths, saturation);
            }
            window.list_found();
        });
        windows
    } else {
        // Filtered: each window keeps its candidates' postings on the first look; their
        // counts are the document frequencies the shares need.
        let mut windows = Cutting::current().cut(sums, found, true);
        windows.give_kept(kept);
        windows.read_each(listed, || (), |window, ()| window.gather(postings, texts));
        weights.extend(texts.iter().enumerate().map(|(term, text)| weight(text, windows.kept_count(term))));
        let shares = shares_of(&weights);
        windows.read_each(listed, new_saturation, |window, saturation| {
            window.add_kept(&shares, lengths, saturation);
        });
        windows
    };
    let mut windows: Vec<WindowRead> = windows.into_inner().map(Window::finish).collect();
    kept.extend(windows.iter_mut().map(|window| std::mem::take(&mut window.kept)).filter(|kept| kept.capacity() > 0));
    // Number the matched candidates, window by window, and take their sums.
    for window in &windows {
        matched.extend_from_slice(found.get(window.found.clone()).unwrap_or_default());
    }
    raws.extend(matched.iter().map(|&slot| sums.get_mut(slot as usize).map_or(0.0, std::mem::take)));
    for (m, &slot) in matched.iter().enumerate() {
        if let Some(entry) = seen.get_mut(slot as usize) {
            *entry = u32::try_from(m).unwrap_or(UNSEEN);
        }
    }
    // Each term's holders, window after window (so in slot order), by matched number.
    let spans = (0..texts.len())
        .map(|term| {
            let first = holders.len();
            for window in &windows {
                let span = window.holder_spans.get(term).cloned().unwrap_or_default();
                let listed = window.holders.get(span).unwrap_or_default();
                holders.extend(
                    listed
                        .iter()
                        .map(|&(slot, occurrence)| (seen.get(slot as usize).copied().unwrap_or(UNSEEN), occurrence)),
                );
            }
            // Which term met a candidate first is not kept: only the exact path reads it.
            (first..holders.len(), 0..0)
        })
        .collect();
    (weights, spans)
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
    /// the real sum by at most `n·u·Σ|x|`; the factor 4 leaves room for the products
    /// (a share `count·idf · g` and the exact `idf·(δ + g)` use the same float `g`, and
    /// each differs from its real value by two roundings).
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
