//! BM25 search over the index (spec 02 §6.3): BM25+ over the filtered candidates only,
//! max-normalisation, rule adjustments, rounding, ranking.
//!
//! Why it is fast: a query reads only the posting lists of its own tokens. With δ > 0
//! every candidate scores, but a candidate holding none of the query tokens scores
//! exactly `Σ idf·δ` — the same float for all of them — and earns no rule except
//! `source_grounded` (every other rule needs a query token in its text). So only the
//! matched candidates are scored one by one; of the others, only the first `top_k` in
//! (path, line, id) order with and without refs can reach the result, and the files are
//! walked in that order.

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::bm25::{Bm25Statistics, Bm25Weight, Explanation, length_norm};
use crate::error::Error;
use crate::filter::{Filters, Selection};
use crate::hit::{Bm25Score, Hit, Score};
use crate::index::{Candidates, Index, Posting};
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
        let Some(run) = QueryRun::new(self, query, &selection) else { return Ok(Vec::new()) };
        Ok(run.top(top_k, options.rerank))
    }

    /// How the raw BM25+ score of `event_id` for `query` is made, or `None` when the
    /// event is not a candidate of these filters.
    pub fn explain(&self, query: &str, filters: &Filters, event_id: &str) -> Result<Option<Explanation>, Error> {
        let selection = Selection::new(filters)?;
        let Some(run) = QueryRun::new(self, query, &selection) else { return Ok(None) };
        Ok(run.explain(event_id))
    }
}

/// One distinct query token.
struct QueryTerm {
    text: String,
    /// `None` when no candidate holds the term: it adds nothing.
    weight: Option<Bm25Weight>,
}

/// Statistics of the candidate set, with the document frequencies of the query terms.
struct CandidateStats<'q> {
    docs: u64,
    tokens: u64,
    doc_freqs: HashMap<&'q str, u64>,
}

impl Bm25Statistics for CandidateStats<'_> {
    fn total_num_docs(&self) -> u64 {
        self.docs
    }

    fn total_num_tokens(&self) -> u64 {
        self.tokens
    }

    fn doc_freq(&self, term: &str) -> u64 {
        self.doc_freqs.get(term).copied().unwrap_or(0)
    }
}

/// A candidate that may reach the result, before its hit is built.
#[derive(Clone, Copy, Debug)]
struct Row {
    slot: u32,
    /// Index into `QueryRun::matched`, or `None` for a candidate holding no query term.
    matched: Option<usize>,
    raw: f64,
    lexical: f64,
    adjustment: f64,
    /// `lexical + adjustment`, rounded only once the row is among the finalists.
    final_score: f64,
}

/// Per-slot marker in `QueryRun::seen` for a slot no query term reached.
const UNSEEN: u32 = u32::MAX;

/// The state of one query over one candidate set.
struct QueryRun<'i> {
    index: &'i Index,
    query: &'i str,
    candidates: Candidates<'i>,
    /// Per query token (duplicates kept, query order): its index in `terms`.
    positions: Vec<usize>,
    terms: Vec<QueryTerm>,
    /// Candidates holding at least one query term, in discovery order.
    matched: Vec<u32>,
    /// Per slot: its index in `matched`, or [`UNSEEN`].
    seen: Vec<u32>,
    /// `matched.len() × terms.len()` postings (tf 0 and no flags where absent).
    table: Vec<Posting>,
    /// The raw score of each matched candidate.
    raws: Vec<f64>,
    /// The raw score of a candidate holding no query term.
    base: f64,
    /// The largest raw score of any candidate (0 when no term occurs).
    max_raw: f64,
}

