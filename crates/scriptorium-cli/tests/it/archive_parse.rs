//! `scriptorium archive parse`: JSON equal to the golden vectors' `expected.scan`,
//! the human summary, the default relative path, and the one-line errors.

use serde_json::Value;

use crate::{THREAD_1, TempDir, TestResult, complete_archive, run, scriptorium, vectors};

/// Every `archive_parse` vector with a scan: `--json` prints exactly `expected.scan`,
/// and the exit status is 0 for a complete scan, 1 for an incomplete one.
#[test]
fn json_equals_every_vector_scan() -> TestResult {
    let home = TempDir::new()?;
    let mut compared = 0;
    let mut cases: Vec<_> = std::fs::read_dir(vectors().join("archive_parse"))?.collect::<Result<_, _>>()?;
    cases.sort_by_key(|entry| entry.file_name());
    for case in cases {
        let dir = case.path();
        let input: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("input.json"))?)?;
        let expected: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json"))?)?;
        let Some(want) = expected.get("scan").filter(|scan| !scan.is_null()) else { continue };
        let archive = input.get("archive").and_then(Value::as_str).unwrap_or("archive.md");
        let relative_path = input.get("relative_path").and_then(Value::as_str).ok_or("input without relative_path")?;
        let out = run(scriptorium(home.path())
            .args(["archive", "parse", "--json", "--relative-path", relative_path])
            .arg(dir.join(archive)))?;
        let name = dir.display();
        assert_eq!(&out.json()?, want, "{name}: scan differs");
        let complete = want.get("complete").and_then(Value::as_bool).ok_or("scan without complete")?;
        assert_eq!(out.code, Some(if complete { 0 } else { 1 }), "{name}: exit status; stderr {}", out.stderr);
        assert!(out.stderr.is_empty(), "{name}: stderr {:?}", out.stderr);
        compared += 1;
    }
    // The vectors hold 48 archive_parse cases; guard against silently comparing none.
    assert!(compared >= 40, "only {compared} vectors compared");
    Ok(())
}

/// Without `--relative-path` the path below the workspace is used, however FILE is
/// spelled: here, relative to a current directory inside `_v2/`.
#[test]
fn default_relative_path_is_found_from_inside_the_workspace() -> TestResult {
    let ws = TempDir::new()?;
    ws.write(THREAD_1, &complete_archive()?)?;
    let out = run(scriptorium(ws.path()).current_dir(ws.path().join("sources/openprogram/_v2")).args([
        "archive",
        "parse",
        "thread-1.md",
    ]))?;
    assert_eq!(out.code, Some(0), "stderr {}", out.stderr);
    assert!(
        out.stdout.starts_with("sources/openprogram/_v2/thread-1.md: v2 archive, 3 frames, complete\n"),
        "{}",
        out.stdout
    );
    // The same bytes at a path whose frames do not belong there stop at the first frame.
    let moved = ws.write("sources/openprogram/_v2/other.md", &complete_archive()?)?;
    let out = run(scriptorium(ws.path()).args(["archive", "parse"]).arg(&moved))?;
    assert_eq!(out.code, Some(1));
    assert!(out.stdout.contains("stopped at line 3 (byte 40): ARCHIVE_STOP_WRONG_ARCHIVE"), "{}", out.stdout);
    Ok(())
}

/// A truncated archive: exit 1, the 1-based line where the scan stopped, the reason
/// code, and the frames before it.
#[test]
fn truncated_archive_names_the_line_and_reason() -> TestResult {
    let ws = TempDir::new()?;
    let mut bytes = complete_archive()?;
    bytes.pop(); // The last record line loses its LF: the file ends inside a frame.
    let path = ws.write(THREAD_1, &bytes)?;
    let text = String::from_utf8(bytes)?;
    let third_anchor = text.split('\n').position(|l| l == "<a id=\"source-f60bf0279f2f4149\"></a>").ok_or("anchor")?;
    let out = run(scriptorium(ws.path()).args(["archive", "parse"]).arg(&path))?;
    assert_eq!(out.code, Some(1));
    let want = format!("2 frames, stopped at line {}", third_anchor + 1);
    assert!(out.stdout.contains(&want), "want {want:?} in {}", out.stdout);
    assert!(out.stdout.contains("ARCHIVE_STOP_TRUNCATED (the file ends inside a frame)"), "{}", out.stdout);
    let json = run(scriptorium(ws.path()).args(["archive", "parse", "--json"]).arg(&path))?.json()?;
    assert_eq!(json["complete"], false);
    assert_eq!(json["stopped_at_line"], third_anchor);
    assert_eq!(json["frames"].as_array().map(Vec::len), Some(2));
    Ok(())
}

/// Invalid UTF-8 after valid frames is a scan stop (exit 1), not an input error.
#[test]
fn partly_valid_utf8_reports_a_not_utf8_stop() -> TestResult {
    let ws = TempDir::new()?;
    let mut bytes = complete_archive()?;
    // The file ends with the last record line's LF; the LF added here makes the
    // terminator line, so the bad bytes start where a fourth frame would.
    bytes.extend_from_slice(b"\n\xff\xfe broken\n");
    let path = ws.write(THREAD_1, &bytes)?;
    let out = run(scriptorium(ws.path()).args(["archive", "parse"]).arg(&path))?;
    assert_eq!(out.code, Some(1), "stderr {}", out.stderr);
    assert!(out.stdout.contains("3 frames, stopped at line"), "{}", out.stdout);
    assert!(out.stdout.contains("ARCHIVE_STOP_NOT_UTF8"), "{}", out.stdout);
    Ok(())
}

