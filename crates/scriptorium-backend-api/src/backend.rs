//! The `MemoryBackend` trait: every hook of spec 02 §1.1, each with its default.

use serde_json::Value;

use crate::tier::Tier;
use crate::tools::{Caller, ToolSpec};
use crate::types::{Message, ReorganizeReport, SessionFailure, WriteFailure};

/// The one contract an agent runtime calls. Every hook but [`MemoryBackend::name`] has
/// the spec's default, so an implementation overrides only what it does.
///
/// Hooks never take a conversation down: they return data (`""`, `None`, a report),
/// never an error, and never panic on any input.
pub trait MemoryBackend: Send + Sync {
    /// The backend's name (`"local"`, `"none"`), for selection and diagnostics.
    fn name(&self) -> &str;

    /// Whether the backend can run at all.
    fn is_available(&self) -> bool {
        true
    }

    /// Once per session before other hooks: remember `session_id` (the fallback for
    /// [`MemoryBackend::write`]) and get ready.
    fn initialize(&self, session_id: &str) {
        let _ = session_id;
    }

    /// Once after the last turn: force-write what the sessions still owe; the failures
    /// of those writes, if any.
    fn shutdown(&self) -> Vec<SessionFailure> {
        Vec::new()
    }

    /// The always-on memory for the system prompt, already fenced, or `""`.
    fn system_prompt(&self, tier: Option<Tier>) -> String {
        let _ = tier;
        String::new()
    }

    /// Automatic recall for one user turn, already fenced, or `""`.
    fn search(&self, query: &str, session_id: &str, tier: Option<Tier>) -> String {
        let _ = (query, session_id, tier);
        String::new()
    }

    /// Write what the session owes; `None` means nothing is owed (spec 02 §2.5).
    fn write(&self, messages: Option<&[Message]>, session_id: &str, force: bool) -> Option<WriteFailure> {
        let _ = (messages, session_id, force);
        None
    }

    /// Memory relevant to messages about to be discarded, already fenced, or `""`;
    /// nothing is stored.
    fn extract_before_discard(&self, messages: &[Message]) -> String {
        let _ = messages;
        String::new()
    }

    /// The nightly reorganize with `model` (the configured writer model when `None`).
    fn reorganize(&self, model: Option<&str>) -> ReorganizeReport {
        let _ = model;
        ReorganizeReport::status(crate::types::ReorganizeStatus::Skipped)
    }

    /// The model-facing tools this backend offers (spec 02 §7); none when memory is off,
    /// so a surface registers nothing.
    fn tools(&self) -> &'static [ToolSpec] {
        &[]
    }

    /// Run the tool `name` with the JSON object `arguments` for `caller`; the answer is
    /// always a string (output, notice or `TxError` JSON).
    fn call_tool(&self, name: &str, arguments: &Value, caller: &Caller) -> String {
        let _ = (arguments, caller);
        crate::tools::tx_error(&crate::Error::new(
            crate::ErrorCode::MemoryDisabled,
            format!("{name}: {}", crate::null::DISABLED_MESSAGE),
        ))
    }
}
