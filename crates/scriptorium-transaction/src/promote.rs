//! [`Workspace::promote_source`]: the trust flip of spec 01 §2.9 and spec 02 §5, step 1
//! to 4. Under the write lock, the source's frame gets the trusted `source-meta` line
//! ([`plan_promotion`]: no other byte of the archive changes), one audit line is added
//! to `<runtime-dir>/trust-audit.jsonl`, the derived views are rebuilt (a promoted
//! source lets its claims reach `core.md`), and history records
//! `memory: trust source <id>`.
//!
//! Beyond the reference, the archive, the audit file and the views are one journal
//! install: a crash or a failed write leaves either all of them or none, so there is no
//! restore step to get wrong. Who may promote (the local interactive owner) is the
//! caller's check; this layer records the principal it is given.

use std::path::Path;
use std::time::Duration;

use scriptorium_archive_format::{ErrorCode as ArchiveCode, plan_promotion, v2_location};
use serde_json::Value;

use crate::derive::Derive;
use crate::error::{Error, ErrorCode};
use crate::journal::Changes;
use crate::update::read_tree;
use crate::vfs::Vfs;
use crate::workspace::Workspace;

/// The audit log of promotions, inside the runtime directory.
pub const TRUST_AUDIT_FILE: &str = "trust-audit.jsonl";

/// How long a promotion waits for the write lock (spec 02 §2.8).
pub const PROMOTE_LOCK_TIMEOUT: Duration = Duration::from_secs(1);

/// One promotion to make.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromoteRequest {
    /// The source to trust (`provider/thread/message`).
    pub source_id: String,
    /// The promoting owner's principal, for the audit line.
    pub principal_id: String,
    /// The audit line's time, ISO 8601 in UTC (the caller's clock).
    pub timestamp: String,
}

impl PromoteRequest {
    /// A promotion of `source_id` by `principal_id` at `timestamp`.
    pub fn new(source_id: impl Into<String>, principal_id: impl Into<String>, timestamp: impl Into<String>) -> Self {
        PromoteRequest { source_id: source_id.into(), principal_id: principal_id.into(), timestamp: timestamp.into() }
    }
}

/// What a promotion did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Promoted {
    /// The source.
    pub source_id: String,
    /// `false` when the source was trusted already (nothing was written).
    pub promoted: bool,
    /// The revision after the promotion.
    pub revision: String,
    /// Whether a history commit was published.
    pub git_committed: bool,
}

impl Workspace {
    /// Trust the pending source `request.source_id` (spec 01 §2.9): one journal install
    /// of the rewritten archive, the audit line and the derived views `derive` rebuilds,
    /// then a history commit (`memory: trust source <id>`, best effort). A source that is
    /// trusted already changes nothing.
    ///
    /// Errors: `CONCURRENT_UPDATE` when the lock is not free within a second;
    /// `MEMORY_NOT_FOUND` when no archive or frame holds the source; `INVALID_ARGUMENT`
    /// (detail `archive_code`) for a malformed id, an archive that does not scan
    /// completely, or a frame without trust metadata; `TXN_IO`.
    pub fn promote_source(&self, request: &PromoteRequest, derive: &dyn Derive) -> Result<Promoted, Error> {
        let lock = self.lock(PROMOTE_LOCK_TIMEOUT)?;
        self.recover(&lock)?;
        let id = request.source_id.as_str();
        let path = v2_location(id).ok_or_else(|| {
            Error::new(ErrorCode::InvalidArgument, format!("source id must be provider/thread/message: {id}"))
                .with_detail("archive_code", ArchiveCode::InvalidSourceIdShape.as_str())
        })?;
        let vfs = self.vfs();
        let archive = match vfs.read(Path::new(&path)) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::new(ErrorCode::MemoryNotFound, format!("source not found: {id}")).with_path(path));
            }
            Err(error) => return Err(Error::new(ErrorCode::Io, format!("cannot read {path}: {error}"))),
        };
        let plan = plan_promotion(&archive, id).map_err(|error| {
            let code = match error.code() {
                ArchiveCode::SourceNotFound => ErrorCode::MemoryNotFound,
                _ => ErrorCode::InvalidArgument,
            };
            Error::new(code, error.message().to_owned())
                .with_path(path.as_str())
                .with_detail("archive_code", error.code().as_str())
        })?;
        let current = self.revision()?;
        let Some(bytes) = plan.bytes else {
            return Ok(Promoted { source_id: id.to_owned(), promoted: false, revision: current, git_committed: false });
        };

        let mut changes = Changes::new();
        changes.insert(path.clone(), Some(bytes.clone()));
        let audit_path = format!("{}/{TRUST_AUDIT_FILE}", self.runtime_dir_name());
        let mut audit = match vfs.read(Path::new(&audit_path)) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(error) => return Err(Error::new(ErrorCode::Io, format!("cannot read {audit_path}: {error}"))),
        };
        if audit.last().is_some_and(|&last| last != b'\n') {
            audit.push(b'\n');
        }
        audit.extend_from_slice(audit_line(request, plan.speaker_id.as_deref()).as_bytes());
        changes.insert(audit_path, Some(audit));

        let mut topics = read_tree(vfs, "topics")?;
        let overlay = std::collections::BTreeMap::from([(path, bytes)]);
        self.derive_into(derive, &mut topics, &overlay, false, &current, &mut changes)?;

        let history = self.history_for_commit().ok();
        let message = format!("memory: trust source {id}");
        let prepared = match &history {
            Some(history) => history.prepare(&message, &changes).ok().flatten(),
            None => None,
        };
        // Sources changed under the cached baseline: the next update re-reads it.
        self.committed_cache().invalidate();
        self.install(&lock, &changes)?;
        let published = prepared.and_then(|commit| commit.publish().ok());
        if let Some(commit) = &published {
            self.history_published(commit);
        }
        let git_committed = published.is_some();
        let revision = self.revision()?;
        derive.installed(&revision);
        Ok(Promoted { source_id: id.to_owned(), promoted: true, revision, git_committed })
    }
}

/// `{"timestamp","action":"promote","source_id","principal_id","speaker_id","authority_tier":"owner"}`,
/// compact, keys in that order, with its line break.
fn audit_line(request: &PromoteRequest, speaker_id: Option<&str>) -> String {
    let text = |value: &str| Value::from(value).to_string();
    let speaker = speaker_id.map_or_else(|| "null".to_owned(), text);
    format!(
        "{{\"timestamp\":{},\"action\":\"promote\",\"source_id\":{},\"principal_id\":{},\"speaker_id\":{speaker},\"authority_tier\":\"owner\"}}\n",
        text(&request.timestamp),
        text(&request.source_id),
        text(&request.principal_id),
    )
}

#[cfg(test)]
mod tests;
