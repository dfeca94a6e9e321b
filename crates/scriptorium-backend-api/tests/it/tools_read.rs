//! `memory_search`, `memory_grep`, `memory_browse` and `memory_status` on real
//! workspaces, the tier gate of every read tool, and the null backend's tools.

use scriptorium_backend_api::config::{BackendKind, MemoryConfig, RetrievalMethod};
use scriptorium_backend_api::{Caller, MemoryBackend, NullBackend, Resolver, TOOLS, Tier};
use serde_json::{Value, json};

use crate::{TempDir, backend, call, error_code, eventually, example, owner, paired, reference_written, write};

const READ_TOOLS: &[&str] = &["memory_search", "memory_grep", "memory_get", "memory_browse", "memory_status"];

/// Valid arguments for each read tool on the example workspace.
fn arguments(tool: &str) -> Value {
    match tool {
        "memory_search" => json!({"query": "tomatoes"}),
        "memory_grep" => json!({"query": "tomatoes"}),
        "memory_get" => json!({"path": "topics/garden/raised-bed.md"}),
        _ => json!({}),
    }
}

#[test]
fn search_links_topic_hits_to_their_block_and_labels_their_trust() {
    let dir = TempDir::new("search-topic");
    let backend = backend(&example(&dir), RetrievalMethod::Bm25);
    let out = call(&backend, "memory_search", json!({"query": "tomatoes watered", "path_prefix": "garden"}));
    let first = out.split("\n\n").next().expect("a hit");
    let mut lines = first.lines();
    assert_eq!(lines.next(), Some("--- topics/garden/raised-bed.md#^352218f9"), "{out}");
    assert_eq!(lines.next(), Some("trust_state: trusted"), "{out}");
    assert!(lines.next().is_some_and(|line| line.contains("watered every second morning")), "{out}");
    // Decision 3: no claim suffix on a topic anchor.
    assert!(!out.contains("#^352218f9:"), "{out}");
    assert!(out.lines().filter(|line| line.starts_with("--- ")).all(|line| line.starts_with("--- topics/garden/")));
}

#[test]
fn pending_topic_and_source_hits_are_labelled_pending() {
    let dir = TempDir::new("search-pending");
    let backend = backend(&example(&dir), RetrievalMethod::Bm25);
    let out = call(&backend, "memory_search", json!({"query": "Cal host April", "top_k": 10}));
    let topic = out.split("\n\n").find(|hit| hit.starts_with("--- topics/people/cal.md")).expect("the topic hit");
    assert!(topic.starts_with("--- topics/people/cal.md#^c0ffee01\ntrust_state: pending\n"), "{topic}");
    let source = out
        .split("\n\n")
        .find(|hit| hit.starts_with("--- sources/openprogram/_v2/group-bookclub.md#source-0308188724a72135"))
        .expect("the source hit");
    let speaker_line = source.lines().nth(1).expect("a speaker line");
    let speaker: Value =
        serde_json::from_str(speaker_line.strip_prefix("speaker: ").expect("the speaker label")).expect("JSON");
    assert_eq!(speaker["trust_state"], "pending", "{speaker_line}");
    assert_eq!(speaker["speaker_trusted"], false);
    assert!(speaker.get("authority_tier").is_some_and(Value::is_null), "{speaker_line}");
    let keys: Vec<&str> = speaker.as_object().expect("an object").keys().map(String::as_str).collect();
    assert_eq!(keys.len(), 5, "{speaker_line}");
    assert!(speaker_line.starts_with("speaker: {\"speaker_trusted\":false,\"speaker_id\":"), "{speaker_line}");
    // A trusted source record says so too (decision 8: the field is always present).
    let out = call(&backend, "memory_search", json!({"query": "Thursday 19:30", "path_prefix": "sources"}));
    let trusted = out.lines().find(|line| line.starts_with("speaker: ")).expect("a source hit");
    assert!(trusted.contains("\"trust_state\":\"trusted\""), "{trusted}");
}

