//! Unified-diff parsing and applying: every rule of spec 02 §4.2 Form A, plus a property
//! test that a diff written by a tiny diff writer applies back to the edited file.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::{Patch, apply_patch};
use crate::error::ErrorCode;

type Stage = BTreeMap<String, Vec<u8>>;

fn stage(files: &[(&str, &str)]) -> Stage {
    files.iter().map(|(path, text)| ((*path).to_owned(), text.as_bytes().to_vec())).collect()
}

/// Apply and return every touched file as text (`None` = deleted), in changed order.
#[track_caller]
fn check_ok(stage: &Stage, patch: &str) -> Vec<(String, Option<String>)> {
    match apply_patch(stage, patch) {
        Ok(result) => result
            .files
            .into_iter()
            .map(|(path, bytes)| (path.into_string(), bytes.map(|b| String::from_utf8_lossy(&b).into_owned())))
            .collect(),
        Err(e) => panic!("refused: {e} {:?}", e.details()),
    }
}

/// Apply and return the one touched file's new text.
#[track_caller]
fn check_one(stage: &Stage, patch: &str) -> Option<String> {
    let mut files = check_ok(stage, patch);
    assert_eq!(files.len(), 1, "{files:?}");
    files.pop().and_then(|(_, text)| text)
}

/// Apply, expecting a refusal; return its code, message, path and details.
#[track_caller]
fn check_err(stage: &Stage, patch: &str) -> (ErrorCode, String, Option<String>, Value) {
    match apply_patch(stage, patch) {
        Ok(result) => panic!("applied: {result:?}"),
        Err(e) => (e.code(), e.message().to_owned(), e.path().map(str::to_owned), Value::Object(e.details().clone())),
    }
}

const NOTE: &str = "# Note\n\nline two\nline three\n\nline five\n";

fn note() -> Stage {
    stage(&[("topics/note.md", NOTE)])
}

#[test]
fn modifies_a_line() {
    let patch = "--- a/topics/note.md\n+++ b/topics/note.md\n@@ -3 +3 @@\n line two\n-line three\n+line 3\n";
    let patch = patch.replace("@@ -3 +3 @@", "@@ -3,2 +3,2 @@");
    assert_eq!(check_one(&note(), &patch).as_deref(), Some("# Note\n\nline two\nline 3\n\nline five\n"));
}

#[test]
fn blank_context_lines_may_lose_their_space() {
    let with_space = "--- a/topics/note.md\n+++ b/topics/note.md\n@@ -1,3 +1,3 @@\n # Note\n \n-line two\n+line 2\n";
    let without = with_space.replace("\n \n", "\n\n");
    let want = Some("# Note\n\nline 2\nline three\n\nline five\n".to_owned());
    assert_eq!(check_one(&note(), with_space), want);
    assert_eq!(check_one(&note(), &without), want);
}

#[test]
fn crlf_files_are_read_with_universal_newlines() {
    let crlf = stage(&[("topics/crlf.md", "# CRLF\r\n\r\nbody line\r\n")]);
    let patch = "--- a/topics/crlf.md\n+++ b/topics/crlf.md\n@@ -3 +3 @@\n-body line\n+new body\n";
    assert_eq!(check_one(&crlf, patch).as_deref(), Some("# CRLF\n\nnew body\n"));
    let old_mac = stage(&[("topics/cr.md", "a\rb\r")]);
    let patch = "--- a/topics/cr.md\n+++ b/topics/cr.md\n@@ -2 +2 @@\n-b\n+c\n";
    assert_eq!(check_one(&old_mac, patch).as_deref(), Some("a\nc\n"));
}

#[test]
fn a_crlf_patch_means_the_same_as_an_lf_patch() {
    let patch = "--- a/topics/note.md\r\n+++ b/topics/note.md\r\n@@ -1 +1 @@\r\n-# Note\r\n+# Top\r\n";
    assert_eq!(check_one(&note(), patch).as_deref(), Some(NOTE.replace("# Note", "# Top").as_str()));
}

#[test]
fn no_newline_marker_is_ignored_and_added_lines_end_in_newline() {
    let unterminated = stage(&[("topics/x.md", "a\nb")]);
    let patch = "--- a/topics/x.md\n+++ b/topics/x.md\n@@ -2 +2 @@\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n";
    assert_eq!(check_one(&unterminated, patch).as_deref(), Some("a\nc\n"));
    // A kept unterminated last line is ended before lines are added after it.
    let append = "--- a/topics/x.md\n+++ b/topics/x.md\n@@ -2 +2,2 @@\n b\n\\ No newline at end of file\n+c\n";
    assert_eq!(check_one(&unterminated, append).as_deref(), Some("a\nb\nc\n"));
    // Untouched, it keeps its missing newline.
    let first = "--- a/topics/x.md\n+++ b/topics/x.md\n@@ -1 +1 @@\n-a\n+A\n";
    assert_eq!(check_one(&unterminated, first).as_deref(), Some("A\nb"));
}

