//! Parse, validate, normalize and render topic Markdown files (`topics/**.md`): blocks
//! ending in `^block-id` runs, citation groups `[^id]`, footnote definitions with
//! `Time:` and `Sources:` links to source archives, and links between topics.
//!
//! Layer 1 of the Scriptorium workspace: it depends only on
//! `scriptorium-archive-format` (to read the v2 archives that citations point into)
//! and knows nothing about transactions, retrieval or the file system.
//!
//! # Architecture invariants
//!
//! - No I/O: topic files come in as bytes, source archives through the
//!   [`SourceLookup`] trait; a [`SourceResolver`] reads each distinct archive once.
//! - Validation collects every violation with a stable `TOPIC_*` [`ErrorCode`], the
//!   file, the line and a short detail; it never stops at the first one.
//! - Parsing never panics and never loses a line: `parse(render(d)) == d` for every
//!   document, and `render(parse(b)) == b` for a file in normal form.
//! - [`normalize`] follows the reference pipeline step by step (spec 01 §6.9), minting
//!   the same block and evidence ids, and is idempotent: normalizing its own output
//!   (committed) changes nothing.
//! - Decision Q1: uncited text is rejected before pruning; only heading-only or blank
//!   sections and files are pruned.
//! - No `nom` type appears in the public API.
//!
//! # Example
//!
//! ```
//! use scriptorium_topic_markdown::{MemorySources, Mode, SourceResolver, parse_tree};
//!
//! let topic = "# Pets\n\nCraig adopted a cat.[^e-1] ^c0c0c0c0\n\n\
//!              [^e-1]: Time: `2024-01-02`; Sources: [D1:1](D1:1)\n";
//! let sources = SourceResolver::new(MemorySources::new());
//! let units = parse_tree([("topics/pets.md", topic)], &sources, Mode::Strict).check()?;
//! assert_eq!(units[0].memory_id, "c0c0c0c0");
//! assert_eq!(units[0].content, "Craig adopted a cat.");
//! assert_eq!(units[0].source_refs, ["D1:1"]);
//! # Ok::<(), scriptorium_topic_markdown::Violations>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
// Topic files are untrusted input: no hidden panics outside tests (fjall lib.rs).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing))]

mod definition;
mod document;
mod error;
mod events;
mod hash;
mod normalize;
mod paths;
mod source;
mod syntax;
mod temporal;
mod text;
mod tree;
mod unit;

/// Invariant checks shared by the fuzz target, the corpus replay test and proptest.
#[doc(hidden)]
pub mod fuzz;

pub use crate::definition::{Definition, DefinitionForm, SourceLink, parse_definition, render_definition};
pub use crate::document::{Claim, Item, ItemKind, Paragraph, ParagraphSpan, TopicDocument, paragraph_spans, render};
pub use crate::error::{ErrorCode, Violation, Violations};
pub use crate::events::{TopicEvent, topic_events};
pub use crate::normalize::{
    Baseline, CommittedIndex, NormalizeOptions, Normalized, Removal, normalize, normalize_changed, rewrite_links,
    unlocated_handle,
};
pub use crate::paths::percent_decode;
pub use crate::source::{MemorySources, SourceLookup, SourceReadError, SourceResolver};
pub use crate::temporal::{EvidenceTime, PartialDate, TimeWindow};
pub use crate::text::split_lines;
pub use crate::tree::{Mode, ParsedTree, parse_documents, parse_tree, topic_prose};
pub use crate::unit::{Evidence, Unit, UnitKind};
