//! The parts of one event's raw BM25+ score, term by term (tantivy's `Explanation`),
//! for debugging a ranking.

use super::QueryRun;
use crate::bm25::Explanation;

impl QueryRun<'_> {
    /// How the raw score of the live candidate `event_id` is made, or `None` when it is
    /// not a candidate.
    pub(super) fn explain(&self, event_id: &str) -> Option<Explanation> {
        let (slot, _) = self
            .index
            .files()
            .values()
            .flat_map(|file| self.index.live_slots(*file))
            .find(|(slot, entry)| entry.event.event_id() == event_id && self.candidates.set.contains(*slot))?;
        let doc_len = self.index.length(slot);
        let mut total = 0.0;
        let mut parts = Vec::new();
        for &term in &self.positions {
            let Some(query_term) = self.terms.get(term) else { continue };
            // From the posting list: a query lists the holders of its long terms only.
            let mut tf = 0;
            let one = slot..slot.saturating_add(1);
            let list = self.index.posting_list(&query_term.text);
            list.for_each_within(std::slice::from_ref(&one), |posting| tf = posting.occurrence().tf());
            match query_term.weight {
                Some(weight) => {
                    total += weight.score(tf, doc_len);
                    parts.push(weight.explain(&query_term.text, tf, doc_len));
                }
                None => {
                    parts.push(Explanation::new(format!("term `{}`: in no candidate, adds 0", query_term.text), 0.0))
                }
            }
        }
        let mut explanation = Explanation::new(
            format!("BM25+ of `{event_id}` over {} candidates (k1=1.5, b=0.75, δ=1)", self.candidates.docs),
            total,
        );
        parts.into_iter().for_each(|part| explanation.add_detail(part));
        Some(explanation)
    }
}
