//! BM25 search over the index (spec 02 §6.3): BM25+ over the filtered candidates only,
//! max-normalisation, rule adjustments, rounding, ranking.
//!
//! Why it is fast: a query reads only the posting lists of its own tokens, once. With
//! δ > 0 every candidate scores, but a candidate holding none of the query tokens scores
//! exactly `Σ idf·δ` — the same float for all of them — and earns no rule except
//! `source_grounded` (every other rule needs a query token in its text). So only the
//! matched candidates are scored one by one; of the others, only the first `top_k` in
//! (path, line, id) order with and without refs can reach the result, and the files are
//! walked in that order.
//!
//! The matched candidates are scored in three steps ([`read`], [`bounded`]): one pass
//! over the postings gives each an estimate within a known bound of its exact score
//! (in windows of slots that stay in cache, on two threads for a large query); only
//! those whose estimate can reach the result are numbered; of those, only the ones
//! that can still reach it are scored exactly, in the reference's order of additions.
//! A filtered query decodes only the blocks of each posting list that reach the slot
//! ranges of its candidates (a path prefix keeps a few files, each a slot range).
//!
//! Buffers are reused across queries ([`Scratch`]), and the best `top_k` are picked
//! without sorting ([`select`]); paths, strings and rounding are only touched for the
//! rows that can still make the result.

use std::ops::Range;

use self::candidate_postings::CandidatePostings;
use self::read::{Ranking, read_terms};
use self::scratch::Scratch;
use self::select::{BAND_REACH, Band, Best};
use crate::bm25::{Bm25Weight, Explanation};
use crate::error::Error;
use crate::filter::{Filters, Selection};
use crate::hit::{Bm25Score, Hit, Score};
use crate::index::{Candidates, Index, Occurrence};
use crate::round::round6;
use crate::rules::{MIN_RULE_TOKEN_CHARS, RuleHits, SOURCE_GROUNDED, query_dates, rule_features};
use crate::tokenize::tokenize;

/// The most hits one index query returns (`top_k` is clamped to `1..=50`).
pub const INDEX_TOP_K_MAX: usize = 50;

/// Options of one BM25 query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bm25Options {
    /// How many hits to return, clamped to `1..=50`.
    pub top_k: usize,
    /// Whether to add the rule adjustments (`false`: `final_score` is the lexical score).
    pub rerank: bool,
    /// The candidate filters.
    pub filters: Filters,
}

impl Default for Bm25Options {
    fn default() -> Self {
        Bm25Options { top_k: 8, rerank: true, filters: Filters::default() }
    }
}

impl Index {
    /// The best `top_k` events for `query`, best first: sorted by
    /// `(−final_score, path, line, event_id)` on scores rounded to 6 decimals.
    ///
    /// A query without tokens, or filters that keep nothing, give no hits. Errors:
    /// [`ErrorCode::InvalidDate`](crate::ErrorCode::InvalidDate) and
    /// [`ErrorCode::EmptyDateWindow`](crate::ErrorCode::EmptyDateWindow) for a bad window.
    pub fn search(&self, query: &str, options: &Bm25Options) -> Result<Vec<Hit>, Error> {
        let selection = Selection::new(&options.filters)?;
        let top_k = options.top_k.clamp(1, INDEX_TOP_K_MAX);
        let ranking = Ranking { top_k, rerank: options.rerank, dated: !query_dates(query).is_empty() };
        let Some(mut run) = QueryRun::new(self, query, &selection, Some(ranking)) else { return Ok(Vec::new()) };
        run.top(top_k, options.rerank)
    }

    /// How the raw BM25+ score of `event_id` for `query` is made, or `None` when the
    /// event is not a candidate of these filters.
    pub fn explain(&self, query: &str, filters: &Filters, event_id: &str) -> Result<Option<Explanation>, Error> {
        let selection = Selection::new(filters)?;
        let Some(run) = QueryRun::new(self, query, &selection, None) else { return Ok(None) };
        Ok(run.explain(event_id))
    }
}

