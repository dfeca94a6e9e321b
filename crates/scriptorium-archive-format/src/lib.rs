//! Parse and render the line-framed v2 source archive (`sources/<provider>/_v2/<thread>.md`),
//! and read the legacy archives that came before it.
//!
//! Layer 0 of the Scriptorium workspace: it depends on no other workspace crate and
//! does no I/O of its own. It knows nothing about topics, transactions or retrieval.
//!
//! # Architecture invariants
//!
//! - Parsing is total: [`parse`] returns the valid prefix of frames plus an optional
//!   [`Stop`] saying where and why the scan ended. It never panics and never
//!   resynchronises after a bad frame.
//! - Memory is O(frames): declared `record-lines:N` counts are checked against the
//!   remaining input before anything is skipped, and no line table is built.
//! - For canonical input, rendering parsed frames reproduces the consumed bytes
//!   exactly (CRLF and trailing newlines included).
//! - No `nom` type appears in the public API.
//!
//! # Example
//!
//! ```
//! use scriptorium_archive_format::{parse, FORMAT_MARKER};
//!
//! let text = format!("{FORMAT_MARKER}\n\n");
//! let parsed = parse(&text, "sources/openprogram/_v2/thread-1.md");
//! assert!(parsed.frames.is_empty());
//! assert!(parsed.is_complete());
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
// The parser meets untrusted bytes: no hidden panics outside tests (fjall lib.rs).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing))]

mod error;
mod event;
mod fields;
mod ids;
mod legacy;
mod meta;
mod parse;
mod python;
mod record;
mod retrieval_text;
mod speaker;
mod tree;
mod trusted;
mod write;
mod writer_record;

/// Invariant checks shared by the fuzz targets, the corpus replay test and proptest.
#[doc(hidden)]
pub mod fuzz;

pub use crate::error::{Error, ErrorCode};
pub use crate::event::{SourceEvent, source_events};
pub use crate::fields::{RecordHeader, split_record_header};
pub use crate::ids::{
    SourceIdParts, is_v2_source_path, is_valid_v2_source_id, legacy_location, quote_path_component, source_anchor,
    split_source_id, v2_location,
};
pub use crate::legacy::{anonymous_event_id, legacy_speaker};
pub use crate::meta::{AuthorityTier, SourceMeta, TrustState};
pub use crate::parse::{Frame, Frames, Parsed, Stop, StopReason, parse, parse_bytes};
pub use crate::record::SourceRecord;
pub use crate::retrieval_text::{
    benchmark_refs, clean_retrieval_text, first_iso_date, has_benchmark_ref, reduce_markdown_links, strip_html_comments,
};
pub use crate::speaker::{
    IDENTITY_PART_MAX_CHARS, SpeakerView, decode_speaker_id, encode_speaker_id, is_canonical_speaker_id,
    normalize_identity_part, speaker_label,
};
pub use crate::tree::{ArchiveTree, MemoryTree};
pub use crate::trusted::trusted_source_ids;
pub use crate::write::{AppendPlan, PlannedFile, plan_append, render_frame};
pub use crate::writer_record::{UNDATED, WriterRecord, observed_date, render_observed_batch, render_observed_section};

/// Python string rules the reference depends on (printable, whitespace, casefold),
/// shared with the layers above so that every layer classifies text the same way.
pub mod text {
    pub use crate::python::{
        casefold, char_len, collapse_whitespace, is_printable, is_space, nfc, split_whitespace, str_is_printable,
    };
}

/// The first line of every v2 archive file.
pub const FORMAT_MARKER: &str = "<!-- openprogram-source-archive:v2 -->";
