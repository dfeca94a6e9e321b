//! The plain data of the contract.
//!
//! Re-exported on purpose: [`Message`] (with [`Content`] and [`Timestamp`]) is the session
//! store's node (spec 02 §2.1) that the write hook hands to the writer runtime unchanged,
//! and [`WriteFailure`] with [`MemoryWriteFailureCode`] is the spec's closed failure set
//! (§2.9) that the runtime owns; copies would be a second definition of each, converted on
//! every turn. Both are plain data (strings, booleans and `serde_json` values).

pub use scriptorium_writer_runtime::{Content, MemoryWriteFailureCode, Message, Timestamp, WriteFailure};

/// A write still owed by a session after [`crate::MemoryBackend::shutdown`].
#[derive(Clone, Debug, PartialEq)]
pub struct SessionFailure {
    /// The session.
    pub session_id: String,
    /// Why its forced write did not land.
    pub failure: WriteFailure,
}

/// How a reorganize ended (`status` of spec 02 §1.1 and §8.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReorganizeStatus {
    /// The default of a backend that does not reorganize.
    Skipped,
    /// Memory or the writer is disabled.
    Disabled,
    /// There are no topic files.
    Empty,
    /// The organize run finished.
    Ok,
    /// Another writer held the lock.
    Busy,
    /// The run failed; see [`ReorganizeReport::error`].
    Failed,
}

impl ReorganizeStatus {
    /// The report's `status` string.
    pub const fn as_str(self) -> &'static str {
        match self {
            ReorganizeStatus::Skipped => "skipped",
            ReorganizeStatus::Disabled => "disabled",
            ReorganizeStatus::Empty => "empty",
            ReorganizeStatus::Ok => "ok",
            ReorganizeStatus::Busy => "busy",
            ReorganizeStatus::Failed => "failed",
        }
    }
}

/// What a reorganize did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReorganizeReport {
    /// How it ended.
    pub status: ReorganizeStatus,
    /// How many topic files there are (0 when not counted).
    pub topics: usize,
    /// The topic files it committed, sorted.
    pub changed_files: Vec<String>,
    /// For [`ReorganizeStatus::Failed`]: the spec 02 §2.9 failure code and a message.
    pub error: Option<(String, String)>,
}

impl ReorganizeReport {
    /// A report with only a status.
    pub fn status(status: ReorganizeStatus) -> Self {
        ReorganizeReport { status, topics: 0, changed_files: Vec::new(), error: None }
    }
}