#[test]
fn creates_and_deletes_files() {
    let create = "--- /dev/null\n+++ b/topics/new/x.md\n@@ -0,0 +1,2 @@\n+# X\n+\n";
    assert_eq!(check_one(&note(), create).as_deref(), Some("# X\n\n"));
    let empty = stage(&[("topics/new/x.md", "")]);
    assert_eq!(check_one(&empty, create).as_deref(), Some("# X\n\n"), "an empty file may be created over");

    let delete = "--- a/topics/note.md\n+++ /dev/null\n@@ -1,6 +0,0 @@\n-# Note\n";
    assert_eq!(check_ok(&note(), delete), [("topics/note.md".to_owned(), None)]);
    let stale = "--- a/topics/note.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-# Other\n";
    assert_eq!(check_err(&note(), stale).0, ErrorCode::PatchConflict, "a delete checks its hunks");
}

#[test]
fn create_and_missing_file_conflicts() {
    let create = "--- /dev/null\n+++ b/topics/note.md\n@@ -0,0 +1 @@\n+x\n";
    assert_eq!(
        check_err(&note(), create),
        (
            ErrorCode::PatchConflict,
            "patch creates a file that already exists".into(),
            Some("topics/note.md".into()),
            json!({})
        )
    );
    let modify = "--- a/topics/none.md\n+++ b/topics/none.md\n@@ -1 +1 @@\n-a\n+b\n";
    let (code, message, path, _) = check_err(&note(), modify);
    assert_eq!(
        (code, message.as_str(), path.as_deref()),
        (ErrorCode::PatchConflict, "patch modifies a file that does not exist", Some("topics/none.md"))
    );
    let delete = "--- a/topics/none.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n";
    assert_eq!(check_err(&note(), delete).1, "patch deletes a file that does not exist");
}

#[test]
fn hunks_apply_in_start_order() {
    let patch = "--- a/topics/note.md\n+++ b/topics/note.md\n@@ -6,1 +6,1 @@\n-line five\n+line 5\n@@ -1,1 +1,1 @@\n-# Note\n+# Notes\n";
    assert_eq!(check_one(&note(), patch).as_deref(), Some("# Notes\n\nline two\nline three\n\nline 5\n"));
}

#[test]
fn an_insertion_after_a_line_sorts_after_the_hunk_at_that_line() {
    let patch =
        "--- a/topics/note.md\n+++ b/topics/note.md\n@@ -3,0 +4 @@\n+inserted\n@@ -3 +3 @@\n-line two\n+line 2\n";
    assert_eq!(check_one(&note(), patch), Some(NOTE.replace("line two\n", "line 2\ninserted\n")));
}

#[test]
fn overlapping_hunks_conflict() {
    let patch =
        "--- a/topics/note.md\n+++ b/topics/note.md\n@@ -1,2 +1,2 @@\n-# Note\n+# N\n \n@@ -2,1 +2,1 @@\n-\n+x\n";
    assert_eq!(
        check_err(&note(), patch),
        (ErrorCode::PatchConflict, "overlapping patch hunks".into(), Some("topics/note.md".into()), json!({}))
    );
}

#[test]
fn mismatched_context_reports_line_expected_and_found() {
    let patch = "--- a/topics/note.md\n+++ b/topics/note.md\n@@ -3,2 +3,2 @@\n line two\n-line 3\n+line three\n";
    let (code, message, path, details) = check_err(&note(), patch);
    assert_eq!(
        (code, message.as_str(), path.as_deref()),
        (ErrorCode::PatchConflict, "patch context does not match file contents", Some("topics/note.md"))
    );
    assert_eq!(details, json!({"line": 4, "expected": "line 3", "found": "line three"}));
}

#[test]
fn running_past_the_end_conflicts() {
    let past = "--- a/topics/note.md\n+++ b/topics/note.md\n@@ -6,2 +6,2 @@\n line five\n-line six\n";
    let (code, _, _, details) = check_err(&note(), past);
    assert_eq!((code, details), (ErrorCode::PatchConflict, json!({"line": 7, "expected": "line six"})));
    let far = "--- a/topics/note.md\n+++ b/topics/note.md\n@@ -40 +40 @@\n-x\n+y\n";
    assert_eq!(check_err(&note(), far).3, json!({"line": 40}));
    // Appending after the last line is no conflict: `-6,0` means "after line 6".
    let append = "--- a/topics/note.md\n+++ b/topics/note.md\n@@ -6,0 +7 @@\n+line six\n";
    assert_eq!(check_one(&note(), append), Some(format!("{NOTE}line six\n")));
}

