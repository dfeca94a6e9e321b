//! The BM25+ formula, kept apart from the index (tantivy `bm25.rs`): named constants,
//! a statistics trait the index implements for each candidate set, a per-term weight,
//! and an [`Explanation`] of any score.
//!
//! Parity (05-dependencies §A3): the reference scores with rank_bm25 0.2.2 `BM25Plus`
//! in numpy float64, so every operation below happens in `f64` in numpy's order:
//! `idf · (δ + tf·(k1+1) / (k1·((1−b) + b·dl/avgdl) + tf))`, summed over the query
//! tokens in query order, duplicates included, starting from `0.0`.

/// Term-frequency saturation `k1`.
pub const K1: f64 = 1.5;
/// Length normalisation `b`.
pub const B: f64 = 0.75;
/// The BM25+ lower bound `δ`: added for every query term present in the candidate set,
/// even to documents without the term.
pub const DELTA: f64 = 1.0;

/// Corpus statistics a score needs. The index implements it over the candidates of one
/// query (spec 02 §6.3: N, df and the average length count the filtered candidates).
pub trait Bm25Statistics {
    /// N: the number of documents.
    fn total_num_docs(&self) -> u64;
    /// The sum of all document lengths, in tokens.
    fn total_num_tokens(&self) -> u64;
    /// df: how many documents contain `term`.
    fn doc_freq(&self, term: &str) -> u64;
}

/// `ln((N + 1) / df)`, rank_bm25's BM25Plus idf (always positive for `1 ≤ df ≤ N`).
pub fn idf(total_num_docs: u64, doc_freq: u64) -> f64 {
    ((total_num_docs + 1) as f64 / doc_freq as f64).ln()
}

/// The scoring constants of one query term over one candidate set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bm25Weight {
    idf: f64,
    average_len: f64,
}

impl Bm25Weight {
    /// The weight of `term`, or `None` when no document contains it: such a term adds
    /// exactly nothing (rank_bm25 multiplies by a missing idf of 0).
    pub fn for_term(stats: &impl Bm25Statistics, term: &str) -> Option<Self> {
        let docs = stats.total_num_docs();
        let df = stats.doc_freq(term);
        (docs > 0 && df > 0).then(|| Bm25Weight::new(idf(docs, df), average_len(stats)))
    }

    /// A weight from an idf and the average document length.
    pub fn new(idf: f64, average_len: f64) -> Self {
        Bm25Weight { idf, average_len }
    }

    /// The idf of the term.
    pub fn idf(&self) -> f64 {
        self.idf
    }

    /// This term's contribution to a document of `doc_len` tokens holding it `tf` times.
    pub fn score(&self, tf: u32, doc_len: u32) -> f64 {
        self.score_with_norm(tf, length_norm(doc_len, self.average_len))
    }

    /// [`Self::score`] given the document's [`length_norm`], which is the same for every
    /// term of one document (computing it once per document gives the same floats).
    pub fn score_with_norm(&self, tf: u32, norm: f64) -> f64 {
        self.idf * (DELTA + saturation(tf, norm))
    }

    /// The average document length this weight was made with.
    pub fn average_len(&self) -> f64 {
        self.average_len
    }

    /// The contribution to a document without the term: `idf·δ`, computed as numpy
    /// computes it for tf = 0 (`idf·(δ + 0/…)`), which is the same float.
    pub fn absent_score(&self) -> f64 {
        self.idf * (DELTA + 0.0)
    }

    /// [`Self::score`] with its parts.
    pub fn explain(&self, term: &str, tf: u32, doc_len: u32) -> Explanation {
        let mut explanation = Explanation::new(
            format!("term `{term}`: idf·(δ + tf·(k1+1) / (k1·(1−b+b·dl/avgdl) + tf))"),
            self.score(tf, doc_len),
        );
        explanation.add_detail(Explanation::new("idf = ln((N+1)/df)", self.idf));
        explanation.add_detail(Explanation::new("tf, occurrences in the document", f64::from(tf)));
        explanation.add_detail(Explanation::new("dl, document length in tokens", f64::from(doc_len)));
        explanation.add_detail(Explanation::new("avgdl, average candidate length", self.average_len));
        explanation
    }
}