/// One distinct query token.
struct QueryTerm {
    text: String,
    /// `None` when no candidate holds the term: it adds nothing.
    weight: Option<Bm25Weight>,
    /// Its holders among the matched candidates, for a long term of a reranked search
    /// (the rules read them): a range of `Scratch::holders`, empty otherwise.
    holders: Range<usize>,
}

impl QueryTerm {
    /// How the candidate at `slot` holds this term: its holders are in slot order.
    fn occurrence(&self, scratch: &Scratch, slot: u32) -> Occurrence {
        let holders = scratch.holders.get(self.holders.clone()).unwrap_or_default();
        let slot_of = |&(m, _): &(u32, Occurrence)| scratch.matched.get(m as usize).copied().unwrap_or(u32::MAX);
        holders
            .binary_search_by_key(&slot, slot_of)
            .ok()
            .and_then(|at| holders.get(at))
            .map_or(Occurrence::ABSENT, |&(_, occurrence)| occurrence)
    }
}

/// A candidate that may reach the result, before its hit is built.
#[derive(Clone, Copy, Debug)]
struct Row {
    slot: u32,
    /// Whether the candidate holds a query term.
    matched: bool,
    raw: f64,
    lexical: f64,
    adjustment: f64,
    /// `lexical + adjustment`, rounded only once the row is among the finalists.
    final_score: f64,
}

/// Queries with at most this many long terms look adjustments up in a table.
const ADJUSTMENT_TABLE_TERMS: usize = 16;

/// The state of one query over one candidate set.
struct QueryRun<'i> {
    index: &'i Index,
    query: &'i str,
    candidates: Candidates<'i>,
    /// Per query token (duplicates kept, query order): its index in `terms`.
    positions: Vec<usize>,
    terms: Vec<QueryTerm>,
    scratch: Scratch,
    /// The raw score of a candidate holding no query term.
    base: f64,
    /// The largest raw score of any candidate (0 when no term occurs).
    max_raw: f64,
    /// How many candidates hold a query term (those in `Scratch::matched` can rank).
    matched_total: u64,
    /// The number of long query terms, and the adjustment table `count_long_terms` builds.
    long_count: usize,
    /// How many long terms any candidate holds in its content, and in its path or
    /// headings: no row counts more.
    long_in_content: usize,
    long_in_path_heading: usize,
    adjustments: Vec<f64>,
}

impl Drop for QueryRun<'_> {
    fn drop(&mut self) {
        std::mem::take(&mut self.scratch).give_back();
    }
}

impl<'i> QueryRun<'i> {
    fn new(index: &'i Index, query: &'i str, selection: &Selection, ranking: Option<Ranking>) -> Option<Self> {
        let tokens = tokenize(query);
        if tokens.is_empty() || selection.is_nothing() {
            return None;
        }
        let candidates = index.candidates(selection);
        if candidates.docs == 0 {
            return None;
        }
        let mut texts: Vec<String> = Vec::new();
        let positions: Vec<usize> = tokens
            .into_iter()
            .map(|token| match texts.iter().position(|seen| *seen == token) {
                Some(at) => at,
                None => {
                    texts.push(token);
                    texts.len() - 1
                }
            })
            .collect();

        let mut scratch = Scratch::take(index.slot_count());
        let postings = CandidatePostings::new(index, &candidates);
        let read = read_terms(&postings, &texts, &positions, &mut scratch, ranking);
        let terms: Vec<QueryTerm> = (texts.into_iter().zip(read.weights).zip(read.holders))
            .map(|((text, weight), holders)| QueryTerm { text, weight, holders })
            .collect();
        let mut run = QueryRun {
            index,
            query,
            candidates,
            positions,
            terms,
            scratch,
            base: 0.0,
            max_raw: 0.0,
            matched_total: read.matched_total,
            long_count: 0,
            long_in_content: 0,
            long_in_path_heading: 0,
            adjustments: Vec::new(),
        };
        run.finish_estimate();
        Some(run)
    }

