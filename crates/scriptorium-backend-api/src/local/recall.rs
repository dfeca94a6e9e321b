//! The reads of the local backend: `core.md` for the system prompt (spec 02 §1.4) and
//! automatic recall (§1.5), each returning the raw text the caller fences once.

use std::path::Path;

use scriptorium_retrieval::{Filters, Index, Method, SearchRequest, Trust, hit_anchor, matches_query, search};

use super::Warm;
use crate::config::{MemoryConfig, RetrievalMethod};
use crate::fence::{fence, sanitize_context};
use crate::inspect::Recalled;

/// `core.md` fenced, or `""` when it is unreadable or holds nothing but `# ` headings.
pub(super) fn core(root: &Path) -> String {
    let Ok(text) = std::fs::read_to_string(root.join("core.md")) else { return String::new() };
    let text = text.trim();
    if text.lines().all(|line| line.starts_with("# ") || line.trim().is_empty()) {
        return String::new();
    }
    fence(text)
}

/// The contents of the top-k recallable hits for `query`, joined by blank lines: non-empty,
/// not pending, and matching at least one query token. Any error is no recall.
pub(super) fn recall(warm: &Warm, root: &Path, query: &str, config: &MemoryConfig) -> String {
    if config.retrieval_method == RetrievalMethod::Agent {
        return String::new();
    }
    let Ok(index) = warm.fresh_index(root) else { return String::new() };
    recall_in(&index, query, config)
}

/// [`recall`] over an index the caller has brought up to date.
pub(super) fn recall_in(index: &Index, query: &str, config: &MemoryConfig) -> String {
    recalled(index, query, config).into_iter().map(|hit| hit.content).collect::<Vec<_>>().join("\n\n")
}

/// The recallable hits of `index` for `query`, best first (an error or the `agent`
/// method is no hit): what [`recall`] joins, with where each hit points.
pub(crate) fn recalled(index: &Index, query: &str, config: &MemoryConfig) -> Vec<Recalled> {
    let method = match config.retrieval_method {
        RetrievalMethod::Agent => return Vec::new(),
        RetrievalMethod::Bm25 => Method::Bm25,
        RetrievalMethod::Embedding => Method::Embedding,
        RetrievalMethod::Hybrid => Method::Hybrid,
    };
    let request = SearchRequest {
        query: query.to_owned(),
        method,
        top_k: config.top_k,
        filters: Filters { include_sources: config.include_sources, ..Filters::default() },
    };
    // No embedder ships yet: embedding and hybrid answer EMBEDDING_UNAVAILABLE, so no recall.
    let Ok(response) = search(index, &request, None) else { return Vec::new() };
    response
        .results
        .iter()
        .filter(|hit| has_text(&hit.event.content) && hit.event.trust_state != Trust::Pending)
        .filter(|hit| matches_query(&hit.event, query))
        .map(|hit| Recalled {
            path: hit.event.path.clone(),
            anchor: hit_anchor(&hit.event),
            content: hit.event.content.clone(),
        })
        .collect()
}

/// Whether `content` still says something once fenced text is removed: a stored claim
/// that is itself a fence (`[2024-03-16] <memory-context>…`) would otherwise be injected
/// as its date stamp alone, a fence with no memory in it.
fn has_text(content: &str) -> bool {
    let clean = sanitize_context(content);
    let body = clean
        .trim_start()
        .strip_prefix('[')
        .and_then(|rest| rest.split_once(']'))
        .map_or(clean.as_str(), |(_, body)| body);
    !body.trim().is_empty()
}
