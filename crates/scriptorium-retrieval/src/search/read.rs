//! Reading a query's posting lists once, in windows of slots ([`super::windows`],
//! [`super::estimate_pass`]), into an estimate per matched candidate (see
//! [`super::bounded`]); then numbering only the candidates that can still rank.
//!
//! The estimates are all known once the pass is over, and so is the `top_k`-th largest
//! of them. A candidate whose estimate lies below it by more than the largest rule
//! adjustment, the rounding band and the estimate's error (all scaled by the largest
//! raw score) cannot reach the result, so it is never numbered, scored exactly or
//! ranked: most of a common term's holders are passed over this way.

use std::ops::Range;

use super::bounded::{absent_sum, estimate_error};
use super::candidate_postings::CandidatePostings;
use super::estimate_pass::{Saturation, TermShare, Window, WindowRead};
use super::scratch::{Scratch, UNSEEN};
use super::select::{BAND_REACH, Best};
use super::windows::Cutting;
use crate::bm25::{Bm25Weight, TermStats, average_len};
use crate::index::{Index, SortedSlots};
use crate::rules::{MIN_RULE_TOKEN_CHARS, RuleHits};

/// An unfiltered pass reading fewer postings than slots / this lists the slots it meets
/// as it meets them; a denser one finds them from the sums afterwards.
const TRACKED_SLOTS_PER_POSTING: usize = 2;

/// What a search will rank by, so that the read can leave out what cannot rank.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ranking {
    pub(super) top_k: usize,
    pub(super) rerank: bool,
    /// Whether the query holds a date (the date rule may then add to a row).
    pub(super) dated: bool,
}

/// What reading the posting lists gives, besides `Scratch::matched` and `Scratch::raws`.
pub(super) struct TermsRead {
    /// Per distinct term: its weight (`None`: no candidate holds it).
    pub(super) weights: Vec<Option<Bm25Weight>>,
    /// Per distinct term: its range of `Scratch::holders` (long terms of a reranked
    /// search; empty otherwise).
    pub(super) holders: Vec<Range<usize>>,
    /// How many candidates hold a query term, numbered or not.
    pub(super) matched_total: u64,
}

/// Read the lists of the query's distinct terms `texts` (`positions`: per token, its
/// term): estimates without `base` in `Scratch::raws` for the candidates in
/// `Scratch::matched`, which are those that can still rank by `ranking` (all of them
/// without one).
pub(super) fn read_terms(
    postings: &CandidatePostings<'_>,
    texts: &[String],
    positions: &[usize],
    scratch: &mut Scratch,
    ranking: Option<Ranking>,
) -> TermsRead {
    let (docs, tokens) = postings.candidates();
    let index = postings.index;
    let long: Vec<bool> = texts.iter().map(|text| text.chars().count() >= MIN_RULE_TOKEN_CHARS).collect();
    let weight = |text: &str, df: usize| Bm25Weight::for_term(&TermStats { docs, tokens, df: df as u64 }, text);
    // Every weight of one candidate set has this average length.
    let average_len = average_len(&TermStats { docs, tokens, df: 0 });
    let slots = index.slot_count();
    let Scratch { seen, met, matched, holders, raws, sums, found, kept, .. } = scratch;
    // Sums by slot (all 0 between queries); `found` is only ever written before read.
    if found.len() < slots {
        found.resize(slots, 0);
    }
    if sums.len() < slots {
        sums.resize(slots, 0.0);
    }
    let sums = sums.get_mut(..slots).unwrap_or_default();
    let found = found.get_mut(..slots).unwrap_or_default();
    let met = met.get_mut(..slots.div_ceil(64)).unwrap_or_default();
    let lengths = index.lengths();
    let listed: usize = texts.iter().map(|text| index.posting_list(text).len()).sum();
    let filtered = !postings.every_slot();
    // Few postings for the slots: list the slots met as they come rather than look at
    // every sum afterwards.
    let tracked = filtered || listed < slots / TRACKED_SLOTS_PER_POSTING;
    let top_k = ranking.map_or(1, |ranking| ranking.top_k);
    // What a filtered read decodes: the parts of the lists in the candidates' ranges.
    let decoded = postings.within_ranges(listed);
    let mut windows = Cutting::current().cut(sums, found, met, tracked, top_k, filtered.then_some(decoded));
    // The postings added up: all of them, or those a filtered read keeps.
    let mut added = listed;
    let weights: Vec<Option<Bm25Weight>> = if filtered {
        // Each window keeps its candidates' postings on a first look; their counts are
        // the document frequencies.
        windows.give_kept(kept);
        windows.read_each(decoded, || (), |window, ()| window.gather(postings, texts));
        added = (0..texts.len()).map(|term| windows.kept_count(term)).sum();
        texts.iter().enumerate().map(|(term, text)| weight(text, windows.kept_count(term))).collect()
    } else {
        // Over every slot a list's length is its document frequency.
        texts.iter().map(|text| weight(text, index.posting_list(text).len())).collect()
    };
    let mut counts = vec![0u32; texts.len()];
    for &term in positions {
        if let Some(count) = counts.get_mut(term) {
            *count += 1;
        }
    }
    let shares: Vec<Option<TermShare>> = (weights.iter().zip(&counts).zip(&long))
        .map(|((weight, &count), &long)| weight.map(|w| TermShare { scale: f64::from(count) * w.idf(), long }))
        .collect();
    windows.read_each(
        added,
        || Saturation::new(average_len),
        |window, saturation| {
            if filtered {
                window.add_kept(&shares, lengths, saturation);
            } else {
                for (term, (text, &share)) in texts.iter().zip(&shares).enumerate() {
                    window.add_term(
                        term,
                        index.posting_list(text).iter_from(window.start()),
                        share,
                        lengths,
                        saturation,
                    );
                }
            }
            window.close();
        },
    );
    let mut reads: Vec<WindowRead> = windows.into_inner().map(Window::finish).collect();
    kept.extend(reads.iter_mut().map(|read| std::mem::take(&mut read.kept)).filter(|kept| kept.capacity() > 0));
    let matched_total: usize = reads.iter().map(|read| read.found.len()).sum();
    let cut = ranking.map_or(f64::NEG_INFINITY, |ranking| rank_cut(ranking, &reads, positions, &weights));
    // Number the candidates at or above the cut, window by window; clear every sum.
    for read in &reads {
        for &slot in found.get(read.found.clone()).unwrap_or_default() {
            let sum = sums.get_mut(slot as usize).map_or(0.0, std::mem::take);
            if sum >= cut {
                matched.push(slot);
                raws.push(sum);
            }
        }
    }
    for (m, &slot) in matched.iter().enumerate() {
        if let Some(entry) = seen.get_mut(slot as usize) {
            *entry = u32::try_from(m).unwrap_or(UNSEEN);
        }
    }
    let listed_terms: Vec<bool> = (long.iter().zip(&weights))
        .map(|(&long, weight)| long && weight.is_some() && ranking.is_some_and(|ranking| ranking.rerank))
        .collect();
    let holders = list_holders(index, texts, &listed_terms, matched, holders);
    TermsRead { weights, holders, matched_total: matched_total as u64 }
}