#[test]
fn search_notices_blank_queries_and_names_a_query_without_hits() {
    let dir = TempDir::new("search-notices");
    let backend = backend(&example(&dir), RetrievalMethod::Bm25);
    for arguments in [json!({}), json!({"query": "  "}), json!({"query": null})] {
        let out = call(&backend, "memory_search", arguments);
        assert!(out.contains("needs a query") && error_code(&out).is_none(), "{out}");
    }
    let out = call(&backend, "memory_search", json!({"query": "xylophonequartz"}));
    assert!(out.contains("\"xylophonequartz\"") && !out.starts_with("---"), "{out}");
}

#[test]
fn search_checks_argument_types_and_clamps_top_k() {
    let dir = TempDir::new("search-args");
    let backend = backend(&example(&dir), RetrievalMethod::Bm25);
    for arguments in [
        json!({"query": 7}),
        json!({"query": "tea", "top_k": "3"}),
        json!({"query": "tea", "top_k": 2.5}),
        json!({"query": "tea", "matching_only": "yes"}),
        json!(["tea"]),
    ] {
        assert_eq!(
            error_code(&call(&backend, "memory_search", arguments.clone())).as_deref(),
            Some("INVALID_ARGUMENT")
        );
    }
    let hits = |top_k: Value| {
        let out = call(&backend, "memory_search", json!({"query": "the", "top_k": top_k}));
        out.lines().filter(|line| line.starts_with("--- ")).count()
    };
    assert_eq!(hits(json!(1)), 1);
    assert_eq!(hits(json!(-4)), 1);
    assert_eq!(hits(json!(2.0)), 2);
    assert!((2..=10).contains(&hits(json!(500))));
}

#[test]
fn matching_only_drops_hits_that_hold_no_query_word() {
    let dir = TempDir::new("search-matching");
    let backend = backend(&example(&dir), RetrievalMethod::Bm25);
    let query = json!({"query": "basil", "top_k": 10});
    let all = call(&backend, "memory_search", query.clone());
    let mut only = query;
    only["matching_only"] = json!(true);
    let only = call(&backend, "memory_search", only);
    let count = |out: &str| out.lines().filter(|line| line.starts_with("--- ")).count();
    // BM25+'s δ gives every candidate a floor score, so the plain ranking has more.
    assert!(count(&all) > count(&only), "{all}\n=====\n{only}");
    assert!(count(&only) >= 1);
    for hit in only.split("\n\n") {
        assert!(hit.to_lowercase().contains("basil"), "{hit}");
    }
}

#[test]
fn speaker_filter_keeps_that_speakers_records() {
    let dir = TempDir::new("search-speaker");
    let backend = backend(&example(&dir), RetrievalMethod::Bm25);
    let out = call(&backend, "memory_search", json!({"query": "book meet Thursday", "speaker": "Ada"}));
    assert!(out.starts_with("--- sources/"), "{out}");
    for line in out.lines().filter(|line| line.starts_with("speaker: ")) {
        assert!(line.contains("\"speaker_display\":\"Ada\""), "{line}");
    }
}

#[test]
fn search_follows_the_configured_method() {
    let dir = TempDir::new("search-method");
    let root = example(&dir);
    let agent = backend(&root, RetrievalMethod::Agent);
    let out = call(&agent, "memory_search", json!({"query": "tomatoes"}));
    assert!(out.contains("memory_browse") && out.contains("memory_grep") && error_code(&out).is_none(), "{out}");
    for method in [RetrievalMethod::Embedding, RetrievalMethod::Hybrid] {
        let backend = backend(&root, method);
        let out = call(&backend, "memory_search", json!({"query": "tomatoes", "speaker": "Ada"}));
        assert_eq!(error_code(&out).as_deref(), Some("INVALID_ARGUMENT"), "{out}");
        let out = call(&backend, "memory_search", json!({"query": "tomatoes"}));
        assert_eq!(error_code(&out).as_deref(), Some("EMBEDDING_UNAVAILABLE"), "{out}");
    }
}