#[test]
fn header_counts_are_not_checked() {
    let patch = "--- a/topics/note.md\n+++ b/topics/note.md\n@@ -3,99 +3,1 @@\n-line two\n+LINE TWO\n";
    assert_eq!(check_one(&note(), patch), Some(NOTE.replace("line two", "LINE TWO")));
}

#[test]
fn prefixes_timestamps_and_git_headers_are_stripped() {
    let bare =
        "--- topics/note.md\t2024-01-01 00:00:00\n+++ topics/note.md\t2024-01-02\n@@ -1 +1 @@\n-# Note\n+# Note!\n";
    assert_eq!(check_one(&note(), bare), Some(NOTE.replace("# Note", "# Note!")));
    let git = "diff --git a/topics/note.md b/topics/note.md\nindex 123..456 100644\n--- a/topics/note.md\n+++ b/topics/note.md\n@@ -1 +1 @@ # Note\n-# Note\n+# Top\n";
    assert_eq!(check_one(&note(), git), Some(NOTE.replace("# Note", "# Top")));
    let dotted = "--- a/topics/./note.md\n+++ b/topics/note.md\n@@ -1 +1 @@\n-# Note\n+# Top\n";
    assert_eq!(check_ok(&note(), dotted).first().map(|(path, _)| path.as_str()), Some("topics/note.md"));
}

#[test]
fn two_files_are_reported_in_sorted_order() {
    let files = stage(&[("topics/a.md", "a\n"), ("topics/b.md", "b\n")]);
    let patch = "--- a/topics/b.md\n+++ b/topics/b.md\n@@ -1 +1 @@\n-b\n+B\n--- a/topics/a.md\n+++ b/topics/a.md\n@@ -1 +1 @@\n-a\n+A\n";
    assert_eq!(
        check_ok(&files, patch),
        [("topics/a.md".to_owned(), Some("A\n".to_owned())), ("topics/b.md".to_owned(), Some("B\n".to_owned()))]
    );
}

#[test]
fn a_second_section_sees_the_first() {
    let patch = "--- a/topics/note.md\n+++ b/topics/note.md\n@@ -1 +1 @@\n-# Note\n+# One\n--- a/topics/note.md\n+++ b/topics/note.md\n@@ -1 +1 @@\n-# One\n+# Two\n";
    assert_eq!(check_one(&note(), patch), Some(NOTE.replace("# Note", "# Two")));
}

#[test]
fn a_removed_line_that_looks_like_a_header_stays_in_its_hunk() {
    let files = stage(&[("topics/x.md", "-- a\nb\n")]);
    let patch = "--- a/topics/x.md\n+++ b/topics/x.md\n@@ -1,2 +1 @@\n--- a\n b\n";
    assert_eq!(check_one(&files, patch).as_deref(), Some("b\n"));
}

#[test]
fn refused_headers_are_invalid_arguments() {
    let cases = [
        (
            "diff --git a/topics/a.md b/topics/b.md\nrename from topics/a.md\nrename to topics/b.md\n",
            "patch renames are not supported",
        ),
        ("copy from topics/a.md\ncopy to topics/b.md\n", "patch copies are not supported"),
        ("old mode 100644\nnew mode 100755\n", "patch mode changes are not supported"),
        (
            "diff --git a/topics/l.md b/topics/l.md\nnew file mode 120000\n--- /dev/null\n+++ b/topics/l.md\n@@ -0,0 +1 @@\n+target\n",
            "patch symlinks are not supported",
        ),
        ("deleted file mode 120000\n", "patch symlinks are not supported"),
        (
            "index 1..2 120000\n--- a/topics/l.md\n+++ b/topics/l.md\n@@ -1 +1 @@\n-a\n+b\n",
            "patch symlinks are not supported",
        ),
        ("Binary files a/topics/x.md and b/topics/x.md differ\n", "binary patches are not supported"),
        ("diff --git a/topics/x.md b/topics/x.md\nGIT binary patch\nliteral 0\n", "binary patches are not supported"),
        (
            "--- a/topics/note.md\n+++ b/topics/other.md\n@@ -1 +1 @@\n-# Note\n+# N\n",
            "patch renames are not supported",
        ),
    ];
    for (patch, want) in cases {
        let (code, message, _, details) = check_err(&note(), patch);
        assert_eq!((code, message.as_str(), details), (ErrorCode::InvalidArgument, want, json!({})), "{patch:?}");
    }
    // Creating a regular file through git's header is fine.
    let git_new = "diff --git a/topics/n.md b/topics/n.md\nnew file mode 100644\n--- /dev/null\n+++ b/topics/n.md\n@@ -0,0 +1 @@\n+n\n";
    assert_eq!(check_one(&note(), git_new).as_deref(), Some("n\n"));
}