impl<'i> QueryRun<'i> {
    fn new(index: &'i Index, query: &'i str, selection: &Selection) -> Option<Self> {
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

        // One pass over each term's postings: collect the matched candidates and their
        // postings, and count document frequencies over the candidates only.
        let width = texts.len();
        let mut seen = vec![UNSEEN; index.slot_count()];
        let mut matched: Vec<u32> = Vec::new();
        let mut table: Vec<Posting> = Vec::new();
        let mut doc_freqs: HashMap<&str, u64> = HashMap::with_capacity(width);
        for (term, text) in texts.iter().enumerate() {
            let mut df = 0u64;
            for posting in index.postings(text) {
                if !candidates.set.contains(posting.slot) {
                    continue;
                }
                let Some(entry) = seen.get_mut(posting.slot as usize) else { continue };
                df += 1;
                if *entry == UNSEEN {
                    *entry = u32::try_from(matched.len()).unwrap_or(UNSEEN);
                    matched.push(posting.slot);
                    table.extend(std::iter::repeat_n(Posting::ABSENT, width));
                }
                if let Some(cell) = table.get_mut(*entry as usize * width + term) {
                    *cell = *posting;
                }
            }
            doc_freqs.insert(text.as_str(), df);
        }
        let stats = CandidateStats { docs: candidates.docs, tokens: candidates.tokens, doc_freqs };
        let weights: Vec<Option<Bm25Weight>> = texts.iter().map(|text| Bm25Weight::for_term(&stats, text)).collect();
        let terms: Vec<QueryTerm> =
            texts.into_iter().zip(weights).map(|(text, weight)| QueryTerm { text, weight }).collect();
        let mut run = QueryRun {
            index,
            query,
            candidates,
            positions,
            terms,
            matched,
            seen,
            table,
            raws: Vec::new(),
            base: 0.0,
            max_raw: 0.0,
        };
        run.score();
        Some(run)
    }

    /// The postings of matched candidate `m`, one per term.
    fn row(&self, m: usize) -> &[Posting] {
        let width = self.terms.len();
        self.table.get(m * width..(m + 1) * width).unwrap_or_default()
    }

    /// Raw scores in numpy's order: per query token, duplicates included, from `0.0`.
    fn score(&mut self) {
        let weights: Vec<Option<Bm25Weight>> = self.positions.iter().map(|&term| self.weight(term)).collect();
        let average_len = self.terms.iter().find_map(|term| term.weight).map_or(1.0, |w| w.average_len());
        let mut raws = Vec::with_capacity(self.matched.len());
        for (m, &slot) in self.matched.iter().enumerate() {
            let norm = length_norm(self.index.length(slot), average_len);
            let row = self.row(m);
            let mut raw = 0.0;
            for (&term, weight) in self.positions.iter().zip(&weights) {
                if let (Some(weight), Some(posting)) = (weight, row.get(term)) {
                    raw += weight.score_with_norm(posting.tf(), norm);
                }
            }
            raws.push(raw);
        }
        let mut base = 0.0;
        for weight in weights.iter().flatten() {
            base += weight.absent_score();
        }
        let mut max_raw = raws.iter().copied().fold(0.0, f64::max);
        if self.candidates.docs > self.matched.len() as u64 {
            max_raw = max_raw.max(base);
        }
        self.raws = raws;
        self.base = base;
        self.max_raw = max_raw;
    }

    fn weight(&self, term: usize) -> Option<Bm25Weight> {
        self.terms.get(term).and_then(|t| t.weight)
    }

    fn lexical(&self, raw: f64) -> f64 {
        if self.max_raw > 0.0 { raw / self.max_raw } else { 0.0 }
    }

    /// The long query terms (≥ 3 characters), sorted, with their term index.
    fn long_terms(&self) -> Vec<(usize, &str)> {
        let mut long: Vec<(usize, &str)> = (self.terms.iter().enumerate())
            .filter(|(_, term)| term.text.chars().count() >= MIN_RULE_TOKEN_CHARS)
            .map(|(at, term)| (at, term.text.as_str()))
            .collect();
        long.sort_by(|a, b| a.1.cmp(b.1));
        long
    }

    fn top(&self, top_k: usize, rerank: bool) -> Vec<Hit> {
        if self.max_raw <= 0.0 {
            // No query term occurs among the candidates: every lexical score is 0 and
            // the only rule a candidate can meet then is `source_grounded` (0.02), which
            // does not keep an event.
            return Vec::new();
        }
        let long = self.long_terms();
        let dates = query_dates(self.query);
        let mut rows: Vec<Row> = Vec::with_capacity(self.matched.len() + 2 * top_k);
        for (m, (&slot, &raw)) in self.matched.iter().zip(&self.raws).enumerate() {
            let lexical = self.lexical(raw);
            let adjustment = if rerank { self.rule_hits(m, slot, &long, &dates).adjustment() } else { 0.0 };
            if lexical <= 0.0 && adjustment <= SOURCE_GROUNDED {
                continue;
            }
            rows.push(Row { slot, matched: Some(m), raw, lexical, adjustment, final_score: lexical + adjustment });
        }
        self.push_unmatched(&mut rows, top_k, rerank);
        let mut finalists = finalists(rows, top_k);
        for row in &mut finalists {
            row.final_score = round6(row.final_score);
        }
        let order = |a: &Row, b: &Row| self.order(a, b);
        finalists.sort_by(order);
        finalists.truncate(top_k);
        finalists.iter().filter_map(|row| self.hit(row, &long, &dates, rerank)).collect()
    }