#[test]
fn search_and_grep_output_carries_no_fence() {
    let dir = TempDir::new("search-fence");
    let backend = backend(&example(&dir), RetrievalMethod::Bm25);
    let out = call(&backend, "memory_search", json!({"query": "green tea afternoon"}));
    assert!(out.starts_with("--- topics/home/tea.md#^7ea7ea00"), "{out}");
    assert!(!out.to_lowercase().contains("memory-context") && !out.contains("[System note"), "{out}");
    let out = call(&backend, "memory_grep", json!({"query": "tags too"}));
    assert!(out.starts_with("topics/home/tea.md:"), "{out}");
    assert!(!out.contains("memory-context"), "{out}");
}

#[test]
fn search_sees_a_file_written_after_the_index_warmed() {
    let dir = TempDir::new("search-refresh");
    let root = example(&dir);
    let backend = backend(&root, RetrievalMethod::Bm25);
    assert!(call(&backend, "memory_search", json!({"query": "marmalade"})).contains("\"marmalade\""));
    write(&root, "topics/home/jam.md", FENCE_FREE_JAM);
    // The watcher's event lets the next search walk; it arrives asynchronously.
    let seen = || call(&backend, "memory_search", json!({"query": "marmalade"}));
    assert!(eventually(|| seen().starts_with("--- topics/home/jam.md#^a1a1a1a1\n")), "{}", seen());
}

const FENCE_FREE_JAM: &str = "# Jam\n\nThe owner makes orange marmalade in January.[^e-jam] ^a1a1a1a1\n\n[^e-jam]: Time: `2026-03-05`; Sources: [openprogram/group-bookclub/b4](../../sources/openprogram/_v2/group-bookclub.md#source-eac050b869f0d4dc)\n";

#[test]
fn grep_prints_path_line_text_and_hides_archive_metadata() {
    let dir = TempDir::new("grep");
    let backend = backend(&example(&dir), RetrievalMethod::Bm25);
    let out = call(&backend, "memory_grep", json!({"query": "TOMATOES"}));
    assert!(out.lines().any(|line| line.starts_with("topics/garden/raised-bed.md:5: Tomatoes grow")), "{out}");
    let out = call(&backend, "memory_grep", json!({"query": "TOMATOES", "case_sensitive": true}));
    assert!(out.contains("\"TOMATOES\"") && !out.contains(".md:"), "{out}");
    let out = call(&backend, "memory_grep", json!({"query": "Ada", "prefix": "sources/"}));
    assert!(!out.is_empty() && out.lines().all(|line| line.starts_with("sources/")), "{out}");
    // Record lines only: the archive's id and meta comments never match.
    let out = call(&backend, "memory_grep", json!({"query": "source-meta", "prefix": "sources"}));
    assert!(out.starts_with("No memory file contains"), "{out}");
    let out = call(&backend, "memory_grep", json!({"query": " "}));
    assert!(out.contains("needs a query"), "{out}");
    let out = call(&backend, "memory_grep", json!({"query": "x", "case_sensitive": 1}));
    assert_eq!(error_code(&out).as_deref(), Some("INVALID_ARGUMENT"));
}

#[test]
fn grep_says_how_many_more_lines_match_and_stays_under_its_cap() {
    let dir = TempDir::new("grep-many");
    let root = example(&dir);
    let long = format!("needle {}\n", "é".repeat(400));
    write(&root, "notes/many.txt", long.repeat(120));
    let backend = backend(&root, RetrievalMethod::Bm25);
    let out = call(&backend, "memory_grep", json!({"query": "needle"}));
    assert!(out.chars().count() <= 20_000, "{}", out.chars().count());
    assert_eq!(out.lines().filter(|line| line.starts_with("notes/many.txt:")).count(), 50);
    assert!(out.contains("… 70 more matching lines"), "{}", &out[out.len() - 200..]);
}

