//! What a search returns: the event and how it scored.

use crate::event::MemoryEvent;

/// The scores of a BM25 hit (spec 02 §6.3), each rounded to 6 decimals as the reference
/// rounds them.
#[derive(Clone, Debug, PartialEq)]
pub struct Bm25Score {
    /// `lexical_score + rule_adjustment`, the ranking key.
    pub final_score: f64,
    /// The raw BM25+ score over the candidate set.
    pub bm25_score: f64,
    /// The raw score divided by the best raw score of the query.
    pub lexical_score: f64,
    /// The sum of the rule bonuses.
    pub rule_adjustment: f64,
    /// The rules that fired, for example `exact_terms=berlin`, `path_heading=cross,links`,
    /// `source_grounded`.
    pub rule_features: Vec<String>,
}

/// How a hit scored, by search method.
#[derive(Clone, Debug, PartialEq)]
pub enum Score {
    /// A BM25 hit.
    Bm25(Bm25Score),
    /// An embedding hit: cosine similarity with the query.
    Similarity(f64),
    /// A hybrid hit: the reciprocal-rank fusion score `Σ 1/(60 + rank)`.
    Fused(f64),
}

impl Score {
    /// The number the hits are ranked by (`final_score`, `similarity` or the fused score).
    pub fn value(&self) -> f64 {
        match self {
            Score::Bm25(score) => score.final_score,
            Score::Similarity(value) | Score::Fused(value) => *value,
        }
    }
}

/// One search result.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// The event, with its resolved trust state.
    pub event: MemoryEvent,
    /// Its score.
    pub score: Score,
}
