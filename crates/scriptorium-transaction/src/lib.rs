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

mod archive_tree;
mod calendar;
mod derive;
mod error;
mod evidence;
mod history;
mod journal;
mod listing;
mod lock;
mod patch;
mod paths;
mod promote;
mod random;
mod records;
mod repair;
mod revision;
mod runtime_state;
mod snapshot;
mod update;
mod validate;
mod vfs;
mod workspace;

#[cfg(test)]
mod test_support;

/// Named crash points for the child-process crash suite (`SCRIPTORIUM_CRASH_AT=name:n`).
#[doc(hidden)]
pub mod crashpoint;

pub use crate::derive::{CORE_REPORT_FILE, Derive, DerivedFiles, NoDerivedViews, StageDelta};
pub use crate::error::{Error, ErrorCode};
pub use crate::evidence::{
    ArchivedEvidence, EVIDENCE_PROVIDER, EVIDENCE_ROLES, Evidence, MAX_SOURCE_CONTENT_BYTES, MAX_SOURCES, Provenance,
    evidence_records, parse_evidence, substitute_source_labels,
};
pub use crate::history::{
    DEFAULT_MESSAGE, HISTORY_PATHS, HISTORY_USER_EMAIL, HISTORY_USER_NAME, History, HistoryEntry, HistoryReport,
    INIT_MESSAGE, MAX_MESSAGE_CHARS, PreparedCommit, READY_MARKER, RewrittenSource, sanitize_message,
};
pub use crate::patch::{MAX_PATCH_BYTES, Patch, PatchResult, StageView, apply_patch};
pub use crate::paths::{TopicPath, workspace_relative};
pub use crate::records::{
    Destination, MAX_RECORD_OPS, MAX_RECORD_PAYLOAD_BYTES, Position, RecordChanges, RecordEvidence, RecordOp,
    RecordSource, apply_record_ops, parse_record_ops,
};

pub use crate::archive_tree::{WorkspaceSources, WorkspaceTree};
pub use crate::calendar::civil_from_days;
pub use crate::journal::{
    BackupRecovery, Changes, Installed, QUARANTINE_DIR, Recovery, RevisionMove, TXN_DIR, install, recover,
};
pub use crate::listing::{
    FileClass, HIDDEN_ARCHIVE_CODE, ListedFile, Listing, PATH_COLLISION_CODE, Scope, SkipReason, Skipped, Unreadable,
    classify, is_hidden_component,
};
pub use crate::lock::{
    BACKGROUND_LOCK_TIMEOUT, INTERACTIVE_LOCK_TIMEOUT, LOCK_FILE, STAGED_EDIT_LOCK_TIMEOUT, WriteLock,
};
pub use crate::promote::{PROMOTE_LOCK_TIMEOUT, PromoteRequest, Promoted, TRUST_AUDIT_FILE};
pub use crate::repair::{RepairedArchive, RestoredSource};
pub use crate::revision::{
    LEGACY_RUNTIME_DIR, RUNTIME_DIR, RUNTIME_STATE_FILE, is_internal_name, is_internal_path, is_revision, revision,
    runtime_dir_name,
};
pub use crate::runtime_state::{RuntimeState, WrittenBatch};
pub use crate::snapshot::{Claim, Snapshot};
pub use crate::update::WRITER_STAGE_ITEMS;
pub use crate::update::{CitationScope, Edit, FileChange, GitMode, UpdateRequest, UpdateResult};
pub use crate::validate::{TopicCheck, validate_topics};
pub use crate::vfs::{
    CrashImage, DIR_MODE, FILE_MODE, Fault, FaultKind, FileKind, Metadata, RealFile, RealVfs, SimFile, SimVfs, Vfs,
    create_dir_all, kind_of, remove_tree, write_atomic,
};
pub use crate::workspace::{SUPERSEDED_DIR, SUPERSEDED_ITEMS, WORKSPACE_ID_FILE, Workspace, is_valid_workspace_id};
