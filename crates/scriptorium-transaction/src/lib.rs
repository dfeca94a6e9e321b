//! Scriptorium's workspace on disk: staged all-or-nothing edits, the cross-process
//! write lock, crash-safe install with recovery, the revision, and Git history.
//!
//! Layer 2: it builds on the archive-format and topic-markdown layers and knows nothing
//! of retrieval, derived views or the writer; derived views reach it through a trait it
//! defines, so they are built in the stage and installed in the same atomic step.
//!
//! # Architecture invariants
//!
//! - A rejected transaction changes no byte of the workspace and returns exactly one
//!   [`ErrorCode`].
//! - After a crash at any point, opening the workspace recovers it to the state before
//!   or after the interrupted transaction, never a mix.
//! - Source archives are append-only for every caller; derived files are read-only.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing))]

mod error;
mod evidence;
mod patch;
mod paths;

pub use crate::error::{Error, ErrorCode};
pub use crate::evidence::{
    ArchivedEvidence, EVIDENCE_PROVIDER, EVIDENCE_ROLES, Evidence, MAX_SOURCE_CONTENT_BYTES, MAX_SOURCES, Provenance,
    evidence_records, parse_evidence, substitute_source_labels,
};
pub use crate::patch::{MAX_PATCH_BYTES, Patch, PatchResult, StageView, apply_patch};
pub use crate::paths::{TopicPath, workspace_relative};
