//! Unpaired group speech (spec 02 §2.12): a message from a sender the channel gate
//! blocked is archived as a **pending** source, under a quota, with no topic transaction
//! and no history commit. Pending sources are never offered to the writer: they are in
//! no session, and nothing cites them until the owner promotes them.

use std::path::Path;

use scriptorium_archive_format::{SourceRecord, TrustState, plan_append, quote_path_component};
use scriptorium_transaction::{BACKGROUND_LOCK_TIMEOUT, Changes, Error as TxError, ErrorCode as TxCode, Vfs};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::clock::iso8601;
use crate::failure::PassError;
use crate::pass::Runtime;
use crate::status::state_error;

/// The quota file in the runtime directory.
pub const QUOTA_FILE: &str = "unpaired-archive-quota.json";

/// The largest message archived (64 KiB).
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// The most identity bytes (channel, account, chat, user id and display) accepted.
pub const MAX_IDENTITY_BYTES: usize = 4096;

/// The cap on all `sources/channel-*` bytes (64 MiB), with a 16 KiB reserve.
pub const MAX_CHANNEL_BYTES: u64 = 64 * 1024 * 1024;

/// The reserve kept below the cap.
pub const RESERVE_BYTES: u64 = 16 * 1024;

/// The most messages accepted in one rolling hour.
pub const MAX_PER_HOUR: usize = 600;

/// One message from a blocked sender in a group chat.
#[derive(Clone, Debug, PartialEq)]
pub struct UnpairedMessage<'a> {
    /// The channel (`telegram`, …).
    pub channel: &'a str,
    /// The bot account on that channel.
    pub account_id: &'a str,
    /// The group chat.
    pub chat_id: &'a str,
    /// The channel's own message id.
    pub message_id: &'a str,
    /// The sender's id.
    pub user_id: &'a str,
    /// The sender's display name.
    pub user_display: &'a str,
    /// The text.
    pub text: &'a str,
    /// When it was sent (Unix seconds).
    pub timestamp: f64,
}

impl UnpairedMessage<'_> {
    /// The pending source record (spec 02 §2.12 step 2).
    pub fn record(&self, utc_offset_seconds: i32) -> SourceRecord {
        let stamp = python_float(self.timestamp);
        let joined = [self.channel, self.account_id, self.chat_id, self.message_id, self.user_id, &stamp, self.text]
            .join("\u{1f}");
        let digest = Sha256::digest(joined.as_bytes());
        let id: String = digest.iter().take(12).map(|byte| format!("{byte:02x}")).collect();
        let mut record = SourceRecord::new(
            format!("channel-{}", quote_path_component(self.channel)),
            quote_path_component(&format!("{}:{}", self.account_id, self.chat_id)),
            id,
            (self.timestamp * 1000.0) as i64,
            "user",
            self.text,
        );
        record.timestamp = iso8601(self.timestamp, utc_offset_seconds);
        record.speaker_id = Some(self.user_id.to_owned()).filter(|id| !id.is_empty());
        record.speaker_display = Some(self.user_display.to_owned()).filter(|name| !name.is_empty());
        record.speaker_kind = "human".to_owned();
        record.trust_state = TrustState::Pending.as_str().to_owned();
        record
    }
}

/// Python's `repr(float)` for the stamps this sees: integral values keep `.0`.
fn python_float(value: f64) -> String {
    if value.is_finite() && value.fract() == 0.0 && value.abs() < 1e16 {
        format!("{value:.1}")
    } else {
        format!("{value}")
    }
}

impl Runtime {
    /// Archive a blocked sender's group message as a pending source; `None` when it is
    /// refused (disabled, empty, too large, over the quota). On an append failure the
    /// quota file is restored and the error returned.
    pub fn archive_unpaired_group_message(&self, message: &UnpairedMessage<'_>) -> Result<Option<String>, PassError> {
        if !self.enabled() || message.text.is_empty() {
            return Ok(None);
        }
        let identity = message.channel.len()
            + message.account_id.len()
            + message.chat_id.len()
            + message.user_id.len()
            + message.user_display.len();
        if identity > MAX_IDENTITY_BYTES {
            return Ok(None);
        }
        let workspace = self.workspace();
        let lock = workspace.lock(BACKGROUND_LOCK_TIMEOUT)?;
        let size = message.text.len();
        let now = self.clock().now();
        let quota_path = Path::new(workspace.runtime_dir_name()).join(QUOTA_FILE);
        let prior = workspace.vfs().read(&quota_path).ok();
        let mut accepted: Vec<f64> = prior
            .as_deref()
            .and_then(|bytes| serde_json::from_slice::<Value>(bytes).ok())
            .filter(|value| value.get("version").and_then(Value::as_i64) == Some(1))
            .and_then(|value| {
                value.get("accepted_at")?.as_array().map(|a| a.iter().filter_map(Value::as_f64).collect())
            })
            .unwrap_or_default();
        accepted.retain(|at| now - at < 3600.0);
        let archived = channel_bytes(&workspace.root().join("sources"));
        if size > MAX_MESSAGE_BYTES
            || archived + size as u64 + RESERVE_BYTES > MAX_CHANNEL_BYTES
            || accepted.len() >= MAX_PER_HOUR
        {
            return Ok(None);
        }
        accepted.push(now);
        let mut quota = json!({"version": 1, "accepted_at": accepted}).to_string();
        quota.push('\n');
        scriptorium_transaction::write_atomic(workspace.vfs(), &quota_path, quota.as_bytes())
            .map_err(|error| PassError::Store(state_error(error, "cannot write the unpaired quota")))?;
        let record = message.record(self.utc_offset_seconds());
        let appended = plan_append(std::slice::from_ref(&record), &workspace.archive_tree())
            .map_err(|error| TxError::new(TxCode::InvalidArgument, error.message().to_owned()))
            .and_then(|plan| {
                let changes: Changes = plan.files.into_iter().map(|file| (file.path, Some(file.bytes))).collect();
                if changes.is_empty() { Ok(()) } else { workspace.install(&lock, &changes).map(drop) }
            });
        if let Err(error) = appended {
            // Give the quota slot back: the prior bytes, or no file.
            let _ = match &prior {
                Some(bytes) => scriptorium_transaction::write_atomic(workspace.vfs(), &quota_path, bytes),
                None => std::fs::remove_file(workspace.root().join(&quota_path)),
            };
            return Err(error.into());
        }
        Ok(Some(record.source_id()))
    }
}

/// The bytes of every file under `sources/channel-*`.
fn channel_bytes(sources: &Path) -> u64 {
    fn size(path: &Path) -> u64 {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => std::fs::read_dir(path)
                .map(|entries| entries.filter_map(Result::ok).map(|entry| size(&entry.path())).sum())
                .unwrap_or(0),
            Ok(meta) if meta.is_file() => meta.len(),
            _ => 0,
        }
    }
    let Ok(entries) = std::fs::read_dir(sources) else { return 0 };
    entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("channel-"))
        .map(|entry| size(&entry.path()))
        .sum()
}
