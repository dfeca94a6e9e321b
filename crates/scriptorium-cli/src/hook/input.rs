//! The JSON object Claude Code writes to a command hook's stdin (docs/hooks-claude-code.md):
//! the fields we read, each optional, so a missing or odd field means "nothing to do".

use std::io::Read as _;
use std::path::PathBuf;

use serde_json::Value;

/// More than any real hook input (a prompt of a few megabytes); the rest is not read.
const MAX_INPUT_BYTES: u64 = 32 << 20;

/// What one hook invocation tells us.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct HookInput {
    /// `session_id`.
    pub(crate) session_id: Option<String>,
    /// `transcript_path`: the session's JSONL file.
    pub(crate) transcript_path: Option<PathBuf>,
    /// `hook_event_name`.
    pub(crate) event_name: Option<String>,
    /// `prompt` (UserPromptSubmit).
    pub(crate) prompt: Option<String>,
    /// `source` (SessionStart) or `reason` (SessionEnd), for the log.
    pub(crate) why: Option<String>,
}

fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned)
}

impl HookInput {
    /// Parse the stdin text; anything but a JSON object is an error message.
    pub(crate) fn parse(text_in: &str) -> Result<HookInput, String> {
        if text_in.trim().is_empty() {
            return Err("no hook input on stdin".to_owned());
        }
        let value: Value = serde_json::from_str(text_in).map_err(|err| format!("hook input is not JSON: {err}"))?;
        if !value.is_object() {
            return Err("hook input is not a JSON object".to_owned());
        }
        Ok(HookInput {
            session_id: text(&value, "session_id"),
            transcript_path: text(&value, "transcript_path").map(PathBuf::from),
            event_name: text(&value, "hook_event_name"),
            prompt: text(&value, "prompt"),
            why: text(&value, "source").or_else(|| text(&value, "reason")),
        })
    }

    /// Read and parse stdin (bytes that are not UTF-8 are replaced, not refused).
    pub(crate) fn read_stdin() -> Result<HookInput, String> {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .take(MAX_INPUT_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|err| format!("cannot read stdin: {err}"))?;
        HookInput::parse(&String::from_utf8_lossy(&bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::HookInput;

    #[test]
    fn the_documented_fields_are_read_and_others_ignored() -> Result<(), String> {
        let input = HookInput::parse(
            r#"{"session_id":"abc","transcript_path":"/t/abc.jsonl","cwd":"/p","hook_event_name":"UserPromptSubmit",
                "prompt":"what tea?","permission_mode":"default","extra":{"x":1}}"#,
        )?;
        assert_eq!(input.session_id.as_deref(), Some("abc"));
        assert_eq!(input.transcript_path.as_deref(), Some(std::path::Path::new("/t/abc.jsonl")));
        assert_eq!(input.event_name.as_deref(), Some("UserPromptSubmit"));
        assert_eq!(input.prompt.as_deref(), Some("what tea?"));
        let end = HookInput::parse(r#"{"hook_event_name":"SessionEnd","reason":"logout","session_id":7}"#)?;
        assert_eq!(end.why.as_deref(), Some("logout"));
        assert_eq!(end.session_id, None, "a number is not a session id");
        Ok(())
    }

    #[test]
    fn anything_but_an_object_is_refused() {
        for bad in ["", "  ", "[]", "\"x\"", "{", "null"] {
            assert!(HookInput::parse(bad).is_err(), "{bad:?}");
        }
    }
}
