//! The search API: argument errors and their contract codes, clamps, and the embedding
//! and hybrid paths with a small deterministic embedder defined here.

use std::cell::Cell;

use super::*;
use crate::embed::EmbedError;
use crate::event::MemoryEvent;
use crate::index::FileChange;
use crate::test_support::event;

/// Letter counts of the casefolded text: deterministic, and similar texts score higher.
struct Letters {
    calls: Cell<usize>,
}

impl Letters {
    fn new() -> Self {
        Letters { calls: Cell::new(0) }
    }
}

impl Embedder for Letters {
    fn model_id(&self) -> &str {
        "letters-v1"
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.calls.set(self.calls.get() + texts.len());
        Ok(texts
            .iter()
            .map(|text| {
                let mut counts = vec![0f32; 26];
                for byte in text.to_ascii_lowercase().bytes().filter(u8::is_ascii_lowercase) {
                    if let Some(slot) = counts.get_mut(usize::from(byte - b'a')) {
                        *slot += 1.0;
                    }
                }
                counts
            })
            .collect())
    }
}

struct Broken;

impl Embedder for Broken {
    fn model_id(&self) -> &str {
        "broken"
    }

    fn embed(&self, _texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Err(EmbedError::new("model files missing"))
    }
}

fn world() -> Index {
    let events = |path: &str, rows: &[(&str, &str)]| -> Vec<MemoryEvent> {
        (1..).zip(rows).map(|(line, (id, text))| event(path, line, id, text, &["p/t/x"])).collect()
    };
    let mut index = Index::new();
    index.apply([
        FileChange::Upsert {
            path: "topics/garden.md".into(),
            events: events(
                "topics/garden.md",
                &[("g1:1", "garden sensor battery"), ("g2:1", "tomatoes in the garden")],
            ),
        },
        FileChange::Upsert {
            path: "topics/travel.md".into(),
            events: events(
                "topics/travel.md",
                &[("t1:1", "trip to Kyoto"), ("t2:1", "Berlin marathon"), ("t3:1", "zzz")],
            ),
        },
    ]);
    index
}

fn request(query: &str, method: Method) -> SearchRequest {
    SearchRequest { method, ..SearchRequest::new(query) }
}

fn code(result: Result<SearchResponse, Error>) -> (ErrorCode, Option<&'static str>) {
    let error = result.expect_err("an error");
    (error.code(), error.code().contract_code())
}

#[test]
fn argument_errors_map_to_invalid_argument() {
    let index = world();
    assert_eq!(
        code(search(&index, &SearchRequest::new(" \t"), None)),
        (ErrorCode::BlankQuery, Some("INVALID_ARGUMENT"))
    );
    assert_eq!(Method::parse("agent").expect_err("unknown").code(), ErrorCode::UnknownMethod);
    assert_eq!(Method::parse("hybrid").expect("known"), Method::Hybrid);
    let with_speaker = |method| SearchRequest {
        filters: Filters { speaker: Some("Dave".into()), ..Filters::default() },
        ..request("garden", method)
    };
    for method in [Method::Embedding, Method::Hybrid] {
        let letters = Letters::new();
        assert_eq!(
            code(search(&index, &with_speaker(method), Some(&letters))),
            (ErrorCode::SpeakerWithEmbedding, Some("INVALID_ARGUMENT"))
        );
    }
    let bad_window = SearchRequest {
        filters: Filters { date_from: Some("2024-02-30".into()), ..Filters::default() },
        ..SearchRequest::new("garden")
    };
    assert_eq!(code(search(&index, &bad_window, None)).0, ErrorCode::InvalidDate);
}

#[test]
fn embedding_methods_never_fall_back_to_bm25() {
    let index = world();
    for method in [Method::Embedding, Method::Hybrid] {
        assert_eq!(
            code(search(&index, &request("garden", method), None)),
            (ErrorCode::EmbeddingUnavailable, Some("EMBEDDING_UNAVAILABLE"))
        );
        assert_eq!(code(search(&index, &request("garden", method), Some(&Broken))).0, ErrorCode::EmbeddingUnavailable);
    }
    // BM25 needs no embedder, and ignores one.
    let response = search(&index, &request("garden", Method::Bm25), Some(&Broken)).expect("bm25 works");
    assert_eq!(response.method, Method::Bm25);
    assert!(!response.results.is_empty());
}

