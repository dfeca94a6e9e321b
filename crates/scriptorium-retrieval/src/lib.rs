//! Retrieval over a Scriptorium workspace: every topic claim and source record as a
//! [`MemoryEvent`], an inverted index with exact BM25+ scoring, filters, trust on hits,
//! the search API with optional embedding and hybrid ranking, the persistent incremental
//! index ([`Index::open`], module `cache`), and [`grep`] over the visible files.
//!
//! Layer 3 of the Scriptorium workspace: it depends on `scriptorium-archive-format`
//! (source events), `scriptorium-topic-markdown` (topic claims) and
//! `scriptorium-transaction` (the one listing of the workspace and its source lookup). It
//! reads the workspace through [`scan_workspace`] (or the stat-only walk of
//! [`Index::refresh`]), both the transaction's `Listing`. The only file it ever writes
//! is its own cache, `.scriptorium/retrieval-index.bin` ([`CACHE_PATH`]).
//!
//! # Architecture invariants
//!
//! - Rankings equal the reference's: the tokenizer uses frozen CPython 3.11 tables
//!   (Unicode 14), scores are BM25+ in `f64` in numpy's operation order over the
//!   *filtered candidates* (N, df, average length), rounded with Python's `round(x, 6)`
//!   before sorting by `(−final_score, path, line, event_id)`.
//! - The scoring formula ([`Bm25Weight`], [`Bm25Statistics`]) is separate from the index.
//! - A query touches only the posting lists of its own tokens plus one walk over the
//!   candidates that hold none of them (which all share one score).
//! - Calls are synchronous: a large query (150k postings or more) or a cache load may
//!   split its work over a scoped helper thread, which has finished when the call
//!   returns; results never depend on how the work was split.
//! - Results do not depend on the order files or events were added; a file's events
//!   occupy one contiguous slot range, so a file can be removed and re-added alone.
//! - Events are held compact and posting lists delta-encoded; a query builds a
//!   [`MemoryEvent`] only for its result rows.
//! - Trust is never cached: v2 preference and topic trust resolution rerun over the
//!   whole index after every batch of changes.
//! - Embedding or hybrid search without a working [`Embedder`] is an error, never a
//!   silent BM25 answer.
//!
//! # Example
//!
//! ```
//! use scriptorium_retrieval::{Bm25Options, Index, Score, WorkspaceFile};
//!
//! let frame = "# D1\n\n<a id=\"d1-1\"></a>\n[2024-01-02] user: I adopted a cat named Miso. [D1:1]\n";
//! let topic = "# Miso\n\nCraig adopted a cat named Miso.[^e-1] ^c0c0c0c0\n\n\
//!              [^e-1]: Time: `2024-01-02`; Sources: [D1:1](D1:1)\n";
//! let index = Index::from_files([
//!     WorkspaceFile { path: "sources/D1.md".into(), bytes: frame.into() },
//!     WorkspaceFile { path: "topics/pets/miso.md".into(), bytes: topic.into() },
//! ]);
//! let hits = index.search("Miso cat", &Bm25Options::default())?;
//! assert_eq!(hits.len(), 2);
//! assert_eq!(hits[0].event.event_id, "c0c0c0c0:1");
//! // `D1:1` is a benchmark ref, not a source event id, so the claim is pending.
//! assert_eq!(hits[0].event.trust_state.as_str(), "pending");
//! let Score::Bm25(score) = &hits[0].score else { unreachable!() };
//! assert!(score.rule_features.contains(&"path_heading=miso".to_owned()));
//! # Ok::<(), scriptorium_retrieval::Error>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
// Workspace files are untrusted input: no hidden panics outside tests (fjall lib.rs).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing))]

mod api;
mod bitset;
mod bm25;
mod cache;
mod collect;
mod embed;
mod error;
mod event;
mod filter;
mod fusion;
mod fxhash;
mod grep;
mod hit;
mod index;
mod legacy_topic;
mod matching;
mod round;
mod rules;
mod scan;
mod search;
#[cfg(test)]
mod test_support;
mod tokenize;

pub use crate::api::{API_TOP_K_MAX, CONTENT_MAX_CHARS, Method, SearchRequest, SearchResponse, search};
pub use crate::bm25::{B, Bm25Statistics, Bm25Weight, DELTA, Explanation, K1, average_len, idf, length_norm};
pub use crate::cache::{CACHE_FORMAT_VERSION, CACHE_OLDEST_SUPPORTED_VERSION, CACHE_PATH, CacheState, OpenReport};
pub use crate::collect::file_events;
pub use crate::embed::{EmbedError, Embedder};
pub use crate::error::{Error, ErrorCode};
pub use crate::event::{FileKind, MemoryEvent, Trust, hit_anchor, source_memory_event};
pub use crate::filter::{Filters, event_matches_path_prefix, normalize_path_prefix};
pub use crate::fusion::{RRF_K, reciprocal_rank_fusion};
pub use crate::grep::{
    GREP_LIMIT_DEFAULT, GREP_LIMIT_MAX, GREP_TEXT_MAX_CHARS, GrepMatch, GrepRequest, GrepResponse, grep,
};
pub use crate::hit::{Bm25Score, Hit, Score};
pub use crate::index::{FileChange, Index};
pub use crate::matching::matches_query;
pub use crate::scan::{WorkspaceFile, scan_workspace};
pub use crate::search::{Bm25Options, INDEX_TOP_K_MAX};
pub use crate::tokenize::{TOKENIZER_UNICODE_VERSION, tokenize};
