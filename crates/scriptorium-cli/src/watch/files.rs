//! Which changed paths are Claude Code transcripts (or directories that may hold them) of the person's conversation: a
//! `*.jsonl` file below a watched directory, not a subagent transcript (`agent-*.jsonl`,
//! `subagents/`), not tool output or memory (`tool-results/`, `memory/`), nothing hidden.
//! The importer's directory walk applies the same rule.

use std::path::{Component, Path};

/// Whether `path` (under one of `roots`) is a transcript to import, or a directory that
/// may hold some: a directory created while we watch can receive files before its own watch
/// is in place, so it is walked once.
pub(crate) fn wanted(path: &Path, roots: &[std::path::PathBuf]) -> bool {
    let Some(name) = path.file_name().and_then(|name| name.to_str()) else { return false };
    let is_dir = path.is_dir();
    if !is_dir && (!name.ends_with(".jsonl") || name.starts_with("agent-")) || name.starts_with('.') {
        return false;
    }
    let Some(relative) = roots.iter().find_map(|root| path.strip_prefix(root).ok()) else { return false };
    let mut dirs: Vec<Component<'_>> = relative.components().collect();
    if !is_dir {
        dirs.pop();
    }
    dirs.iter().all(|component| match component {
        Component::Normal(dir) => {
            let dir = dir.to_string_lossy();
            !dir.starts_with('.') && !matches!(dir.as_ref(), "subagents" | "tool-results" | "memory")
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::wanted;

    #[test]
    fn only_session_transcripts_count() {
        let roots = vec![PathBuf::from("/h/.claude/projects")];
        for (path, want) in [
            ("/h/.claude/projects/-home-a/0b7c.jsonl", true),
            ("/h/.claude/projects/-home-a/0b7c/subagents/agent-1.jsonl", false),
            ("/h/.claude/projects/-home-a/agent-1.jsonl", false),
            ("/h/.claude/projects/-home-a/0b7c/tool-results/x.jsonl", false),
            ("/h/.claude/projects/-home-a/0b7c.txt", false),
            ("/h/.claude/projects/.hidden/0b7c.jsonl", false),
            ("/elsewhere/0b7c.jsonl", false),
        ] {
            assert_eq!(wanted(Path::new(path), &roots), want, "{path}");
        }
    }
}
