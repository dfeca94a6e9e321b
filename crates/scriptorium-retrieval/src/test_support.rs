//! Test helpers: synthetic events, and a brute-force BM25+ search written the way the
//! reference computes it (re-tokenize every candidate, score every candidate, sort all),
//! which the inverted index must reproduce exactly.

use crate::bm25::{Bm25Weight, idf};
use crate::event::{FileKind, MemoryEvent, Trust};
use crate::filter::{Selection, event_speakers};
use crate::index::for_each_field_token;
use crate::round::round6;
use crate::rules::{MIN_RULE_TOKEN_CHARS, RuleHits, SOURCE_GROUNDED, query_dates, rule_features};
use crate::search::{Bm25Options, INDEX_TOP_K_MAX};
use crate::tokenize::tokenize;

/// An event at `path`: a topic event for `topics/…`, else a trusted source event.
pub(crate) fn event(path: &str, line: usize, id: &str, content: &str, refs: &[&str]) -> MemoryEvent {
    let mut event = crate::event::topic_event(id.to_owned(), path, line, Vec::new());
    event.content = content.to_owned();
    event.refs = refs.iter().map(|r| (*r).to_owned()).collect();
    if FileKind::of(path) != Some(FileKind::Topic) {
        event.trust_state = Trust::Trusted;
    }
    event
}

/// A row of the brute-force search: id, final score, raw score rounded, features.
pub(crate) type NaiveRow = (String, f64, f64, Vec<String>);

/// The reference algorithm over `events` (the live, resolved events of an index).
pub(crate) fn naive_search(events: &[MemoryEvent], query: &str, options: &Bm25Options) -> Vec<NaiveRow> {
    let selection = Selection::new(&options.filters).expect("valid filters");
    let query_tokens = tokenize(query);
    let candidates: Vec<&MemoryEvent> = events
        .iter()
        .filter(|e| {
            selection.matches_path(&e.path) && selection.matches_event(&e.dates, e.is_source(), &event_speakers(e))
        })
        .collect();
    if query_tokens.is_empty() || candidates.is_empty() {
        return Vec::new();
    }
    let docs: Vec<Vec<(String, u32)>> = candidates
        .iter()
        .map(|e| {
            let mut tokens = Vec::new();
            for_each_field_token(e, |t, flag| tokens.push((t.to_owned(), flag)));
            tokens
        })
        .collect();
    let n = docs.len() as u64;
    let total: u64 = docs.iter().map(|d| d.len() as u64).sum();
    let average = total as f64 / n as f64;
    let df = |term: &str| docs.iter().filter(|d| d.iter().any(|(t, _)| t == term)).count() as u64;
    let raws: Vec<f64> = docs
        .iter()
        .map(|doc| {
            let mut raw = 0.0;
            for term in &query_tokens {
                let freq = df(term);
                if freq == 0 {
                    continue;
                }
                let tf = doc.iter().filter(|(t, _)| t == term).count() as u32;
                raw += Bm25Weight::new(idf(n, freq), average).score(tf, doc.len() as u32);
            }
            raw
        })
        .collect();
    let max = raws.iter().copied().filter(|r| *r > 0.0).fold(0.0, f64::max);
    let mut long: Vec<&str> =
        query_tokens.iter().map(String::as_str).filter(|t| t.chars().count() >= MIN_RULE_TOKEN_CHARS).collect();
    long.sort_unstable();
    long.dedup();
    let dates = query_dates(query);
    let mut rows: Vec<(&MemoryEvent, NaiveRow)> = Vec::new();
    for (event, raw) in candidates.iter().zip(&raws) {
        let lexical = if max > 0.0 { raw / max } else { 0.0 };
        let content: Vec<&str> =
            long.iter().copied().filter(|t| tokenize(&event.content).iter().any(|c| c == t)).collect();
        let path_text =
            format!("{} {}", event.path.strip_prefix("topics/").unwrap_or(&event.path), event.headings.join(" "));
        let path_tokens = tokenize(&path_text);
        let path_heading: Vec<&str> = long.iter().copied().filter(|t| path_tokens.iter().any(|p| p == t)).collect();
        let date = event.date.as_deref().filter(|d| dates.contains(d));
        let grounded = !event.refs.is_empty();
        let (adjustment, features) = if options.rerank {
            let hits = RuleHits {
                exact_terms: content.len(),
                path_heading_terms: path_heading.len(),
                date: date.is_some(),
                grounded,
            };
            (hits.adjustment(), rule_features(&content, &path_heading, date, grounded))
        } else {
            (0.0, Vec::new())
        };
        if lexical <= 0.0 && adjustment <= SOURCE_GROUNDED {
            continue;
        }
        rows.push((event, (event.event_id.clone(), round6(lexical + adjustment), round6(*raw), features)));
    }
    rows.sort_by(|(a, ra), (b, rb)| {
        rb.1.total_cmp(&ra.1).then_with(|| (&a.path, a.line, &a.event_id).cmp(&(&b.path, b.line, &b.event_id)))
    });
    rows.truncate(options.top_k.clamp(1, INDEX_TOP_K_MAX));
    rows.into_iter().map(|(_, row)| row).collect()
}