/// Bytes with no valid line at all are not an archive: one error line, exit 2.
#[test]
fn binary_file_is_a_not_utf8_error() -> TestResult {
    let ws = TempDir::new()?;
    let path = ws.write(THREAD_1, b"\x89PNG\xff\xfe\x00\x01")?;
    let out = run(scriptorium(ws.path()).args(["archive", "parse"]).arg(&path))?;
    assert_eq!(out.code, Some(2));
    assert_eq!(out.error_code()?, "CLI_NOT_UTF8");
    assert!(out.stdout.is_empty());
    // A legacy archive must decode entirely: its reader works on text.
    let legacy = ws.write("sources/openprogram/old.md", b"# old\n\n\xff\n")?;
    let out = run(scriptorium(ws.path()).args(["archive", "parse"]).arg(&legacy))?;
    assert_eq!((out.code, out.error_code()?), (Some(2), "CLI_NOT_UTF8"));
    Ok(())
}

#[test]
fn missing_file_is_one_error_line() -> TestResult {
    let ws = TempDir::new()?;
    let out = run(scriptorium(ws.path()).args(["archive", "parse"]).arg(ws.path().join("sources/nope.md")))?;
    assert_eq!(out.code, Some(2));
    assert_eq!(out.error_code()?, "CLI_FILE_NOT_FOUND");
    assert!(!out.stderr.contains("panicked") && !out.stderr.contains("backtrace"), "{}", out.stderr);
    Ok(())
}

#[test]
fn directory_or_non_markdown_file_is_not_an_archive() -> TestResult {
    let ws = TempDir::new()?;
    ws.write(THREAD_1, &complete_archive()?)?;
    let out = run(scriptorium(ws.path()).args(["archive", "parse"]).arg(ws.path().join("sources")))?;
    assert_eq!((out.code, out.error_code()?), (Some(2), "CLI_NOT_AN_ARCHIVE"));
    let text = ws.write("notes.txt", b"hello\n")?;
    let out = run(scriptorium(ws.path()).args(["archive", "parse"]).arg(&text))?;
    assert_eq!((out.code, out.error_code()?), (Some(2), "CLI_NOT_AN_ARCHIVE"));
    // `--relative-path` names the archive, whatever the file on disk is called.
    let out = run(scriptorium(ws.path()).args(["archive", "parse", "--relative-path", THREAD_1]).arg(&text))?;
    assert_eq!(out.code, Some(1), "stderr {}", out.stderr);
    assert!(out.stdout.contains("ARCHIVE_STOP_MISSING_MARKER"), "{}", out.stdout);
    Ok(())
}

/// A legacy path lists the records the legacy reader finds, as text and as JSON: the
/// same events, in the same order, as the vector's `bm25_events`.
#[test]
fn legacy_archive_lists_its_records() -> TestResult {
    let home = TempDir::new()?;
    let case = vectors().join("legacy_source_parse/legacy-provider-file");
    let file = case.join("archive.md");
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(case.join("expected.json"))?)?;
    let out = run(scriptorium(home.path())
        .args(["archive", "parse", "--relative-path", "sources/openprogram/old-thread.md"])
        .arg(&file))?;
    assert_eq!(out.code, Some(0), "stderr {}", out.stderr);
    assert!(out.stdout.starts_with("sources/openprogram/old-thread.md: legacy archive"), "{}", out.stdout);
    assert!(
        out.stdout.contains("line 5: openprogram/old-thread/m1 (untrusted speaker hint: Dave (u42))\n"),
        "{}",
        out.stdout
    );
    let json = run(scriptorium(home.path())
        .args(["archive", "parse", "--json", "--relative-path", "sources/openprogram/old-thread.md"])
        .arg(&file))?
    .json()?;
    assert_eq!(json["kind"], "legacy");
    let got: Vec<(&Value, &Value)> =
        json["records"].as_array().ok_or("records")?.iter().map(|r| (&r["event_id"], &r["line"])).collect();
    let want: Vec<(&Value, &Value)> =
        expected["bm25_events"].as_array().ok_or("bm25_events")?.iter().map(|e| (&e["event_id"], &e["line"])).collect();
    assert_eq!(got, want);
    assert!(got.len() >= 5, "{got:?}");
    Ok(())
}

#[test]
fn bad_usage_is_one_error_line() -> TestResult {
    let home = TempDir::new()?;
    for args in [&[][..], &["archive"][..], &["archive", "parse"][..], &["frobnicate"][..], &["check", "--bogus"][..]] {
        let out = run(scriptorium(home.path()).args(args))?;
        assert_eq!(out.code, Some(2), "{args:?}");
        assert_eq!(out.error_code()?, "CLI_USAGE", "{args:?}");
    }
    let help = run(scriptorium(home.path()).arg("--help"))?;
    assert_eq!(help.code, Some(0));
    assert!(help.stdout.contains("check"), "{}", help.stdout);
    Ok(())
}