/// The least estimate (without `base`) a candidate needs to reach the result: below it,
/// even its exact score plus the largest adjustment stays under the band of the `top_k`-th
/// best (−∞ when fewer than `top_k` candidates are matched).
fn rank_cut(ranking: Ranking, reads: &[WindowRead], positions: &[usize], weights: &[Option<Bm25Weight>]) -> f64 {
    let mut best = Best::new(ranking.top_k);
    reads.iter().flat_map(|read| read.best.kept()).for_each(|estimate| best.offer(estimate));
    let (Some(kth), true) = (best.kth(), best.len() >= ranking.top_k) else { return f64::NEG_INFINITY };
    let top = reads.iter().map(|read| read.top).fold(0.0, f64::max);
    let in_fields = |pick: fn(&(bool, bool)) -> bool| {
        (0..weights.len()).filter(|&term| reads.iter().any(|read| read.fields.get(term).is_some_and(pick))).count()
    };
    let ceiling = if ranking.rerank {
        let most = RuleHits {
            exact_terms: in_fields(|fields| fields.0),
            path_heading_terms: in_fields(|fields| fields.1),
            date: ranking.dated,
            grounded: true,
        };
        most.adjustment()
    } else {
        0.0
    };
    // Estimates are within ε of exact sums, and the largest exact raw score is at most
    // `top + base + ε`; the margins are twice what the ranking's own cuts allow.
    let epsilon = estimate_error(positions, weights);
    let largest_raw = top + absent_sum(positions, weights) + epsilon;
    kth - 8.0 * epsilon - (ceiling + 2.0 * BAND_REACH) * largest_raw
}

/// For each term listed, (number in `matched`, occurrence) of its holders among
/// `matched`, in slot order, read back from its posting list (only the blocks holding
/// them); its range of `holders`.
fn list_holders(
    index: &Index,
    texts: &[String],
    listed: &[bool],
    matched: &[u32],
    holders: &mut Vec<(u32, crate::index::Occurrence)>,
) -> Vec<Range<usize>> {
    let mut rows: Vec<(u32, u32)> = (matched.iter().zip(0u32..)).map(|(&slot, m)| (slot, m)).collect();
    if listed.iter().any(|&listed| listed) {
        rows.sort_unstable();
    }
    let slots = SortedSlots::new(rows.iter().map(|&(slot, _)| slot).collect());
    (texts.iter().zip(listed))
        .map(|(text, &listed)| {
            let first = holders.len();
            if listed {
                index.posting_list(text).for_each_at(&slots, |at, posting| {
                    if let Some(&(_, m)) = rows.get(at) {
                        holders.push((m, posting.occurrence()));
                    }
                });
            }
            first..holders.len()
        })
        .collect()
}