#[test]
fn malformed_patches_are_invalid_arguments() {
    let cases: [(&str, &str, Option<&str>); 10] = [
        ("", "patch is empty", None),
        (" \n\t\n", "patch is empty", None),
        ("just words\n", "patch contains no file sections", None),
        ("@@ -1 +1 @@\n-a\n+b\n", "patch hunk outside a file section", None),
        ("--- a/topics/note.md\n@@ -1 +1 @@\n-# Note\n+# X\n", "malformed patch: --- without +++", None),
        ("--- a/topics/note.md\n+++ b/topics/note.md\n", "patch file section has no hunks", Some("topics/note.md")),
        (
            "--- a/topics/note.md\n+++ b/topics/note.md\n@@ -x +1 @@\n",
            "malformed patch hunk header",
            Some("topics/note.md"),
        ),
        (
            "--- a/topics/note.md\n+++ b/topics/note.md\n@@ -1 +1\n",
            "malformed patch hunk header",
            Some("topics/note.md"),
        ),
        ("--- /dev/null\n+++ /dev/null\n@@ -0,0 +0,0 @@\n", "patch file section names no file", None),
        (
            "--- a/topics/note.md\n+++ b/topics/note.md\n@@ -1 +1 @@\n-# Note\ngarbage\n+# X\n",
            "patch line outside a hunk",
            Some("topics/note.md"),
        ),
    ];
    for (patch, want, path) in cases {
        let (code, message, got_path, _) = check_err(&note(), patch);
        assert_eq!(
            (code, message.as_str(), got_path.as_deref()),
            (ErrorCode::InvalidArgument, want, path),
            "{patch:?}"
        );
    }
    let huge = format!("--- a/topics/x.md\n+++ b/topics/x.md\n@@ -1 +1 @@\n+{}\n", "x".repeat(super::MAX_PATCH_BYTES));
    assert_eq!(check_err(&note(), &huge).0, ErrorCode::InvalidArgument);
}

#[test]
fn paths_follow_the_writable_path_rule() {
    let outside = "--- /dev/null\n+++ b/../x.md\n@@ -0,0 +1 @@\n+x\n";
    assert_eq!(
        check_err(&note(), outside),
        (ErrorCode::PathOutsideWorkspace, "path escapes the workspace".into(), Some("../x.md".into()), json!({}))
    );
    let not_markdown = "--- /dev/null\n+++ b/topics/x.txt\n@@ -0,0 +1 @@\n+x\n";
    assert_eq!(
        check_err(&note(), not_markdown),
        (ErrorCode::ReadOnlyPath, "only topics/**/*.md is writable".into(), Some("topics/x.txt".into()), json!({}))
    );
    let runtime = "--- a/.scriptorium/runtime.json\n+++ b/.scriptorium/runtime.json\n@@ -1 +1 @@\n-a\n+b\n";
    assert_eq!(check_err(&note(), runtime).0, ErrorCode::PathOutsideWorkspace);
}

#[test]
fn a_non_utf8_topic_is_an_invalid_topic() {
    let files: Stage = BTreeMap::from([("topics/x.md".to_owned(), vec![0xff, b'\n'])]);
    let patch = "--- a/topics/x.md\n+++ b/topics/x.md\n@@ -1 +1 @@\n-a\n+b\n";
    assert_eq!(check_err(&files, patch).0, ErrorCode::InvalidTopicFormat);
}

#[test]
fn parse_exposes_paths_in_patch_order() -> Result<(), crate::Error> {
    let patch = Patch::parse(
        "--- a/topics/b.md\n+++ b/topics/b.md\n@@ -1 +1 @@\n-b\n+B\n--- /dev/null\n+++ b/topics/a.md\n@@ -0,0 +1 @@\n+A\n",
    )?;
    let paths: Vec<&str> = patch.paths().map(|path| path.as_str()).collect();
    assert_eq!(paths, ["topics/b.md", "topics/a.md"]);
    Ok(())
}

/// One step of an edit script over the old file's lines.
#[derive(Clone, Debug)]
enum Edit {
    Keep,
    Delete,
    Insert(String),
}