#[test]
fn embedding_ranks_by_similarity_and_caches_document_vectors() {
    let mut index = world();
    let letters = Letters::new();
    let response = search(&index, &request("garden tomatoes", Method::Embedding), Some(&letters)).expect("search");
    let scores: Vec<f64> = response.results.iter().map(|hit| hit.score.value()).collect();
    assert!(scores.windows(2).all(|pair| pair.first() >= pair.get(1)), "{scores:?}");
    assert_eq!(response.results.first().map(|h| h.event.event_id.as_str()), Some("g2:1"));
    assert!(matches!(response.results.first().map(|h| &h.score), Some(Score::Similarity(s)) if *s > 0.9));
    // 5 documents + 1 query; the next search embeds only its query.
    assert_eq!(letters.calls.get(), 6);
    search(&index, &request("kyoto", Method::Embedding), Some(&letters)).expect("search");
    assert_eq!(letters.calls.get(), 7);
    // A change drops the cached vectors.
    index.apply([FileChange::Remove { path: "topics/travel.md".into() }]);
    let after = search(&index, &request("kyoto", Method::Embedding), Some(&letters)).expect("search");
    assert_eq!(letters.calls.get(), 10);
    assert_eq!(after.results.len(), 2);
}

#[test]
fn hybrid_fuses_reciprocal_ranks_of_both_lists() {
    let index = world();
    let letters = Letters::new();
    let query = "garden battery";
    let bm25: Vec<String> = search(&index, &SearchRequest { top_k: 10, ..request(query, Method::Bm25) }, None)
        .expect("bm25")
        .results
        .into_iter()
        .map(|h| h.event.event_id)
        .collect();
    let embedded: Vec<String> =
        search(&index, &SearchRequest { top_k: 10, ..request(query, Method::Embedding) }, Some(&letters))
            .expect("embedding")
            .results
            .into_iter()
            .map(|h| h.event.event_id)
            .collect();
    let hybrid =
        search(&index, &SearchRequest { top_k: 10, ..request(query, Method::Hybrid) }, Some(&letters)).expect("hybrid");
    assert_eq!(hybrid.method, Method::Hybrid);
    let rank = |list: &[String], id: &str| list.iter().position(|x| x == id).map(|at| at + 1);
    let mut last = f64::INFINITY;
    for hit in &hybrid.results {
        let id = hit.event.event_id.as_str();
        let expected: f64 =
            [rank(&bm25, id), rank(&embedded, id)].into_iter().flatten().map(|r| 1.0 / (60.0 + r as f64)).sum();
        let Score::Fused(fused) = hit.score else { panic!("a fused score") };
        assert!((fused - expected).abs() < 1e-6, "{id}: {fused} vs {expected}");
        assert!(fused <= last);
        last = fused;
    }
    assert_eq!(hybrid.results.first().map(|h| h.event.event_id.as_str()), Some("g1:1"));
    assert_eq!(hybrid.results.len(), 5);
}

#[test]
fn api_clamps_top_k_and_cuts_content() {
    let long = "word ".repeat(400);
    let events: Vec<MemoryEvent> =
        (1..=20).map(|n| event("topics/many.md", n, &format!("e{n:02}:1"), &long, &["r"])).collect();
    let mut index = Index::new();
    index.apply([FileChange::Upsert { path: "topics/many.md".into(), events }]);
    let response = search(&index, &SearchRequest { top_k: 99, ..SearchRequest::new("word") }, None).expect("search");
    assert_eq!(response.results.len(), API_TOP_K_MAX);
    assert!(response.results.iter().all(|hit| hit.event.content.chars().count() == CONTENT_MAX_CHARS));
    let one = search(&index, &SearchRequest { top_k: 0, ..SearchRequest::new("word") }, None).expect("search");
    assert_eq!(one.results.len(), 1);
}
