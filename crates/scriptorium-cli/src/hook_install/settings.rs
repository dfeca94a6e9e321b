//! The merge itself, as pure functions on Claude Code's settings JSON (docs/hooks-claude-code.md):
//! `{"hooks": {Event: [{"matcher"?, "hooks": [{"type": "command", "command", "timeout"}]}]}}`.
//! A handler is ours when its command runs a program named `scriptorium` with the arguments
//! `hook claude-code`; everything else in the file is kept as it is.

use serde_json::{Map, Value, json};

/// One hook entry to install: the Claude Code event, our command line, the timeout (seconds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// `SessionStart`, `UserPromptSubmit`, `Stop` or `SessionEnd`.
    pub(crate) event: &'static str,
    /// The shell command Claude Code runs.
    pub(crate) command: String,
    /// Seconds before Claude Code cancels it.
    pub(crate) timeout: u64,
}

/// Why a settings file cannot be merged: its shape is not the documented one.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Shape(pub(crate) String);

/// The words of a shell command line, with single and double quotes and backslashes
/// undone; good enough to recognise our own commands, which `quote` wrote.
pub(crate) fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        out.push(word);
    }
    out
}

/// `word` quoted for a POSIX shell when it needs it.
pub(crate) fn quote(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

/// Whether a handler's command is one of ours.
pub(crate) fn is_ours(command: &str) -> bool {
    let words = words(command);
    let program = words.first().map(|w| w.rsplit(['/', '\\']).next().unwrap_or(w)).unwrap_or("");
    let program = program.strip_suffix(".exe").unwrap_or(program);
    program == "scriptorium"
        && words.get(1).map(String::as_str) == Some("hook")
        && words.get(2).map(String::as_str) == Some("claude-code")
}

fn handler_is_ours(handler: &Value) -> bool {
    handler.get("command").and_then(Value::as_str).is_some_and(is_ours)
}

/// The `hooks` object of `settings`, created when missing.
fn hooks_of(settings: &mut Value) -> Result<&mut Map<String, Value>, Shape> {
    let Value::Object(root) = settings else {
        return Err(Shape("the settings file is not a JSON object".to_owned()));
    };
    let hooks = root.entry("hooks").or_insert_with(|| Value::Object(Map::new()));
    match hooks {
        Value::Object(map) => Ok(map),
        _ => Err(Shape("`hooks` is not an object".to_owned())),
    }
}

/// `settings` without our handlers; a matcher group left with no handler goes, and so
/// does an event left with no group. Returns how many handlers were removed.
pub(crate) fn remove_ours(settings: &mut Value) -> Result<usize, Shape> {
    let hooks = hooks_of(settings)?;
    let mut removed = 0;
    let mut empty_events = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        let Value::Array(groups) = groups else {
            return Err(Shape(format!("`hooks.{event}` is not a list")));
        };
        let mut kept = Vec::with_capacity(groups.len());
        let mut here = 0;
        for mut group in std::mem::take(groups) {
            let Some(Value::Array(handlers)) = group.get_mut("hooks") else {
                kept.push(group);
                continue;
            };
            let before = handlers.len();
            handlers.retain(|handler| !handler_is_ours(handler));
            let gone = before - handlers.len();
            here += gone;
            // A group we emptied was ours; a group that was empty before is the user's.
            if !(gone > 0 && handlers.is_empty()) {
                kept.push(group);
            }
        }
        if kept.is_empty() && here > 0 {
            empty_events.push(event.clone());
        }
        removed += here;
        *groups = kept;
    }
    for event in empty_events {
        hooks.remove(&event);
    }
    Ok(removed)
}

/// `settings` with exactly our `entries` installed: any handler of ours is replaced, every
/// other hook kept. Installing the same entries twice gives the same value.
pub(crate) fn install(settings: &mut Value, entries: &[Entry]) -> Result<(), Shape> {
    remove_ours(settings)?;
    let hooks = hooks_of(settings)?;
    for entry in entries {
        let groups = hooks.entry(entry.event).or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(groups) = groups else {
            return Err(Shape(format!("`hooks.{}` is not a list", entry.event)));
        };
        groups.push(json!({"hooks": [{"type": "command", "command": entry.command, "timeout": entry.timeout}]}));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
