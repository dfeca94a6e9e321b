//! Scriptorium's writer runtime: where conversations become memory (spec 02 §2, §3).
//!
//! Layer 5: it reads conversations from a [`SessionStore`] (the SQLite [`SqliteStore`]),
//! turns them into source records, decides when a batch is due, archives it, hands it to
//! a [`WriterAgent`] through a [`WriterStage`] under the workspace write lock, and marks
//! the written turns in the store. Failures become a [`WriteFailure`] with a closed
//! [`MemoryWriteFailureCode`].
//!
//! # Architecture invariants
//!
//! - Only a batch whose install changed memory files is marked (decision 5).
//! - A batch is handed to the model at most once: the install that changes memory
//!   records the batch's node ids, and the next pass finishes the marking from that
//!   record (docs/durability.md).
//! - Markers never change a session's `updated_at`.
//! - The writer model edits only a [`Stage`]: no tool path reaches outside it or into
//!   `sources/`, and its edits reach the workspace only as one transaction.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing))]

mod agent;
mod backfill;
mod batch;
mod clock;
mod error;
mod failure;
pub mod import;
pub mod llm;
mod migrate;
mod model_writer;
mod pass;
mod promote;
mod prompt;
mod records;
mod stage;
mod status;
mod store;
mod trajectory;
mod unpaired;
mod watcher;

/// Named crash points of the write pass, for the child-process crash tests.
#[doc(hidden)]
pub mod crashpoint;

pub use crate::agent::{
    AgentError, AgentErrorKind, ProviderReason, StageKind, Usage, WriterAgent, WriterReport, WriterStage, WriterTask,
};
pub use crate::backfill::{BACKFILL_BUDGET_TOKENS, BackfillReport, BackfillStatus, LEGACY_CORE_PROVIDER};
pub use crate::batch::{
    DEFAULT_TRIGGER_TOKENS, IDLE_ALLOWANCE_SECONDS, MARKER_KEY, first_batch, marked_ids, reaches, tokens,
    trigger_tokens, unforced_gate, unwritten,
};
pub use crate::clock::{Clock, SystemClock, iso8601, iso8601_utc, parse_iso8601};
pub use crate::error::{Error, ErrorCode};
pub use crate::failure::{MemoryWriteFailureCode, PassError, WriteFailure, classify};
pub use crate::model_writer::{MAX_ITERATIONS, ModelWriter};
pub use crate::pass::{
    GLOBAL_ORGANIZE_SECONDS, LOCAL_ORGANIZE_BATCHES, LOCAL_ORGANIZE_TOKENS, ORGANIZE_MESSAGE, PendingSuffix,
    ReorganizeReport, ReorganizeStatus, Runtime, RuntimeConfig, WRITE_MESSAGE, all_sessions, pending_suffix,
    pending_turns, session_pending,
};
pub use crate::promote::PromoteReport;
pub use crate::prompt::{SYSTEM_CONTRACT, StageName, organize_task, repair_task, write_task};
pub use crate::records::{AUTHORITY_SCHEMA_KEY, PROVIDER, Record, RecordError, records};
pub use crate::stage::{
    GLOB_LIMIT, GREP_LIMIT, GREP_LINE_CHARS, LISTING_BUDGET_BYTES, LISTING_PROSE_CHARS, MAX_ARGUMENT_BYTES,
    MAX_FILE_BYTES, READ_LIMIT_CHARS, STAGE_PARENT, Stage, TOOL_NAMES, ToolDefinition, ToolErrorCode, ToolOutcome,
    tool_definitions,
};
pub use crate::status::{
    LastFailure, STATUS_FILE, STATUS_VERSION, WriterStatus, read_status, read_status_file, record_failure,
    record_success,
};
pub use crate::store::{
    APPLICATION_ID, BranchTip, Content, Message, MetadataPatches, SCHEMA_VERSION, SESSIONS_FILE, SessionInfo,
    SessionStore, SqliteStore, Timestamp,
};
pub use crate::trajectory::{AGENT_HISTORY_FILE, Trajectory, TurnRecord, append_trajectory, redact};
pub use crate::unpaired::{
    MAX_CHANNEL_BYTES, MAX_IDENTITY_BYTES, MAX_MESSAGE_BYTES, MAX_PER_HOUR, QUOTA_FILE, RESERVE_BYTES, UnpairedMessage,
};
pub use crate::watcher::{
    Background, BackgroundConfig, IDLE_SECONDS, IngestCallback, IngestEvent, NIGHTLY_HOUR, POLL_INTERVAL,
    SESSION_END_FILE, SESSION_END_LOCK, ScanReport, scan_idle_sessions, seconds_until_hour,
};
