//! Parse and render the line-framed v2 source archive (`sources/<provider>/_v2/<thread>.md`),
//! and read the legacy archives that came before it.
//!
//! Layer 0 of the Scriptorium workspace: it depends on no other workspace crate and
//! does no I/O of its own. It knows nothing about topics, transactions or retrieval.
//!
//! What it holds:
//! - the scanner: [`parse`] / [`parse_bytes`] collect, [`Frames`] streams;
//! - the writer as a pure plan: [`plan_append`] turns [`SourceRecord`]s and a read-only
//!   [`ArchiveTree`] into the complete new bytes of every archive that gains frames;
//! - identities: source ids, archive paths and anchors, speaker-id percent encoding,
//!   `source-meta` tokens ([`SourceMeta`]), speaker label sanitization;
//! - the retrieval view of archives: [`source_events`] (v2 and legacy) and
//!   [`trusted_source_ids`];
//! - the writer record protocol ([`WriterRecord`]) that hands records to the writer model.
//!
//! # Architecture invariants
//!
//! - Parsing is total: [`parse`] returns the valid prefix of frames plus an optional
//!   [`Stop`] saying where and why the scan ended. It never panics and never
//!   resynchronises after a bad frame.
//! - Memory is O(frames) (O(1) with [`Frames`]): declared `record-lines:N` counts are
//!   checked against the remaining input before anything is skipped.
//! - For canonical input, rendering parsed frames reproduces the consumed bytes
//!   exactly (CRLF and trailing newlines included).
//! - A planned append never writes a frame that a scanner cannot reach (decision Q4).
//! - No `nom` type appears in the public API.
//!
//! # Example
//!
//! ```
//! use scriptorium_archive_format::{MemoryTree, SourceRecord, parse_bytes, plan_append};
//!
//! let mut record = SourceRecord::new("openprogram", "thread-1", "m1", 1, "user", "the budget is 50k");
//! record.timestamp = Some("2026-08-09T10:15:00+08:00".to_owned());
//! let mut tree = MemoryTree::new();
//! let plan = plan_append(&[record], &tree)?;
//! tree.apply(&plan);
//!
//! let path = "sources/openprogram/_v2/thread-1.md";
//! let scan = parse_bytes(tree.get(path).expect("written"), path);
//! assert!(scan.is_complete());
//! assert_eq!(scan.frames[0].source_id, "openprogram/thread-1/m1");
//! # Ok::<(), scriptorium_archive_format::Error>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
// The parser meets untrusted bytes: no hidden panics outside tests (fjall lib.rs).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing))]

mod appended;
mod error;
mod event;
mod fields;
mod ids;
mod legacy;
mod meta;
mod parse;
mod promote;
mod python;
mod record;
mod retrieval_text;
mod scan_json;
mod speaker;
mod tree;
mod trusted;
mod write;
mod writer_record;

/// Invariant checks shared by the fuzz targets, the corpus replay test and proptest.
#[doc(hidden)]
pub mod fuzz;

pub use crate::appended::appended_source_ids;
pub use crate::error::{Error, ErrorCode};
pub use crate::event::{SourceEvent, source_events};
pub use crate::fields::{RecordHeader, split_record_header};
pub use crate::ids::{
    SourceIdParts, is_v2_source_path, is_valid_v2_source_id, legacy_location, quote_path_component, source_anchor,
    split_source_id, v2_location,
};
pub use crate::legacy::{LegacyRecord, anonymous_event_id, legacy_record, legacy_speaker};
pub use crate::meta::{AuthorityTier, SourceMeta, TrustState};
pub use crate::parse::{Frame, Frames, Parsed, Stop, StopReason, parse, parse_bytes};
pub use crate::promote::{PromotionPlan, plan_promotion};
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
pub use crate::write::{AppendPlan, PlannedFile, collision_key, plan_append, render_frame};
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
