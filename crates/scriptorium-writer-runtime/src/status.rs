//! Writer status (spec 02 §2.11, spec 01 §1.3): `<runtime-dir>/writer-status.json`,
//! read-modify-written under an in-process mutex and an exclusive `flock` on
//! `writer-status.json.lock`, published atomically. Best effort and outside the memory
//! transaction: a failure to record is returned for logging and never changes a write's
//! result.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;

use scriptorium_transaction::{FILE_MODE, Vfs, Workspace, write_atomic};
use serde_json::{Value, json};

use crate::clock::{iso8601_utc, parse_iso8601};
use crate::error::{Error, ErrorCode};
use crate::failure::MemoryWriteFailureCode;

/// The status file's name in the runtime directory.
pub const STATUS_FILE: &str = "writer-status.json";

/// The status file's schema version.
pub const STATUS_VERSION: i64 = 1;

/// One process's writers take turns on the file; the flock orders processes.
static STATUS_MUTEX: Mutex<()> = Mutex::new(());

/// The last recorded failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LastFailure {
    /// When (ISO-8601 UTC).
    pub at: String,
    /// The code.
    pub reason_code: MemoryWriteFailureCode,
    /// Whether it was retryable.
    pub retryable: bool,
}

/// The persisted writer status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriterStatus {
    /// `"success"` or `"failure"`, whichever was recorded last.
    pub last_outcome: Option<&'static str>,
    /// When the last success was recorded.
    pub last_success_at: Option<String>,
    /// The last failure; a success keeps it.
    pub last_failure: Option<LastFailure>,
}

impl WriterStatus {
    /// Read the bytes of the file; a wrong version or malformed field reads as null.
    pub fn parse(bytes: &[u8]) -> WriterStatus {
        let Ok(Value::Object(members)) = serde_json::from_slice::<Value>(bytes) else { return WriterStatus::default() };
        if members.get("version").and_then(Value::as_i64) != Some(STATUS_VERSION) {
            return WriterStatus::default();
        }
        let last_outcome = match members.get("last_outcome").and_then(Value::as_str) {
            Some("success") => Some("success"),
            Some("failure") => Some("failure"),
            _ => None,
        };
        let last_success_at = members
            .get("last_success_at")
            .and_then(Value::as_str)
            .filter(|at| parse_iso8601(at).is_some())
            .map(str::to_owned);
        let last_failure = members.get("last_failure").and_then(|failure| {
            Some(LastFailure {
                at: failure.get("at")?.as_str().filter(|at| parse_iso8601(at).is_some())?.to_owned(),
                reason_code: MemoryWriteFailureCode::from_name(failure.get("reason_code")?.as_str()?)?,
                retryable: failure.get("retryable")?.as_bool()?,
            })
        });
        WriterStatus { last_outcome, last_success_at, last_failure }
    }

    /// The file's bytes: indent 2 and LF.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut text = String::from("{\n  \"version\": 1,\n  \"last_outcome\": ");
        text.push_str(&self.last_outcome.map_or_else(|| "null".to_owned(), |o| json!(o).to_string()));
        text.push_str(",\n  \"last_success_at\": ");
        text.push_str(&self.last_success_at.as_ref().map_or_else(|| "null".to_owned(), |at| json!(at).to_string()));
        text.push_str(",\n  \"last_failure\": ");
        match &self.last_failure {
            None => text.push_str("null"),
            Some(failure) => text.push_str(&format!(
                "{{\n    \"at\": {},\n    \"reason_code\": {},\n    \"retryable\": {}\n  }}",
                json!(failure.at),
                json!(failure.reason_code.as_str()),
                failure.retryable
            )),
        }
        text.push_str("\n}\n");
        text.into_bytes()
    }

    /// The persisted fields as the `writer` status object holds them.
    pub fn to_json(&self) -> Value {
        json!({
            "last_outcome": self.last_outcome,
            "last_success_at": self.last_success_at,
            "last_failure": self.last_failure.as_ref().map(|f| json!({
                "at": f.at, "reason_code": f.reason_code.as_str(), "retryable": f.retryable
            })),
        })
    }
}

/// Read the workspace's writer status (missing or unreadable: nothing recorded).
pub fn read_status(workspace: &Workspace) -> WriterStatus {
    let path = Path::new(workspace.runtime_dir_name()).join(STATUS_FILE);
    workspace.vfs().read(&path).map(|bytes| WriterStatus::parse(&bytes)).unwrap_or_default()
}

/// Read a writer status file by path (a reader that has no open workspace); missing
/// or unreadable: nothing recorded.
pub fn read_status_file(path: &Path) -> WriterStatus {
    std::fs::read(path).map(|bytes| WriterStatus::parse(&bytes)).unwrap_or_default()
}

/// Record a success at `now` (Unix seconds); the previous failure is kept.
pub fn record_success(workspace: &Workspace, now: f64) -> Result<(), Error> {
    update(workspace, |status| {
        status.last_outcome = Some("success");
        status.last_success_at = Some(iso8601_utc(now));
    })
}

/// Record a failure at `now`; never the free-text reason.
pub fn record_failure(
    workspace: &Workspace,
    now: f64,
    reason_code: MemoryWriteFailureCode,
    retryable: bool,
) -> Result<(), Error> {
    update(workspace, |status| {
        status.last_outcome = Some("failure");
        status.last_failure = Some(LastFailure { at: iso8601_utc(now), reason_code, retryable });
    })
}

fn update(workspace: &Workspace, change: impl FnOnce(&mut WriterStatus)) -> Result<(), Error> {
    let _guard = STATUS_MUTEX.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let lock_path = workspace.runtime_dir().join(format!("{STATUS_FILE}.lock"));
    let lock = open_lock(&lock_path)?;
    lock.lock().map_err(|error| state_error(error, "cannot lock the writer status"))?;
    let mut status = read_status(workspace);
    change(&mut status);
    let path = Path::new(workspace.runtime_dir_name()).join(STATUS_FILE);
    write_atomic(workspace.vfs(), &path, &status.to_bytes())
        .map_err(|error| state_error(error, "cannot write the writer status"))
}

/// Open (creating, mode 0600) a lock file.
pub(crate) fn open_lock(path: &Path) -> Result<File, Error> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(FILE_MODE)
        .open(path)
        .map_err(|error| state_error(error, "cannot open a runtime lock file"))
}

pub(crate) fn state_error(error: std::io::Error, message: &'static str) -> Error {
    Error::new(ErrorCode::StateIo, message).with_source(error)
}

#[cfg(test)]
mod tests;
