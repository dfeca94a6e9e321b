//! The two context events: `SessionStart` adds the fenced `core.md` (the backend's
//! `system_prompt`), `UserPromptSubmit` adds automatic recall for the prompt (the backend's
//! `search`, fenced once by it). The answer is Claude Code's structured output,
//! `{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`.
//!
//! This runs as a new process before every prompt, so the backend is built without the
//! file watcher (a watch costs more to start than one stat pass of the cached index saves).

use std::path::{Path, PathBuf};

use scriptorium_backend_api::config::{BackendKind, MemoryConfig};
use scriptorium_backend_api::{LocalBackend, MemoryBackend, Tier};
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
pub(crate) fn context(
    event: Event,
    root: &Path,
    sessions: Option<PathBuf>,
    config: MemoryConfig,
    session_id: &str,
    prompt: Option<&str>,
) -> String {
    if config.backend == BackendKind::None {
        return String::new();
    }
    let backend = LocalBackend::new(root, sessions, config).with_watcher(false);
    match event {
        // The local person at the terminal is the owner (spec 02 §5).
        Event::SessionStart => backend.system_prompt(Some(Tier::Owner)),
        Event::UserPromptSubmit => {
            prompt.map_or_else(String::new, |p| backend.search(p, session_id, Some(Tier::Owner)))
        }
        Event::Stop | Event::SessionEnd => String::new(),
    }
}
