//! Our own line format: the fields as documented, authority as given and never
//! invented, malformed lines reported with their number.

use scriptorium_writer_runtime::import::{Format, ProblemCode};
use scriptorium_writer_runtime::{Content, SessionStore, records};

use super::{fixtures, run, store, t, turns};
use crate::support::{TempDir, TestResult};

const SESSION: &str = "jsonl:agent-log";

#[test]
fn the_documented_fields_import_as_given() -> TestResult {
    let dir = TempDir::new("import-jsonl");
    let file = dir.path().join("agent-log.jsonl");
    std::fs::copy(fixtures("jsonl").join("agent-log.jsonl"), &file)?;
    let store = store(&dir);
    let report = run(&store, Format::Jsonl, std::slice::from_ref(&file))?;
    let problems: Vec<(ProblemCode, Option<u64>)> = report.problems.iter().map(|p| (p.code, p.line)).collect();
    assert_eq!(
        problems,
        [
            (ProblemCode::MalformedLine, Some(6)),
            (ProblemCode::MalformedLine, Some(7)),
            (ProblemCode::MalformedLine, Some(9)),
            (ProblemCode::MalformedLine, Some(10)),
        ]
    );
    assert_eq!((report.nodes_added, report.turns_added), (7, 6));
    let ids: Vec<String> = store.get_messages(SESSION)?.into_iter().map(|m| m.id).collect();
    assert_eq!(ids, ["m1", "m2", "m3", "m4", "m5", "m7", "m10"]);
    let m2 = store.get_branch(SESSION, Some("m2"))?;
    assert_eq!(
        m2.last().map(|m| m.content.clone()),
        Some(Content::Parts(vec![serde_json::json!({"type": "text", "text": "Noted: three hives."})]))
    );
    assert_eq!(
        turns(&store, SESSION, None),
        [
            t("m1", "user", "I keep bees — three hives."),
            t("m2", "assistant", "Noted: three hives."),
            t("m4", "user", "From the group: hello"),
            t("m5", "user", "legacy line, no tier"),
            t("m10", "user", "crlf line\r\nend"),
        ]
    );
    // Speakers as given: owner, the agent under the owner, a paired person, a legacy
    // line with only a display name; the mcp_browser line is no record.
    let labels = |head: &str| -> Result<Labels, Box<dyn std::error::Error>> {
        let branch = store.get_branch(SESSION, Some(head))?;
        Ok(records(SESSION, &branch, 0)?.into_iter().map(|r| (r.speaker, r.source.authority_tier)).collect())
    };
    assert_eq!(
        labels("m10")?,
        [
            ("owner (owner/local)".to_owned(), Some("owner".to_owned())),
            ("beekeeper-bot (runtime/agent%2Fbeekeeper-bot)".to_owned(), Some("owner".to_owned())),
            ("Bo (telegram\u{ff1a}42)".to_owned(), Some("paired".to_owned())),
            ("someone".to_owned(), None),
            ("owner (owner/local)".to_owned(), Some("owner".to_owned())),
        ]
    );
    assert_eq!(labels("m7")?.len(), 4);
    assert_eq!(run(&store, Format::Jsonl, &[file])?.files_unchanged, 1);
    Ok(())
}

#[test]
fn an_unterminated_last_line_waits_until_it_is_complete() -> TestResult {
    let dir = TempDir::new("import-jsonl-tail");
    let file = dir.path().join("s.jsonl");
    std::fs::write(
        &file,
        "{\"id\":\"a\",\"role\":\"user\",\"content\":\"one\"}\n{\"id\":\"b\",\"role\":\"assistant\",\"cont",
    )?;
    let store = store(&dir);
    let first = run(&store, Format::Jsonl, std::slice::from_ref(&file))?;
    assert_eq!((first.lines_read, first.nodes_added, first.problems.len()), (1, 1, 0));
    std::fs::write(
        &file,
        "{\"id\":\"a\",\"role\":\"user\",\"content\":\"one\"}\n{\"id\":\"b\",\"role\":\"assistant\",\"content\":\"two\",\"parent\":\"a\"}",
    )?;
    // Complete JSON without its LF counts as a line.
    let second = run(&store, Format::Jsonl, std::slice::from_ref(&file))?;
    assert_eq!((second.lines_read, second.nodes_added, second.files_reread), (1, 1, 0));
    assert_eq!(turns(&store, "jsonl:s", None), [t("a", "user", "one"), t("b", "assistant", "two")]);
    Ok(())
}

#[test]
fn a_missing_path_is_reported_and_the_rest_imported() -> TestResult {
    let dir = TempDir::new("import-jsonl-missing");
    let file = dir.path().join("ok.jsonl");
    std::fs::write(&file, "{\"id\":\"a\",\"role\":\"user\",\"content\":\"one\"}\n")?;
    let store = store(&dir);
    let report = run(&store, Format::Jsonl, &[dir.path().join("nope.jsonl"), file])?;
    assert_eq!(report.problems.iter().map(|p| p.code).collect::<Vec<_>>(), [ProblemCode::Unreadable]);
    assert_eq!(report.nodes_added, 1);
    Ok(())
}

/// Each turn's text and speaker label.
type Labels = Vec<(String, Option<String>)>;
