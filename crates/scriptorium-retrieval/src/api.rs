//! The search API (`inspect.search`, spec 02 §6.5): method choice, argument checks,
//! the API's own `top_k` clamp, content truncation.

use std::collections::HashMap;

use scriptorium_archive_format::text::is_space;

use crate::embed::{Embedder, embedding_ranking};
use crate::error::{Error, ErrorCode};
use crate::filter::Filters;
use crate::fusion::reciprocal_rank_fusion;
use crate::hit::{Hit, Score};
use crate::index::Index;
use crate::round::round6;
use crate::search::{Bm25Options, INDEX_TOP_K_MAX};

/// The most hits the search API returns (`top_k` is clamped to `1..=10`).
pub const API_TOP_K_MAX: usize = 10;
/// Result content is cut to this many characters.
pub const CONTENT_MAX_CHARS: usize = 1200;

/// How to rank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Method {
    /// BM25+ with rule adjustments (the default).
    #[default]
    Bm25,
    /// Cosine similarity of embeddings.
    Embedding,
    /// BM25 and embedding rankings fused by reciprocal rank.
    Hybrid,
}

impl Method {
    /// The method named `bm25`, `embedding` or `hybrid`.
    ///
    /// Errors: [`ErrorCode::UnknownMethod`] for any other name.
    pub fn parse(name: &str) -> Result<Self, Error> {
        match name {
            "bm25" => Ok(Method::Bm25),
            "embedding" => Ok(Method::Embedding),
            "hybrid" => Ok(Method::Hybrid),
            other => Err(Error::new(ErrorCode::UnknownMethod, format!("unsupported search method: {other}"))),
        }
    }

    /// The method's name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Method::Bm25 => "bm25",
            Method::Embedding => "embedding",
            Method::Hybrid => "hybrid",
        }
    }
}

/// One search request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchRequest {
    /// The query text; must not be blank.
    pub query: String,
    /// How to rank.
    pub method: Method,
    /// How many hits, clamped to `1..=10` (default 8).
    pub top_k: usize,
    /// The candidate filters.
    pub filters: Filters,
}

impl SearchRequest {
    /// A BM25 request for `query` with the defaults.
    pub fn new(query: impl Into<String>) -> Self {
        SearchRequest { query: query.into(), method: Method::Bm25, top_k: 8, filters: Filters::default() }
    }
}

/// What a search returns.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResponse {
    /// The method that ranked the hits.
    pub method: Method,
    /// The hits, best first.
    pub results: Vec<Hit>,
}

/// Run a search request against an index.
///
/// Errors, all `INVALID_ARGUMENT` by contract code unless noted: [`ErrorCode::BlankQuery`],
/// [`ErrorCode::SpeakerWithEmbedding`] (a speaker with `embedding` or `hybrid`, decision
/// "speaker filter with embedding or hybrid"), [`ErrorCode::InvalidDate`],
/// [`ErrorCode::EmptyDateWindow`], and [`ErrorCode::EmbeddingUnavailable`]
/// (`EMBEDDING_UNAVAILABLE`) for `embedding` or `hybrid` without a working embedder —
/// never a silent BM25 answer.
///
/// ```
/// use scriptorium_retrieval::{Index, SearchRequest, WorkspaceFile, search};
///
/// let source = "# D1\n\n<a id=\"d1-1\"></a>\n[2024-01-02] user: I adopted a cat named Miso. [D1:1]\n";
/// let index = Index::from_files([WorkspaceFile { path: "sources/D1.md".into(), bytes: source.into() }]);
/// let response = search(&index, &SearchRequest::new("Miso"), None)?;
/// assert_eq!(response.results.len(), 1);
/// # Ok::<(), scriptorium_retrieval::Error>(())
/// ```
pub fn search(
    index: &Index,
    request: &SearchRequest,
    embedder: Option<&dyn Embedder>,
) -> Result<SearchResponse, Error> {
    if request.query.trim_matches(is_space).is_empty() {
        return Err(Error::new(ErrorCode::BlankQuery, "query is required"));
    }
    let top_k = request.top_k.clamp(1, API_TOP_K_MAX);
    let needs_embedder = matches!(request.method, Method::Embedding | Method::Hybrid);
    if needs_embedder && request.filters.speaker.is_some() {
        return Err(Error::new(
            ErrorCode::SpeakerWithEmbedding,
            format!("speaker filter is only supported for bm25 search, not {}", request.method.as_str()),
        ));
    }
    let embedder = match (needs_embedder, embedder) {
        (true, None) => {
            return Err(Error::new(ErrorCode::EmbeddingUnavailable, "no embedding model is available"));
        }
        (_, embedder) => embedder,
    };
    let mut results = match (request.method, embedder) {
        (Method::Embedding, Some(embedder)) => embedding_hits(index, request, top_k, embedder)?,
        (Method::Hybrid, Some(embedder)) => hybrid_hits(index, request, top_k, embedder)?,
        _ => index.search(&request.query, &Bm25Options { top_k, rerank: true, filters: request.filters.clone() })?,
    };
    for hit in &mut results {
        if let Some((cut, _)) = hit.event.content.char_indices().nth(CONTENT_MAX_CHARS) {
            hit.event.content.truncate(cut);
        }
    }
    Ok(SearchResponse { method: request.method, results })
}

fn embedding_hits(
    index: &Index,
    request: &SearchRequest,
    top_k: usize,
    embedder: &dyn Embedder,
) -> Result<Vec<Hit>, Error> {
    let ranked = embedding_ranking(index, &request.query, &request.filters, top_k, embedder)?;
    // A result row's content may be read back from its file, which fails if the file
    // changed since the index read it: an error, never another text.
    (ranked.into_iter())
        .filter_map(|(slot, similarity)| Some((index.slot(slot)?, similarity)))
        .map(|(entry, similarity)| Ok(Hit { event: entry.try_to_event()?, score: Score::Similarity(similarity) }))
        .collect()
}

/// BM25 and embedding rankings (each up to the index's 50) fused by reciprocal rank,
/// then cut to `top_k`. The depth of each list is this project's choice: the spec names
/// the fusion but not how deep each list goes, and no vector covers hybrid search.
fn hybrid_hits(
    index: &Index,
    request: &SearchRequest,
    top_k: usize,
    embedder: &dyn Embedder,
) -> Result<Vec<Hit>, Error> {
    let bm25 = index.search(
        &request.query,
        &Bm25Options { top_k: INDEX_TOP_K_MAX, rerank: true, filters: request.filters.clone() },
    )?;
    let embedded = embedding_hits(index, request, INDEX_TOP_K_MAX, embedder)?;
    type Key = (String, usize, String);
    let key = |hit: &Hit| -> Key { (hit.event.path.clone(), hit.event.line, hit.event.event_id.clone()) };
    let lists: Vec<Vec<Key>> = vec![bm25.iter().map(key).collect(), embedded.iter().map(key).collect()];
    let mut events: HashMap<Key, Hit> = bm25.into_iter().chain(embedded).map(|hit| (key(&hit), hit)).collect();
    Ok(reciprocal_rank_fusion(&lists)
        .into_iter()
        .take(top_k)
        .filter_map(|(key, fused)| {
            let hit = events.remove(&key)?;
            Some(Hit { event: hit.event, score: Score::Fused(round6(fused)) })
        })
        .collect())
}

#[cfg(test)]
mod tests;