    /// Per matched candidate, how many long terms its content and its path or headings hold.
    fn count_long_terms(&mut self, long: &[(usize, &str)]) {
        // Every adjustment a query without a date can give, by (exact, path/heading, refs).
        self.long_count = long.len();
        self.adjustments.clear();
        if long.len() <= ADJUSTMENT_TABLE_TERMS {
            for exact_terms in 0..=long.len() {
                for path_heading_terms in 0..=long.len() {
                    for grounded in [false, true] {
                        let hits = RuleHits { exact_terms, path_heading_terms, date: false, grounded };
                        self.adjustments.push(hits.adjustment());
                    }
                }
            }
        }
        let Scratch { matched, holders, exact_terms, path_heading_terms, .. } = &mut self.scratch;
        exact_terms.clear();
        exact_terms.resize(matched.len(), 0);
        path_heading_terms.clear();
        path_heading_terms.resize(matched.len(), 0);
        (self.long_in_content, self.long_in_path_heading) = (0, 0);
        for (term, _) in long {
            let Some(query_term) = self.terms.get(*term) else { continue };
            let term_holders = holders.get(query_term.holders.clone()).unwrap_or_default();
            self.long_in_content += usize::from(term_holders.iter().any(|(_, occurrence)| occurrence.in_content()));
            self.long_in_path_heading +=
                usize::from(term_holders.iter().any(|(_, occurrence)| occurrence.in_path_heading()));
            for &(m, occurrence) in term_holders {
                if occurrence.in_content()
                    && let Some(count) = exact_terms.get_mut(m as usize)
                {
                    *count = count.saturating_add(1);
                }
                if occurrence.in_path_heading()
                    && let Some(count) = path_heading_terms.get_mut(m as usize)
                {
                    *count = count.saturating_add(1);
                }
            }
        }
    }

    fn lexical(&self, raw: f64) -> f64 {
        if self.max_raw > 0.0 { raw / self.max_raw } else { 0.0 }
    }

    /// The long query terms (≥ 3 characters), sorted, with their term index.
    fn long_terms(&self) -> Vec<(usize, String)> {
        let mut long: Vec<(usize, String)> = (self.terms.iter().enumerate())
            .filter(|(_, term)| term.text.chars().count() >= MIN_RULE_TOKEN_CHARS)
            .map(|(at, term)| (at, term.text.clone()))
            .collect();
        long.sort_by(|a, b| a.1.cmp(&b.1));
        long
    }

    fn top(&mut self, top_k: usize, rerank: bool) -> Result<Vec<Hit>, Error> {
        if self.max_raw <= 0.0 {
            // No query term occurs among the candidates: every lexical score is 0 and
            // the only rule a candidate can meet then is `source_grounded` (0.02), which
            // does not keep an event.
            return Ok(Vec::new());
        }
        let long = self.long_terms();
        let long: Vec<(usize, &str)> = long.iter().map(|(term, text)| (*term, text.as_str())).collect();
        if rerank {
            self.count_long_terms(&long);
        }
        let dates = query_dates(self.query);
        let unmatched = self.unmatched_rows(top_k, rerank);
        // Raw scores are estimates: only the survivors are exact, and only they can rank.
        let survivors = self.survivors(&unmatched, top_k, rerank, &dates);
        let mut finals = std::mem::take(&mut self.scratch.finals);
        finals.clear();
        finals.resize(self.scratch.matched.len(), f64::NEG_INFINITY);
        let mut best = Best::new(top_k);
        let ceiling = self.adjustment_ceiling(rerank, &dates);
        for &m in &survivors {
            let (Some(&slot), Some(&raw)) = (self.scratch.matched.get(m), self.scratch.raws.get(m)) else { continue };
            let lexical = self.lexical(raw);
            // Even with the largest adjustment, below the band of any k-th score to come
            // (see `BAND_REACH`): neither ranked nor a finalist, so not looked at further.
            if lexical + ceiling < best.least() - BAND_REACH {
                continue;
            }
            let adjustment = if rerank { self.adjustment(m, slot, &dates) } else { 0.0 };
            if lexical <= 0.0 && adjustment <= SOURCE_GROUNDED {
                continue;
            }
            let final_score = lexical + adjustment;
            best.offer(final_score);
            if let Some(cell) = finals.get_mut(m) {
                *cell = final_score;
            }
        }
        unmatched.iter().for_each(|row| best.offer(row.final_score));
        let mut finalists = match best.kth() {
            Some(kth) => self.finalists(&finals, &unmatched, Band::around(kth), top_k, &dates, rerank),
            None => Vec::new(),
        };
        self.scratch.finals = finals;
        for row in &mut finalists {
            row.final_score = round6(row.final_score);
        }
        let index = self.index;
        finalists.sort_by(|a, b| {
            b.final_score.total_cmp(&a.final_score).then_with(|| index.rank(a.slot).cmp(&index.rank(b.slot)))
        });
        finalists.truncate(top_k);
        finalists.iter().filter_map(|row| self.hit(row, &long, &dates, rerank).transpose()).collect()
    }

