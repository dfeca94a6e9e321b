//! The two context events: `SessionStart` adds the fenced `core.md` (the backend's
//! `system_prompt`), `UserPromptSubmit` adds automatic recall for the prompt, fenced once.
//! The answer is Claude Code's structured output,
//! `{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`.
//!
//! This runs as a new process before every prompt, so recall is the backend's one-shot
//! `recall_once`: the persistent index and nothing else, no workspace handle, since opening
//! one waits for the write lock, which a background write pass holds through its model call.

use std::path::Path;

use scriptorium_backend_api::config::{BackendKind, MemoryConfig};
use scriptorium_backend_api::{LocalBackend, MemoryBackend, Tier, recall_once};
use serde_json::{Value, json};

use super::event::Event;

/// The hook output that adds `context` for `event`, or `None` when there is nothing to add.
pub(crate) fn output(event: Event, context: &str) -> Option<Value> {
    if context.trim().is_empty() {
        return None;
    }
    Some(json!({"hookSpecificOutput": {"hookEventName": event.claude_name(), "additionalContext": context}}))
}

/// The added context of a context event: `core.md` or recall for `prompt`, already fenced.
/// The local person at the terminal is the owner (spec 02 §5).
pub(crate) fn context(event: Event, root: &Path, config: MemoryConfig, prompt: Option<&str>) -> String {
    if config.backend == BackendKind::None {
        return String::new();
    }
    match event {
        // `system_prompt` reads `core.md` only; it opens nothing.
        Event::SessionStart => LocalBackend::new(root, None, config).system_prompt(Some(Tier::Owner)),
        Event::UserPromptSubmit => {
            prompt.map_or_else(String::new, |p| recall_once(root, p, Some(Tier::Owner), &config))
        }
        Event::Stop | Event::SessionEnd => String::new(),
    }
}