#[test]
fn browse_lists_visible_files_with_block_counts() {
    let dir = TempDir::new("browse");
    let root = example(&dir);
    write(&root, "core.md", "# Core\n");
    let backend = backend(&root, RetrievalMethod::Bm25);
    let out = call(&backend, "memory_browse", json!({}));
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("8 file(s):"), "{out}");
    assert_eq!(lines.next(), Some(""));
    let entries: Vec<&str> = lines.collect();
    assert_eq!(
        entries,
        [
            "  core.md",
            "  sources/openprogram/_v2/group-bookclub.md",
            "  sources/openprogram/_v2/sess-garden.md",
            "  sources/openprogram/old-notes.md",
            "  topics/garden/raised-bed.md (2 blocks)",
            "  topics/home/tea.md (1 block)",
            "  topics/people/book-club.md (3 blocks)",
            "  topics/people/cal.md (1 block)",
        ],
        "{out}"
    );
    let out = call(&backend, "memory_browse", json!({"prefix": "/topics/people"}));
    assert!(out.starts_with("2 file(s):\n\n  topics/people/book-club.md (3 blocks)\n"), "{out}");
    let out = call(&backend, "memory_browse", json!({"prefix": "nothing/"}));
    assert!(out.contains("\"nothing/\""), "{out}");
}

#[test]
fn browse_stops_at_200_entries_with_a_hint() {
    let dir = TempDir::new("browse-many");
    let root = dir.path().join("memory");
    for n in 0..205 {
        write(&root, &format!("notes/n{n:03}.txt"), "x");
    }
    let backend = backend(&root, RetrievalMethod::Bm25);
    let out = call(&backend, "memory_browse", json!({}));
    assert!(out.starts_with("205 file(s):\n\n  notes/n000.txt\n"), "{}", &out[..80]);
    assert_eq!(out.lines().filter(|line| line.starts_with("  notes/")).count(), 200);
    assert!(out.contains("  notes/n199.txt\n… 5 more not shown"), "{}", &out[out.len() - 150..]);
}

#[test]
fn browse_of_an_empty_workspace_says_memory_fills_itself() {
    let dir = TempDir::new("browse-empty");
    let backend = backend(&dir.path().join("memory"), RetrievalMethod::Bm25);
    let out = call(&backend, "memory_browse", json!({}));
    assert!(out.contains("fills itself") && error_code(&out).is_none(), "{out}");
}

#[test]
fn status_counts_files_blocks_and_relations_in_the_spec_order() {
    let dir = TempDir::new("status");
    let root = example(&dir);
    write(&root, "core.md", "# Core\n\nSomething.\n");
    write(&root, "timeline/2026.md", "# 2026\n");
    write(&root, "timeline/2026/03.md", "# 2026-03\n");
    write(&root, "recent_events.jsonl", "{\"memory_id\": \"a\"}\n\n{\"memory_id\": \"b\"}\n");
    // Two top-level keys, three units, three links: relations counts the links.
    write(
        &root,
        "relations.json",
        "{\"backlinks\": {\"b\": [\"a\"], \"c\": [\"a\", \"b\"]}, \"outbound\": {\"a\": [\"b\", \"c\"], \"b\": [\"c\"], \"c\": []}}\n",
    );
    let backend = backend(&root, RetrievalMethod::Bm25);
    let first = call(&backend, "memory_status", json!({}));
    let status: Value = serde_json::from_str(&first).expect("pretty JSON");
    assert_eq!(status["topic_files"], 4, "{first}");
    assert_eq!(status["source_files"], 3);
    assert_eq!(status["timeline_files"], 2);
    assert_eq!(status["recent_events"], 2);
    assert_eq!(status["blocks"], 3);
    assert_eq!(status["relations"], 3);
    assert_eq!(status["core_exists"], true);
    assert_eq!(status["embedding_available"], false);
    assert_eq!(status["writer"]["pending_turns"], 0);
    assert!(status["writer"]["last_outcome"].is_null());
    let workspace = status["workspace"].as_str().expect("the workspace id");
    assert!(workspace.starts_with("w-"), "{workspace}");
    assert_eq!(status["revision"].as_str().map(str::len), Some(32), "{first}");
    let keys = [
        "workspace",
        "revision",
        "topic_files",
        "blocks",
        "source_files",
        "timeline_files",
        "recent_events",
        "relations",
        "core_exists",
        "embedding_available",
        "writer",
        "last_outcome",
        "last_success_at",
        "last_failure",
        "pending_turns",
    ];
    let at: Vec<usize> = keys.iter().map(|key| first.find(&format!("\"{key}\":")).expect("every key")).collect();
    assert!(at.windows(2).all(|pair| pair[0] < pair[1]), "{first}");
    assert!(first.starts_with("{\n  \"workspace\": "), "{first}");
}

