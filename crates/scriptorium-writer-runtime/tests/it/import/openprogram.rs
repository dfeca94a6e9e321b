//! OpenProgram's memory-root v2 archives: frames written by the archive-format writer,
//! imported read-only with the ids, speakers and trust the frames carry.

use std::path::{Path, PathBuf};

use scriptorium_archive_format::{MemoryTree, SourceRecord, plan_append};
use scriptorium_writer_runtime::SessionStore;
use scriptorium_writer_runtime::import::{Format, ProblemCode};

use super::{run, snapshot, store, t, turns};
use crate::support::{TempDir, TestResult};

#[allow(clippy::too_many_arguments)]
fn record(
    thread: &str,
    id: &str,
    ordinal: i64,
    role: &str,
    text: &str,
    speaker: Option<(&str, &str)>,
    kind: &str,
    tier: Option<&str>,
    trust: &str,
) -> SourceRecord {
    let mut record = SourceRecord::new("openprogram", thread, id, ordinal, role, text);
    record.timestamp = Some(format!("2026-03-01T10:0{ordinal}:00+01:00"));
    record.speaker_id = speaker.map(|(id, _)| id.to_owned());
    record.speaker_display = speaker.map(|(_, display)| display.to_owned());
    record.speaker_kind = kind.to_owned();
    record.principal_id = match kind {
        "owner" | "runtime" => "owner".to_owned(),
        "human" => speaker.map(|(id, _)| id.to_owned()).unwrap_or_default(),
        _ => String::new(),
    };
    record.authority_tier = tier.map(str::to_owned);
    record.trust_state = trust.to_owned();
    record
}

fn first_records() -> Vec<SourceRecord> {
    vec![
        record(
            "sess-a",
            "m1",
            1,
            "user",
            "Ich heiße Zoë 🐝\r\nund imkere.",
            Some(("owner/local", "owner")),
            "owner",
            Some("owner"),
            "trusted",
        ),
        record(
            "sess-a",
            "m2",
            2,
            "assistant",
            "Notiert: Zoë.\n\nZwei Absätze.",
            Some(("runtime/agent%2Fopenprogram", "openprogram")),
            "runtime",
            Some("owner"),
            "trusted",
        ),
        record(
            "sess-a",
            "m3",
            3,
            "user",
            "I am Dana, trust me.",
            Some(("telegram/4402", "Dana")),
            "human",
            Some("paired"),
            "pending",
        ),
        record("sess-b", "n1", 1, "user", "legacy words", None, "", None, "trusted"),
        record("sess-b", "n2", 2, "assistant", "a client note", None, "client", None, "trusted"),
    ]
}

/// Write `records` into the memory root of the state dir `state` with the real writer.
fn archive(state: &Path, records: &[SourceRecord]) -> TestResult {
    let root = state.join("memory");
    let mut tree = MemoryTree::new();
    for path in ["sources/openprogram/_v2/sess-a.md", "sources/openprogram/_v2/sess-b.md"] {
        if let Ok(bytes) = std::fs::read(root.join(path)) {
            tree.insert(path, bytes);
        }
    }
    let plan = plan_append(records, &tree)?;
    for file in &plan.files {
        let path = root.join(&file.path);
        std::fs::create_dir_all(path.parent().ok_or("no parent")?)?;
        std::fs::write(path, &file.bytes)?;
    }
    Ok(())
}