/// The length part of the denominator, `k1·(1−b+b·dl/avgdl)`, in numpy's order:
/// `k1 · ((1 − b) + (b·dl)/avgdl)`.
pub fn length_norm(doc_len: u32, average_len: f64) -> f64 {
    K1 * (1.0 - B + B * f64::from(doc_len) / average_len)
}

/// The tf part of a term's score, `tf·(k1+1) / (norm + tf)`, given the document's
/// [`length_norm`]: the one expression both the exact score and a query's estimate use,
/// so they share its float.
pub(crate) fn saturation(tf: u32, norm: f64) -> f64 {
    let tf = f64::from(tf);
    (tf * (K1 + 1.0)) / (norm + tf)
}

/// The average document length as rank_bm25 computes it: an integer sum divided by N.
pub fn average_len(stats: &impl Bm25Statistics) -> f64 {
    stats.total_num_tokens() as f64 / stats.total_num_docs() as f64
}

/// Why a score has its value: a description, the value, and the parts it is made of.
#[derive(Clone, Debug, PartialEq)]
pub struct Explanation {
    description: String,
    value: f64,
    details: Vec<Explanation>,
}

impl Explanation {
    /// A leaf with a description and a value.
    pub fn new(description: impl Into<String>, value: f64) -> Self {
        Explanation { description: description.into(), value, details: Vec::new() }
    }

    /// Add a part.
    pub fn add_detail(&mut self, detail: Explanation) {
        self.details.push(detail);
    }

    /// What this value is.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The value.
    pub fn value(&self) -> f64 {
        self.value
    }

    /// The parts, in order.
    pub fn details(&self) -> &[Explanation] {
        &self.details
    }
}

impl std::fmt::Display for Explanation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fn write(e: &Explanation, depth: usize, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            writeln!(f, "{:indent$}{} = {}", "", e.description, e.value, indent = depth * 2)?;
            e.details.iter().try_for_each(|d| write(d, depth + 1, f))
        }
        write(self, 0, f)
    }
}

/// The statistics of one term, already counted: every term has the same `df`.
pub(crate) struct TermStats {
    pub(crate) docs: u64,
    pub(crate) tokens: u64,
    pub(crate) df: u64,
}

impl Bm25Statistics for TermStats {
    fn total_num_docs(&self) -> u64 {
        self.docs
    }

    fn total_num_tokens(&self) -> u64 {
        self.tokens
    }

    fn doc_freq(&self, _term: &str) -> u64 {
        self.df
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_term_has_no_weight() {
        assert_eq!(Bm25Weight::for_term(&TermStats { docs: 3, tokens: 30, df: 0 }, "x"), None);
    }

    #[test]
    fn score_follows_bm25_plus() {
        let weight = Bm25Weight::for_term(&TermStats { docs: 4, tokens: 40, df: 2 }, "x").expect("present");
        assert_eq!(weight.idf(), (5.0f64 / 2.0).ln());
        // tf = 0 still earns idf·δ.
        assert_eq!(weight.score(0, 10), weight.idf() * DELTA);
        // dl = avgdl: norm = k1, so tf=2 gives idf·(1 + 5/3.5).
        let expected = weight.idf() * (1.0 + 5.0 / 3.5);
        assert!((weight.score(2, 10) - expected).abs() < 1e-12);
        assert!(weight.score(2, 10) > weight.score(1, 10));
        assert!(weight.score(1, 5) > weight.score(1, 20), "shorter documents score higher");
    }

    #[test]
    fn explanation_carries_the_parts() {
        let weight = Bm25Weight::new(1.0, 10.0);
        let explanation = weight.explain("berlin", 1, 10);
        assert_eq!(explanation.value(), weight.score(1, 10));
        assert_eq!(explanation.details().len(), 4);
        assert!(explanation.to_string().contains("term `berlin`"));
    }
}