#[test]
fn status_without_views_counts_units_from_the_topics_and_reads_writer_status() {
    let dir = TempDir::new("status-writer");
    let root = example(&dir);
    let backend = backend(&root, RetrievalMethod::Bm25);
    let before: Value = serde_json::from_str(&call(&backend, "memory_status", json!({}))).expect("JSON");
    // 2 + 1 + 3 + 1 blocks, no aliases, no relations.json yet.
    assert_eq!(before["blocks"], 7);
    assert_eq!(before["relations"], 0);
    assert_eq!(before["core_exists"], false);
    write(
        &root,
        ".scriptorium/writer-status.json",
        "{\"version\": 1, \"last_outcome\": \"failure\", \"last_success_at\": null, \"last_failure\": {\"at\": \"2026-03-05T10:00:00Z\", \"reason_code\": \"MODEL_TIMEOUT\", \"retryable\": true}}\n",
    );
    let after = call(&backend, "memory_status", json!({}));
    let status: Value = serde_json::from_str(&after).expect("JSON");
    assert_eq!(status["writer"]["last_outcome"], "failure", "{after}");
    assert_eq!(status["writer"]["last_failure"]["reason_code"], "MODEL_TIMEOUT", "{after}");
    assert_eq!(status["writer"]["last_failure"]["retryable"], true);
}

#[test]
fn read_tools_pass_the_gate_for_owner_and_paired_only() {
    let dir = TempDir::new("gate");
    let backend = backend(&example(&dir), RetrievalMethod::Bm25);
    for tool in READ_TOOLS {
        for caller in [owner(), paired()] {
            let out = backend.call_tool(tool, &arguments(tool), &caller);
            assert_eq!(error_code(&out), None, "{tool} for {:?}: {out}", caller.tier);
            assert!(!out.trim().is_empty(), "{tool}");
        }
        for caller in [Caller::with_tier(Some(Tier::McpBrowser)), Caller::with_tier(None)] {
            let out = backend.call_tool(tool, &arguments(tool), &caller);
            assert_eq!(error_code(&out).as_deref(), Some("PERMISSION_DENIED"), "{tool} for {:?}: {out}", caller.tier);
            assert!(out.contains("memory.read"), "{out}");
        }
    }
}

#[test]
fn every_read_tool_has_a_described_schema_with_its_properties() {
    let expected: &[(&str, &[&str], &[&str])] = &[
        ("memory_search", &["query", "top_k", "path_prefix", "speaker", "matching_only"], &["query"]),
        ("memory_grep", &["query", "prefix", "case_sensitive"], &["query"]),
        ("memory_get", &["path", "heading", "block_id"], &["path"]),
        ("memory_browse", &["prefix"], &[]),
        ("memory_status", &[], &[]),
    ];
    for (name, properties, required) in expected {
        let spec = TOOLS.iter().find(|spec| spec.name == *name).expect("registered");
        assert!(spec.description.len() > 80 && !spec.description.contains("SCAFFOLD"), "{name}");
        let schema: Value = serde_json::from_str(spec.input_schema).expect("JSON schema");
        let declared = schema["properties"].as_object().expect("properties");
        assert_eq!(declared.len(), properties.len(), "{name}");
        for property in *properties {
            let declared = &declared[*property];
            assert!(declared["type"].is_string() && declared["description"].is_string(), "{name}.{property}");
        }
        let listed: Vec<&str> =
            schema["required"].as_array().map_or(Vec::new(), |list| list.iter().filter_map(Value::as_str).collect());
        assert_eq!(listed, *required, "{name}");
    }
    let search: Value = serde_json::from_str(TOOLS[0].input_schema).expect("JSON");
    assert_eq!(search["properties"]["top_k"]["default"], 8);
    assert_eq!(search["properties"]["matching_only"]["default"], false);
}