    /// Add the first `top_k` candidates holding no query term, with refs and without,
    /// in (path, line, id) order: no other such candidate can rank above them.
    fn push_unmatched(&self, rows: &mut Vec<Row>, top_k: usize, rerank: bool) {
        let lexical = self.lexical(self.base);
        if lexical <= 0.0 || self.candidates.docs <= self.matched.len() as u64 {
            return;
        }
        let mut taken = [0usize; 2];
        'files: for file in self.index.files().values() {
            for slot in file.range() {
                if self.seen.get(slot as usize) != Some(&UNSEEN) || !self.candidates.set.contains(slot) {
                    continue;
                }
                let grounded = rerank && self.index.is_grounded(slot);
                let group = usize::from(grounded);
                if let Some(taken) = taken.get_mut(group).filter(|n| **n < top_k) {
                    *taken += 1;
                    let adjustment = if grounded { SOURCE_GROUNDED } else { 0.0 };
                    let final_score = lexical + adjustment;
                    rows.push(Row { slot, matched: None, raw: self.base, lexical, adjustment, final_score });
                }
                if taken.iter().all(|n| *n >= top_k) {
                    break 'files;
                }
            }
        }
    }

    fn rule_hits(&self, m: usize, slot: u32, long: &[(usize, &str)], dates: &[&str]) -> RuleHits {
        let row = self.row(m);
        let flag = |term: usize, test: fn(Posting) -> bool| row.get(term).is_some_and(|p| test(*p));
        // Only a query with a date needs the event itself; everything else is in bits.
        let date = !dates.is_empty()
            && self.index.slot(slot).and_then(|entry| entry.event.date.as_deref()).is_some_and(|d| dates.contains(&d));
        RuleHits {
            exact_terms: long.iter().filter(|(term, _)| flag(*term, Posting::in_content)).count(),
            path_heading_terms: long.iter().filter(|(term, _)| flag(*term, Posting::in_path_heading)).count(),
            date,
            grounded: self.index.is_grounded(slot),
        }
    }

    fn order(&self, a: &Row, b: &Row) -> Ordering {
        let key = |row: &Row| {
            self.index.slot(row.slot).map(|entry| (&entry.event.path, entry.event.line, &entry.event.event_id))
        };
        b.final_score.total_cmp(&a.final_score).then_with(|| key(a).cmp(&key(b)))
    }

    fn hit(&self, row: &Row, long: &[(usize, &str)], dates: &[&str], rerank: bool) -> Option<Hit> {
        let event = &self.index.slot(row.slot)?.event;
        let rule_features = if !rerank {
            Vec::new()
        } else if let Some(m) = row.matched {
            let cells = self.row(m);
            let with = |test: fn(Posting) -> bool| -> Vec<&str> {
                long.iter().filter(|(term, _)| cells.get(*term).is_some_and(|p| test(*p))).map(|(_, t)| *t).collect()
            };
            let date = event.date.as_deref().filter(|date| dates.contains(date));
            rule_features(&with(Posting::in_content), &with(Posting::in_path_heading), date, !event.refs.is_empty())
        } else {
            rule_features(&[], &[], None, !event.refs.is_empty())
        };
        Some(Hit {
            event: event.clone(),
            score: Score::Bm25(Bm25Score {
                final_score: row.final_score,
                bm25_score: round6(row.raw),
                lexical_score: round6(row.lexical),
                rule_adjustment: round6(row.adjustment),
                rule_features,
            }),
        })
    }
}

/// The rows that can still be among the best `top_k` once scores are rounded.
///
/// Rounding is monotone and moves a value by at most 5·10⁻⁷, so a row whose unrounded
/// score is more than 10⁻⁶ below the `top_k`-th best unrounded score rounds strictly
/// below at least `top_k` rows and can never rank among them. Only the survivors are
/// rounded and fully sorted, which keeps a query over many matches cheap.
fn finalists(mut rows: Vec<Row>, top_k: usize) -> Vec<Row> {
    if rows.len() <= top_k {
        return rows;
    }
    let mut scores: Vec<f64> = rows.iter().map(|row| row.final_score).collect();
    let (_, kth, _) = scores.select_nth_unstable_by(top_k - 1, |a, b| b.total_cmp(a));
    // 2·10⁻⁶ leaves room for the float error of the bound itself.
    let floor = *kth - 2e-6;
    rows.retain(|row| row.final_score >= floor);
    rows
}

mod explain;
#[cfg(test)]
mod tests;
