//! The four Claude Code events we answer, by our kebab-case names or Claude Code's own.

/// A hook event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// `SessionStart`: `core.md` as added context.
    SessionStart,
    /// `UserPromptSubmit`: automatic recall for the prompt as added context.
    UserPromptSubmit,
    /// `Stop`: the turn ended; import it and start the unforced write hook.
    Stop,
    /// `SessionEnd`: import and start a forced write.
    SessionEnd,
}

impl Event {
    /// `session-start`, `SessionStart`, `session_start` … (case and separators ignored).
    pub(crate) fn parse(name: &str) -> Option<Event> {
        let key: String = name.chars().filter(|c| c.is_ascii_alphanumeric()).map(|c| c.to_ascii_lowercase()).collect();
        match key.as_str() {
            "sessionstart" => Some(Event::SessionStart),
            "userpromptsubmit" | "prompt" => Some(Event::UserPromptSubmit),
            "stop" => Some(Event::Stop),
            "sessionend" => Some(Event::SessionEnd),
            _ => None,
        }
    }

    /// Claude Code's name, as `hookSpecificOutput.hookEventName` must give it.
    pub(crate) fn claude_name(self) -> &'static str {
        match self {
            Event::SessionStart => "SessionStart",
            Event::UserPromptSubmit => "UserPromptSubmit",
            Event::Stop => "Stop",
            Event::SessionEnd => "SessionEnd",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Event;

    #[test]
    fn both_spellings_parse_to_the_same_event() {
        for (ours, theirs, event) in [
            ("session-start", "SessionStart", Event::SessionStart),
            ("user-prompt-submit", "UserPromptSubmit", Event::UserPromptSubmit),
            ("stop", "Stop", Event::Stop),
            ("session-end", "SessionEnd", Event::SessionEnd),
        ] {
            assert_eq!(Event::parse(ours), Some(event));
            assert_eq!(Event::parse(theirs), Some(event));
            assert_eq!(event.claude_name(), theirs);
        }
        assert_eq!(Event::parse("PreToolUse"), None);
        assert_eq!(Event::parse(""), None);
    }
}