    /// The rows of the result, unrounded and unsorted: those rounding above the band,
    /// then those in it, first in (path, line, id) order (see [`select`]).
    fn finalists(
        &self,
        finals: &[f64],
        unmatched: &[Row],
        band: Band,
        top_k: usize,
        dates: &[&str],
        rerank: bool,
    ) -> Vec<Row> {
        let mut rows: Vec<Row> = Vec::with_capacity(top_k);
        // (rank, m) of the matched rows in the band.
        let mut tied: Vec<(u32, usize)> = Vec::new();
        let mut tied_unmatched: Vec<Row> = Vec::new();
        for (m, &final_score) in finals.iter().enumerate() {
            if final_score < band.low {
                continue;
            }
            let Some(&slot) = self.scratch.matched.get(m) else { continue };
            if final_score >= band.high {
                rows.extend(self.matched_row(m, slot, dates, rerank));
            } else {
                tied.push((self.index.rank(slot), m));
            }
        }
        for row in unmatched.iter().filter(|row| row.final_score >= band.low) {
            if row.final_score >= band.high { rows.push(*row) } else { tied_unmatched.push(*row) }
        }
        // Fewer than `top_k` rows round above the band; the band fills the rest in
        // (path, line, id) order, and no unmatched row precedes the ones offered.
        let need = top_k.saturating_sub(rows.len());
        if tied.len() > need {
            if let Some(last) = need.checked_sub(1) {
                tied.select_nth_unstable_by_key(last, |&(rank, _)| rank);
            }
            tied.truncate(need);
        }
        for (_, m) in tied {
            if let Some(&slot) = self.scratch.matched.get(m) {
                rows.extend(self.matched_row(m, slot, dates, rerank));
            }
        }
        rows.extend(tied_unmatched);
        rows
    }

    /// The row of matched candidate `m` (the same floats as the first pass computed).
    fn matched_row(&self, m: usize, slot: u32, dates: &[&str], rerank: bool) -> Option<Row> {
        let raw = *self.scratch.raws.get(m)?;
        let lexical = self.lexical(raw);
        let adjustment = if rerank { self.adjustment(m, slot, dates) } else { 0.0 };
        Some(Row { slot, matched: true, raw, lexical, adjustment, final_score: lexical + adjustment })
    }