/// A tiny unified-diff writer: hunks with `context` lines around each change, numbered
/// as GNU diff numbers them (`-s,0` = after line s), blank context written as an empty
/// line when `bare_blanks`, and the hunks emitted in `reverse` order when asked.
fn write_diff(old: &[String], script: &[Edit], context: usize, bare_blanks: bool, reverse: bool) -> String {
    // (old index, new index, kind, text) per script step.
    let mut rows = Vec::new();
    let (mut o, mut n) = (0, 0);
    let mut old_lines = old.iter();
    for edit in script {
        match edit {
            Edit::Keep => {
                rows.push((o, n, ' ', old_lines.next().cloned().unwrap_or_default()));
                o += 1;
                n += 1;
            }
            Edit::Delete => {
                rows.push((o, n, '-', old_lines.next().cloned().unwrap_or_default()));
                o += 1;
            }
            Edit::Insert(text) => {
                rows.push((o, n, '+', text.clone()));
                n += 1;
            }
        }
    }
    let changed: Vec<usize> = rows.iter().enumerate().filter(|(_, row)| row.2 != ' ').map(|(i, _)| i).collect();
    let mut hunks: Vec<(usize, usize)> = Vec::new();
    for &i in &changed {
        let from = i.saturating_sub(context);
        let to = (i + context + 1).min(rows.len());
        match hunks.last_mut() {
            Some(last) if from <= last.1 => last.1 = to,
            _ => hunks.push((from, to)),
        }
    }
    let mut rendered: Vec<String> = hunks
        .iter()
        .map(|&(from, to)| {
            let body = &rows[from..to];
            let old_count = body.iter().filter(|row| row.2 != '+').count();
            let new_count = body.iter().filter(|row| row.2 != '-').count();
            let (old_first, new_first) = (body[0].0, body[0].1);
            // GNU numbering: an empty side names the line before the hunk.
            let old_start = if old_count == 0 { old_first } else { old_first + 1 };
            let new_start = if new_count == 0 { new_first } else { new_first + 1 };
            let mut text = format!("@@ -{old_start},{old_count} +{new_start},{new_count} @@\n");
            for (_, _, kind, line) in body {
                if *kind == ' ' && line.is_empty() && bare_blanks {
                    text.push('\n');
                } else {
                    text.push_str(&format!("{kind}{line}\n"));
                }
            }
            text
        })
        .collect();
    if reverse {
        rendered.reverse();
    }
    format!("--- a/topics/p.md\n+++ b/topics/p.md\n{}", rendered.concat())
}

fn line() -> impl Strategy<Value = String> {
    // No leading `+`/`-`, so no body line can read as a `---`/`+++` header pair.
    proptest::string::string_regex("([a-zé #][a-zé #-]{0,5})?").expect("a valid regex")
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![4 => Just(Edit::Keep), 1 => Just(Edit::Delete), 1 => line().prop_map(Edit::Insert)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn written_diffs_apply_back(
        old in proptest::collection::vec(line(), 0..12),
        steps in proptest::collection::vec(edit(), 0..24),
        context in 0_usize..4,
        bare_blanks: bool,
        reverse: bool,
    ) {
        // Fit the script to the file: keeps and deletes consume old lines, the rest are kept.
        let mut script = Vec::new();
        let mut consumed = 0;
        for step in steps {
            match step {
                Edit::Keep | Edit::Delete if consumed == old.len() => {}
                Edit::Keep | Edit::Delete => { consumed += 1; script.push(step); }
                Edit::Insert(_) => script.push(step),
            }
        }
        script.extend(std::iter::repeat_n(Edit::Keep, old.len() - consumed));
        let mut new = Vec::new();
        let mut old_lines = old.iter();
        for step in &script {
            match step {
                Edit::Keep => new.extend(old_lines.next().cloned()),
                Edit::Delete => { old_lines.next(); }
                Edit::Insert(text) => new.push(text.clone()),
            }
        }
        prop_assume!(script.iter().any(|step| !matches!(step, Edit::Keep)));

        let join = |lines: &[String]| lines.iter().map(|l| format!("{l}\n")).collect::<String>();
        let files: Stage = BTreeMap::from([("topics/p.md".to_owned(), join(&old).into_bytes())]);
        let patch = write_diff(&old, &script, context, bare_blanks, reverse);
        let result = apply_patch(&files, &patch)
            .map_err(|e| TestCaseError::fail(format!("{e} {:?}\n{patch}", e.details())))?;
        let got = result.files.values().next().cloned().flatten().unwrap_or_default();
        prop_assert_eq!(String::from_utf8_lossy(&got), join(&new), "{}", patch);
    }
}
