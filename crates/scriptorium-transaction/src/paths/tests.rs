//! The writable-path rule: normalization, escapes, private roots and read-only paths.

use super::{TopicPath, workspace_relative};
use crate::error::ErrorCode;

#[track_caller]
fn check_ok(raw: &str, want: &str) {
    match TopicPath::new(raw) {
        Ok(path) => assert_eq!(path.as_str(), want, "{raw:?}"),
        Err(e) => panic!("{raw:?} refused: {e}"),
    }
}

#[track_caller]
fn check_err(raw: &str, code: ErrorCode) {
    match TopicPath::new(raw) {
        Ok(path) => panic!("{raw:?} accepted as {path}"),
        Err(e) => {
            assert_eq!(e.code(), code, "{raw:?}: {e}");
            assert_eq!(e.path(), Some(raw), "the error names the path as given");
            assert!(e.details().is_empty());
        }
    }
}

#[test]
fn topic_files_are_normalized() {
    check_ok("topics/x.md", "topics/x.md");
    check_ok("topics/./x.md", "topics/x.md");
    check_ok("./topics/people//dave.md", "topics/people/dave.md");
    check_ok("topics/people/dave.md/", "topics/people/dave.md");
    check_ok("topics/a.b.md", "topics/a.b.md");
}

#[test]
fn escapes_are_outside_the_workspace() {
    check_err("../x.md", ErrorCode::PathOutsideWorkspace);
    check_err("topics/../topics/x.md", ErrorCode::PathOutsideWorkspace);
    check_err("/etc/passwd", ErrorCode::PathOutsideWorkspace);
    check_err("/topics/x.md", ErrorCode::PathOutsideWorkspace);
    check_err("topics/..", ErrorCode::PathOutsideWorkspace);
}

#[test]
fn runtime_state_and_history_are_never_reachable() {
    // Decision 6: the runtime directory (stage, quarantine), the install backup and Git.
    for raw in [".scriptorium/runtime.json", "./.scriptorium/stage/topics/x.md", ".scriptorium-block-backup/x.md"] {
        check_err(raw, ErrorCode::PathOutsideWorkspace);
    }
    check_err(".git/config", ErrorCode::PathOutsideWorkspace);
    assert_eq!(workspace_relative(".gitignore").ok().as_deref(), Some(".gitignore"));
}

#[test]
fn everything_but_topic_markdown_is_read_only() {
    for raw in ["sources/x.md", "core.md", "timeline/2024/01/01.md", "topics/x.txt", "topics/x.MD", "topics.md"] {
        check_err(raw, ErrorCode::ReadOnlyPath);
    }
    for raw in ["topics", "topics/", "topics/.md", "", "."] {
        check_err(raw, ErrorCode::ReadOnlyPath);
    }
}

#[test]
fn nul_is_an_invalid_argument() {
    check_err("topics/a\0.md", ErrorCode::InvalidArgument);
}

#[test]
fn workspace_relative_keeps_other_paths() {
    assert_eq!(workspace_relative("sources/./openprogram/x.md").ok().as_deref(), Some("sources/openprogram/x.md"));
    assert_eq!(workspace_relative("").ok().as_deref(), Some(""));
}

#[test]
fn internal_components_at_any_depth_are_outside_the_workspace() {
    // Issue 13 §1: `topics/.git/x.md` was installed, counted by `check` and never searched.
    for raw in
        ["topics/.git/x.md", "topics/.scriptorium/x.md", "topics/a/.nativemem/x.md", "topics/.scriptorium-x/y.md"]
    {
        check_err(raw, ErrorCode::PathOutsideWorkspace);
    }
}

#[test]
fn hidden_components_are_read_only() {
    for raw in ["topics/.hidden/x.md", "topics/.x.md", "topics/a/.b/c.md", "topics/.x.md.swp"] {
        check_err(raw, ErrorCode::ReadOnlyPath);
    }
    check_ok("topics/a.b/c.md", "topics/a.b/c.md");
}