    /// The first `top_k` candidates holding no query term, with refs and without, in
    /// (path, line, id) order: no other such candidate can rank above them. Once `top_k`
    /// with refs are found, none without can rank above them either.
    fn unmatched_rows(&self, top_k: usize, rerank: bool) -> Vec<Row> {
        let mut rows = Vec::new();
        let lexical = self.lexical(self.base);
        let unmatched = self.candidates.docs.saturating_sub(self.matched_total);
        if lexical <= 0.0 || unmatched == 0 {
            return rows;
        }
        let (mut taken, mut visited) = ([0usize; 2], 0u64);
        'files: for file in self.index.files().values() {
            for slot in file.range() {
                let met = self.scratch.met.get(slot as usize / 64).is_some_and(|word| word & (1 << (slot % 64)) != 0);
                if met || !self.candidates.set.contains(slot) {
                    continue;
                }
                visited += 1;
                let grounded = rerank && self.index.is_grounded(slot);
                let group = usize::from(grounded);
                if let Some(taken) = taken.get_mut(group).filter(|n| **n < top_k) {
                    *taken += 1;
                    let adjustment = if grounded { SOURCE_GROUNDED } else { 0.0 };
                    let final_score = lexical + adjustment;
                    rows.push(Row { slot, matched: false, raw: self.base, lexical, adjustment, final_score });
                }
                // With rerank, rows with refs (group 1) outrank all others; without, all are group 0.
                let best_group = usize::from(rerank);
                if taken.get(best_group).is_some_and(|n| *n >= top_k) || visited >= unmatched {
                    break 'files;
                }
            }
        }
        rows
    }

    /// A bound on every row's adjustment (after [`Self::count_long_terms`]): the rules
    /// are monotone in each count, and no row holds more long terms than some row holds.
    fn adjustment_ceiling(&self, rerank: bool, dates: &[&str]) -> f64 {
        let most = RuleHits {
            exact_terms: self.long_in_content,
            path_heading_terms: self.long_in_path_heading,
            date: !dates.is_empty(),
            grounded: true,
        };
        if rerank { most.adjustment() } else { 0.0 }
    }

    /// The rule adjustment of matched candidate `m` (after [`Self::count_long_terms`]):
    /// looked up by its counts when the query has no date, which is all the rules need then.
    fn adjustment(&self, m: usize, slot: u32, dates: &[&str]) -> f64 {
        if dates.is_empty() {
            let count = |counts: &[u8]| counts.get(m).map_or(0, |n| usize::from(*n));
            let side = self.long_count + 1;
            let at = (count(&self.scratch.exact_terms) * side + count(&self.scratch.path_heading_terms)) * 2
                + usize::from(self.index.is_grounded(slot));
            if let Some(&adjustment) = self.adjustments.get(at) {
                return adjustment;
            }
        }
        self.rule_hits(m, slot, dates).adjustment()
    }

    /// The rules matched candidate `m` meets (after [`Self::count_long_terms`]).
    fn rule_hits(&self, m: usize, slot: u32, dates: &[&str]) -> RuleHits {
        // Only a query with a date needs the event itself; everything else is in arrays.
        let date = !dates.is_empty()
            && self.index.slot(slot).and_then(|entry| entry.event.date()).is_some_and(|d| dates.contains(&d));
        RuleHits {
            exact_terms: self.scratch.exact_terms.get(m).map_or(0, |n| usize::from(*n)),
            path_heading_terms: self.scratch.path_heading_terms.get(m).map_or(0, |n| usize::from(*n)),
            date,
            grounded: self.index.is_grounded(slot),
        }
    }

    /// The result row of `row`; a record changed on disk since the index was refreshed
    /// is an error, never another text.
    fn hit(&self, row: &Row, long: &[(usize, &str)], dates: &[&str], rerank: bool) -> Result<Option<Hit>, Error> {
        let Some(slot) = self.index.slot(row.slot) else { return Ok(None) };
        let event = slot.try_to_event()?;
        let rule_features = if !rerank {
            Vec::new()
        } else if row.matched {
            let with = |test: fn(Occurrence) -> bool| -> Vec<&str> {
                long.iter()
                    .filter(|(term, _)| {
                        self.terms.get(*term).is_some_and(|t| test(t.occurrence(&self.scratch, row.slot)))
                    })
                    .map(|(_, text)| *text)
                    .collect()
            };
            let date = event.date.as_deref().filter(|date| dates.contains(date));
            rule_features(
                &with(Occurrence::in_content),
                &with(Occurrence::in_path_heading),
                date,
                !event.refs.is_empty(),
            )
        } else {
            rule_features(&[], &[], None, !event.refs.is_empty())
        };
        Ok(Some(Hit {
            event,
            score: Score::Bm25(Bm25Score {
                final_score: row.final_score,
                bm25_score: round6(row.raw),
                lexical_score: round6(row.lexical),
                rule_adjustment: round6(row.adjustment),
                rule_features,
            }),
        }))
    }
}

mod bounded;
mod candidate_postings;
mod estimate_pass;
mod explain;
mod read;
mod scratch;
mod select;
#[cfg(test)]
mod tests;
mod windows;
