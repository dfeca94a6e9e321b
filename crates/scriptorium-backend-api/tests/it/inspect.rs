//! `inspect`: the one-shot reads answer exactly what the warm backend's hooks and tools
//! answer over the same files, and they create nothing.

use scriptorium_backend_api::config::{MemoryConfig, RetrievalMethod};
use scriptorium_backend_api::{MemoryBackend, Tier, inspect};
use serde_json::{Value, json};

use crate::{TempDir, backend, call, example};

#[test]
fn recall_is_the_backends_per_turn_recall() {
    let dir = TempDir::new("inspect-recall");
    let root = example(&dir);
    let config = MemoryConfig { retrieval_method: RetrievalMethod::Bm25, ..MemoryConfig::default() };
    for query in ["book club", "green tea", "Thursday", "nothing matches zyxwv", "   "] {
        let (text, hits) = inspect::recall(&root, query, &config).expect("recall");
        let warm = backend(&root, RetrievalMethod::Bm25).search(query, "s1", Some(Tier::Owner));
        assert_eq!(text, warm, "{query:?}");
        assert_eq!(text.is_empty(), hits.is_empty(), "{query:?}");
        assert!(hits.iter().all(|hit| hit.anchor.starts_with("#^") || hit.anchor.starts_with("#source-")), "{hits:?}");
    }
    let agent = MemoryConfig { retrieval_method: RetrievalMethod::Agent, ..MemoryConfig::default() };
    assert_eq!(inspect::recall(&root, "book club", &agent).expect("recall"), (String::new(), Vec::new()));
}

#[test]
fn get_and_status_counts_are_the_tools_answers() {
    let dir = TempDir::new("inspect-get");
    let root = example(&dir);
    let sessions = dir.path().join("sessions.sqlite3");
    let got = inspect::get(&root, "topics/people/book-club.md", None).expect("get");
    let warm = backend(&root, RetrievalMethod::Bm25);
    assert!(!sessions.exists(), "inspect opened no session store");
    assert_eq!(got, call(&warm, "memory_get", json!({"path": "topics/people/book-club.md"})));
    let refused = inspect::get(&root, "../x.md", None).expect_err("outside");
    assert_eq!(refused.code().as_str(), "PATH_OUTSIDE_WORKSPACE");

    let counts = inspect::status_counts(&root).expect("counts");
    let status: Value = serde_json::from_str(&call(&warm, "memory_status", json!({}))).expect("status JSON");
    let keys: Vec<&str> = counts.iter().map(|(key, _)| *key).collect();
    assert_eq!(
        keys,
        [
            "topic_files",
            "blocks",
            "source_files",
            "timeline_files",
            "recent_events",
            "relations",
            "core_exists",
            "embedding_available"
        ]
    );
    for (key, value) in counts {
        assert_eq!(status[key], value, "{key}");
    }
    assert_eq!(inspect::workspace_id(&root).as_deref(), status["workspace"].as_str());
}

#[test]
fn a_block_resolves_its_citations_to_frames() {
    let dir = TempDir::new("inspect-frames");
    let root = example(&dir);
    let topic = "topics/home/tea.md";
    let text = inspect::get(&root, topic, Some("7ea7ea00")).expect("block");
    let cited = inspect::cited_frames(&root, topic, &text);
    assert_eq!(cited.len(), 1, "{cited:?}");
    let frame = cited[0].frame.as_ref().expect("resolved");
    assert_eq!(frame.source_id, "openprogram/group-bookclub/b4");
    assert_eq!(frame.path, "sources/openprogram/_v2/group-bookclub.md");
    let direct = inspect::frame(&root, &format!("{}#{}", frame.path, frame.anchor)).expect("frame");
    assert_eq!(&direct, frame);
    assert!(inspect::frame(&root, "sources/openprogram/_v2/group-bookclub.md#source-0000000000000000").is_err());
    assert_eq!(
        inspect::frame(&root, ".git/config#source-1").expect_err("hidden").code().as_str(),
        "PATH_OUTSIDE_WORKSPACE"
    );
}

#[test]
fn a_legacy_citation_opens_its_record_verbatim() {
    let dir = TempDir::new("inspect-legacy");
    let root = example(&dir);
    let handle = "sources/openprogram/old-notes.md#source-620b0ae3789da094";
    let frame = inspect::frame(&root, handle).expect("a legacy record");
    assert!(frame.legacy);
    assert_eq!(frame.source_id, "openprogram/old-notes/n2");
    assert_eq!(frame.speaker_id, None, "a legacy speaker is never believed");
    assert_eq!(
        frame.text,
        "[2025-11-20T18:30:20+01:00] assistant: Noted. First host could be Ada; she has the biggest table.\n\
         She asked for a reading list by December."
    );
    let cited = inspect::cited_frames(
        &root,
        "topics/people/book-club.md",
        &std::fs::read_to_string(root.join("topics/people/book-club.md")).expect("topic"),
    );
    let legacy: Vec<_> = cited.iter().filter(|c| c.target.contains("old-notes.md")).collect();
    assert!(!legacy.is_empty(), "{cited:?}");
    assert!(legacy.iter().all(|c| c.frame.as_ref().is_ok_and(|frame| frame.legacy)), "{legacy:?}");
    assert!(inspect::frame(&root, "sources/openprogram/old-notes.md#source-0000000000000000").is_err());
}