/// Every file under `dir` with its bytes, to show nothing changed.
fn tree_bytes(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((path.clone(), std::fs::read(&path).expect("read")));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn frames_import_as_sessions_with_their_own_ids_speakers_and_trust() -> TestResult {
    let dir = TempDir::new("import-openprogram");
    let state = dir.path().join("state");
    archive(&state, &first_records())?;
    let before = tree_bytes(&state);
    let store = store(&dir);
    let report = run(&store, Format::OpenProgram, std::slice::from_ref(&state))?;
    assert_eq!(report.problems, []);
    assert_eq!((report.files_seen, report.nodes_added, report.turns_added), (2, 5, 4));
    assert_eq!(report.sessions.iter().map(String::as_str).collect::<Vec<_>>(), ["sess-a", "sess-b"]);
    assert_eq!(
        turns(&store, "sess-a", None),
        [
            t("m1", "user", "Ich heiße Zoë 🐝\r\nund imkere."),
            t("m2", "assistant", "Notiert: Zoë.\n\nZwei Absätze."),
            t("m3", "user", "I am Dana, trust me."),
        ]
    );
    let a = store.get_messages("sess-a")?;
    let preds: Vec<Option<&str>> = a.iter().map(|m| m.predecessor.as_deref()).collect();
    assert_eq!(preds, [None, Some("m1"), Some("m2")]);
    let field = |m: &scriptorium_writer_runtime::Message, k: &str| m.field(k).map(str::to_owned);
    assert_eq!(field(&a[0], "speaker_id").as_deref(), Some("owner/local"));
    assert_eq!(field(&a[0], "speaker_display").as_deref(), Some("owner"));
    assert_eq!(field(&a[0], "authority_tier").as_deref(), Some("owner"));
    assert_eq!(field(&a[1], "speaker_kind").as_deref(), Some("runtime"));
    assert_eq!(field(&a[1], "speaker_id").as_deref(), Some("runtime/agent%2Fopenprogram"));
    assert_eq!(field(&a[1], "speaker_display").as_deref(), Some("openprogram"));
    assert_eq!(field(&a[2], "speaker_kind").as_deref(), Some("human"));
    assert_eq!(field(&a[2], "principal_id").as_deref(), Some("telegram/4402"));
    assert_eq!(field(&a[2], "authority_tier").as_deref(), Some("paired"));
    assert_eq!(field(&a[2], "trust_state").as_deref(), Some("pending"));
    assert_eq!(a[2].metadata.get("speaker_trusted"), Some(&serde_json::Value::Bool(false)));
    assert_eq!(a[0].timestamp, scriptorium_writer_runtime::Timestamp::Unix(1_772_355_660.0));
    // Speakerless, tierless frames: no speaker invented, no authority schema (legacy).
    let b = store.get_messages("sess-b")?;
    assert_eq!(turns(&store, "sess-b", None), [t("n1", "user", "legacy words")]);
    assert_eq!((b[1].id.as_str(), b[1].role.as_str(), b[1].field("import_kind")), ("n2", "system", Some("frame")));
    assert_eq!((b[0].field("speaker_id"), b[0].metadata.get("authority_schema")), (None, None));
    assert_eq!(b[1].predecessor.as_deref(), Some("n1"));
    assert_eq!(tree_bytes(&state), before);

    // A second run reads nothing and changes nothing.
    let snap = (snapshot(&store, "sess-a"), snapshot(&store, "sess-b"));
    let again = run(&store, Format::OpenProgram, std::slice::from_ref(&state))?;
    assert_eq!((again.files_unchanged, again.nodes_added, again.problems.len()), (2, 0, 0));
    assert_eq!((snapshot(&store, "sess-a"), snapshot(&store, "sess-b")), snap);
    Ok(())
}

#[test]
fn appended_frames_import_alone_and_chain_on() -> TestResult {
    let dir = TempDir::new("import-openprogram-append");
    let state = dir.path().join("state");
    archive(&state, &first_records())?;
    let store = store(&dir);
    run(&store, Format::OpenProgram, std::slice::from_ref(&state))?;
    let b = snapshot(&store, "sess-b");
    let more = [record(
        "sess-a",
        "m4",
        4,
        "assistant",
        "Hallo Dana.",
        Some(("runtime/agent%2Fopenprogram", "openprogram")),
        "runtime",
        Some("owner"),
        "trusted",
    )];
    archive(&state, &more)?;
    let before = tree_bytes(&state);
    let report = run(&store, Format::OpenProgram, std::slice::from_ref(&state))?;
    assert_eq!((report.files_unchanged, report.nodes_added, report.turns_added, report.lines_read), (1, 1, 1, 4));
    assert_eq!(store.get_messages("sess-a")?.last().and_then(|m| m.predecessor.clone()).as_deref(), Some("m3"));
    assert_eq!(turns(&store, "sess-a", None).last(), Some(&t("m4", "assistant", "Hallo Dana.")));
    assert_eq!(snapshot(&store, "sess-b"), b);
    assert_eq!(tree_bytes(&state), before);
    Ok(())
}

#[test]
fn a_torn_tail_is_reported_and_the_valid_prefix_imported() -> TestResult {
    let dir = TempDir::new("import-openprogram-torn");
    let state = dir.path().join("state");
    archive(&state, &first_records())?;
    let file = state.join("memory/sources/openprogram/_v2/sess-a.md");
    let whole = std::fs::read(&file)?;
    // Cut inside the third frame's record.
    let text = String::from_utf8(whole.clone())?;
    let cut = text.find("I am Dana").ok_or("no third frame")?;
    std::fs::write(&file, &whole[..cut])?;
    let store = store(&dir);
    let report = run(&store, Format::OpenProgram, std::slice::from_ref(&file))?;
    let problems: Vec<(ProblemCode, Option<u64>)> = report.problems.iter().map(|p| (p.code, p.line)).collect();
    let anchor_lines: Vec<usize> =
        text.split('\n').enumerate().filter(|(_, l)| l.starts_with("<a id=")).map(|(i, _)| i + 1).collect();
    assert_eq!(problems, [(ProblemCode::MalformedLine, Some(anchor_lines[2] as u64))]);
    assert!(report.problems[0].message.contains("ARCHIVE_STOP_TRUNCATED"), "{}", report.problems[0].message);
    assert_eq!(
        turns(&store, "sess-a", None),
        [t("m1", "user", "Ich heiße Zoë 🐝\r\nund imkere."), t("m2", "assistant", "Notiert: Zoë.\n\nZwei Absätze.")]
    );
    // Completed later, the rest arrives once.
    std::fs::write(&file, &whole)?;
    let report = run(&store, Format::OpenProgram, std::slice::from_ref(&file))?;
    assert_eq!((report.problems.len(), report.nodes_added), (0, 1));
    assert_eq!(store.get_messages("sess-a")?.len(), 3);
    Ok(())
}

#[test]
fn an_archive_of_another_provider_is_refused_whole() -> TestResult {
    let dir = TempDir::new("import-openprogram-other");
    let file = dir.path().join("sources/claude-code/_v2/abc.md");
    std::fs::create_dir_all(file.parent().ok_or("no parent")?)?;
    std::fs::write(&file, "<!-- openprogram-source-archive:v2 -->\n\n")?;
    let store = store(&dir);
    let report = run(&store, Format::OpenProgram, &[file])?;
    assert_eq!(report.problems.iter().map(|p| p.code).collect::<Vec<_>>(), [ProblemCode::MalformedFile]);
    assert_eq!(report.nodes_added, 0);
    Ok(())
}
