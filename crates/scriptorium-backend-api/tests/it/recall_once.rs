//! `recall_once`, the one-shot recall of a prompt hook: the same fenced text as a warm
//! backend's `search`, nothing for the callers and settings that get none, and no wait
//! while another process holds the write lock (a write pass in a model call).

use std::time::{Duration, Instant};

use scriptorium_backend_api::config::{BackendKind, MemoryConfig, RetrievalMethod};
use scriptorium_backend_api::{MemoryBackend, Tier, recall_once};
use scriptorium_transaction::Workspace;

use crate::{TempDir, backend, example};

const QUERIES: &[&str] =
    &["tomato water", "book club Thursday", "who may read my notes", "tea", "no such words here zqx"];

#[test]
fn recall_once_answers_what_a_warm_backend_answers() {
    let dir = TempDir::new("recall-once-same");
    let root = example(&dir);
    let warm = backend(&root, RetrievalMethod::Bm25).with_watcher(false);
    let config = MemoryConfig::default();
    let mut nonempty = 0;
    for query in QUERIES {
        let once = recall_once(&root, query, Some(Tier::Owner), &config);
        assert_eq!(once, warm.search(query, "s", Some(Tier::Owner)), "{query}");
        nonempty += usize::from(!once.is_empty());
    }
    assert!(nonempty >= 3, "the queries recall something");
}

#[test]
fn recall_once_gives_nothing_where_search_gives_nothing() {
    let dir = TempDir::new("recall-once-none");
    let root = example(&dir);
    let config = MemoryConfig::default();
    assert_eq!(recall_once(&root, "   ", Some(Tier::Owner), &config), "");
    assert_eq!(recall_once(&root, "tomato water", None, &config), "", "no tier, no memory (fail-closed)");
    assert_eq!(recall_once(&root, "tomato water", Some(Tier::McpBrowser), &config), "");
    let off = MemoryConfig { backend: BackendKind::None, ..MemoryConfig::default() };
    assert_eq!(recall_once(&root, "tomato water", Some(Tier::Owner), &off), "");
    let agent = MemoryConfig { retrieval_method: RetrievalMethod::Agent, ..MemoryConfig::default() };
    assert_eq!(recall_once(&root, "tomato water", Some(Tier::Owner), &agent), "");
    let missing = dir.path().join("no-workspace");
    assert_eq!(recall_once(&missing, "tomato water", Some(Tier::Owner), &config), "");
    assert!(!missing.exists(), "nothing is created");
}

#[test]
fn recall_once_does_not_wait_for_the_write_lock() {
    let dir = TempDir::new("recall-once-lock");
    let root = example(&dir);
    let workspace = Workspace::open(&root).expect("open");
    let held = workspace.lock(Duration::from_secs(1)).expect("lock");
    let started = Instant::now();
    let recalled = recall_once(&root, "tomato water", Some(Tier::Owner), &MemoryConfig::default());
    assert!(recalled.contains("two litres per tomato plant"), "{recalled}");
    // The interactive lock wait is 10 s; a recall that queued for the lock would take that.
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    drop(held);
}