#[test]
fn the_null_backend_offers_no_tools_and_creates_nothing() {
    let dir = TempDir::new("null");
    let root = dir.path().join("memory");
    let config = MemoryConfig { backend: BackendKind::None, ..MemoryConfig::default() };
    let resolver = Resolver::new(config, &root, None);
    let backend = resolver.backend();
    assert!(backend.tools().is_empty());
    for tool in READ_TOOLS {
        let out = backend.call_tool(tool, &arguments(tool), &owner());
        assert_eq!(error_code(&out).as_deref(), Some("MEMORY_DISABLED"), "{out}");
    }
    assert!(NullBackend.tools().is_empty());
    assert!(!root.exists(), "a disabled backend never creates the workspace");
    assert_eq!(std::fs::read_dir(dir.path()).expect("the test directory").count(), 0);
}

#[test]
fn a_reference_written_workspace_reads_through_every_tool() {
    let dir = TempDir::new("reference");
    let root = reference_written(&dir);
    let backend = backend(&root, RetrievalMethod::Bm25);
    let status = call(&backend, "memory_status", json!({}));
    let status: Value = serde_json::from_str(&status).expect("JSON");
    assert_eq!(status["topic_files"], 4);
    assert_eq!(status["source_files"], 4);
    assert_eq!(status["timeline_files"], 3);
    assert_eq!(status["recent_events"], 8);
    // Eight units in relations.json's `outbound`; no block links, though the file has two keys.
    assert_eq!(status["blocks"], 8);
    assert_eq!(status["relations"], 0);
    assert_eq!(status["core_exists"], true);
    let browse = call(&backend, "memory_browse", json!({}));
    for line in [
        "14 file(s):",
        "  core.md",
        "  relations.json",
        "  timeline/2024/03/15.md",
        "  topics/core.md (4 blocks)",
        "  topics/people/mei.md (2 blocks)",
        "  sources/telegram/_v2/group-100.md",
    ] {
        assert!(browse.lines().any(|shown| shown == line), "{line}: {browse}");
    }
    assert!(!browse.contains(".scriptorium"), "{browse}");
    let search = call(&backend, "memory_search", json!({"query": "Mei Kyoto sister", "top_k": 3}));
    assert!(search.starts_with("--- topics/"), "{search}");
    assert!(
        search.contains("#^ef8db871\ntrust_state: trusted\n") || search.contains("#^5b2c12ed\ntrust_state: trusted\n"),
        "{search}"
    );
    let block = call(&backend, "memory_get", json!({"path": "topics/people/mei.md", "block_id": "57c0a636"}));
    assert!(block.starts_with("She works at a tea shop.[^e-eebb845436] ^57c0a636\n\n[^e-eebb845436]: "), "{block}");
    let grep = call(&backend, "memory_grep", json!({"query": "green tea", "prefix": "topics/"}));
    assert!(grep.lines().any(|line| line.starts_with("topics/prefs.md:3: Craig prefers green tea")), "{grep}");
    // The fenced always-on memory the system prompt gets, from the same workspace.
    let prompt = backend.system_prompt(None);
    assert!(prompt.starts_with("<memory-context>\n") && prompt.contains("budget tracker in Flask"), "{prompt}");
}
