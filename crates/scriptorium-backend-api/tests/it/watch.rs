//! A warm backend's watcher (decision "revision vs commit speed"): reads skip the stat walk
//! while real inotify events report no change, and still see every external edit, new
//! file and delete; the backend's own writes are visible at once; without a watcher every
//! read walks. No timed assertion: event delivery is awaited by polling with a 10 s bound.

use std::path::Path;

use scriptorium_backend_api::LocalBackend;
use scriptorium_backend_api::config::RetrievalMethod;
use scriptorium_backend_api::{MemoryBackend, Tier};
use scriptorium_transaction::{Edit, FileChange, NoDerivedViews, TopicPath, UpdateRequest, Workspace};
use serde_json::json;

use super::{TempDir, backend, call, copy_tree, eventually, example, example_workspace, write};

/// The raised-bed topic of the example workspace with one more cited sentence.
const EDITED_BED: &str = "# Raised bed\n\n## Planting\n\nTomatoes grow on the south side of the raised bed, with basil between them.[^e-c7eb913ad2] ^11e4b469\n\n## Care\n\nThe tomatoes are watered every second morning, two litres per plant, and a zebracorn guards them.[^e-704cf626f8] ^352218f9\n\n[^e-c7eb913ad2]: Time: `2026-03-14`; Sources: [openprogram/sess-garden/g1](../../sources/openprogram/_v2/sess-garden.md#source-87bc8264ecf1eb77), [openprogram/sess-garden/g2](../../sources/openprogram/_v2/sess-garden.md#source-021f2587e873bb77)\n[^e-704cf626f8]: Time: `2026-03-16`; Sources: [openprogram/sess-garden/g3](../../sources/openprogram/_v2/sess-garden.md#source-30c15e463ae90c49)\n";

/// A topic about `animal` (one block, id `block`), citing the same trusted session; it
/// belongs one folder below `topics/`.
fn visitor(animal: &str, block: &str) -> String {
    format!(
        "# Visitor\n\nThe {animal} visits the raised bed at dawn.[^e-v] ^{block}\n\n[^e-v]: Time: `2026-03-16`; Sources: [openprogram/sess-garden/g3](../../sources/openprogram/_v2/sess-garden.md#source-30c15e463ae90c49)\n"
    )
}

const BED: &str = "topics/garden/raised-bed.md";

/// `memory_search` for `word`, hits that contain it only.
fn found(backend: &LocalBackend, word: &str) -> String {
    call(backend, "memory_search", json!({"query": word, "matching_only": true}))
}

fn warm(root: &Path) -> LocalBackend {
    let backend = backend(root, RetrievalMethod::Bm25);
    backend.initialize("s1");
    backend
}

#[test]
fn external_edits_new_folders_and_deletes_reach_a_watching_backend() {
    let dir = TempDir::new("watch-external");
    let root = example(&dir);
    let backend = warm(&root);
    assert!(!found(&backend, "zebracorn").contains(BED), "not there yet");
    assert!(found(&backend, "tomatoes").contains(BED));

    std::fs::write(root.join(BED), EDITED_BED).expect("edit the topic behind the backend's back");
    assert!(eventually(|| found(&backend, "zebracorn").contains(BED)), "the edit reaches memory_search");
    assert!(backend.search("zebracorn", "s1", Some(Tier::Owner)).contains("zebracorn guards them"), "and recall");

    write(&root, "topics/wildlife/quokka.md", visitor("quokka", "9a0b1c2d"));
    assert!(
        eventually(|| found(&backend, "quokka").contains("topics/wildlife/quokka.md")),
        "a file in a new folder reaches search"
    );
    let browse = |prefix: &str| call(&backend, "memory_browse", json!({ "prefix": prefix }));
    assert!(browse("topics/wildlife").contains("topics/wildlife/quokka.md (1 block)"), "and browse");

    std::fs::remove_file(root.join(BED)).expect("delete the topic");
    assert!(eventually(|| !found(&backend, "tomatoes").contains(BED)), "the delete reaches search");
    assert!(eventually(|| !browse("topics/").contains(BED)), "and browse");
    let status: serde_json::Value =
        serde_json::from_str(&call(&backend, "memory_status", json!({}))).expect("status is JSON");
    assert_eq!(status["topic_files"], 4, "book-club, quokka and the fixture's cal and tea: {status}");

    // A hidden file no reader sees still moves the revision, which hashes it too.
    let before = revision(&backend);
    write(&root, "topics/.draft.md.swp", "swap");
    assert!(eventually(|| revision(&backend) != before), "a hidden file moves the revision");
}

/// `memory_status`'s revision.
fn revision(backend: &LocalBackend) -> String {
    let status: serde_json::Value =
        serde_json::from_str(&call(backend, "memory_status", json!({}))).expect("status is JSON");
    status["revision"].as_str().expect("a revision").to_owned()
}

#[test]
fn a_write_no_event_reports_is_seen_after_invalidate() {
    // A write through a hard link outside the workspace raises no event on the workspace's
    // folders: the watcher keeps vouching, so the read does not walk and still answers
    // the old text, until the backend is told that memory changed.
    let dir = TempDir::new("watch-blind");
    let root = example(&dir);
    let outside = dir.path().join("bed-link.md");
    std::fs::hard_link(root.join(BED), &outside).expect("a hard link beside the workspace");
    let backend = warm(&root);
    assert!(!found(&backend, "zebracorn").contains(BED));
    // A marker moved in from outside: one event, the only visible one since the watcher
    // started, so once search sees the marker no event is left to come.
    let marker = dir.path().join("marker.md");
    std::fs::write(&marker, visitor("marmot", "9a0b1c2e")).expect("write the marker outside");
    std::fs::rename(&marker, root.join("topics/people/marker.md")).expect("move the marker in");
    assert!(eventually(|| found(&backend, "marmot").contains("topics/people/marker.md")));

    let browse = || call(&backend, "memory_browse", json!({"prefix": "topics/garden"}));
    assert!(browse().contains("raised-bed.md (2 blocks)"));
    let before = revision(&backend);

    // The edit adds a third block.
    let three = EDITED_BED.replace("\n\n[^e-c7", "\n\nBees visit the basil.[^e-704cf626f8] ^352218fa\n\n[^e-c7");
    std::fs::write(&outside, three).expect("write through the link");
    let stale = found(&backend, "zebracorn");
    assert!(!stale.contains(BED), "no event, no walk: the index is reused: {stale}");
    assert!(browse().contains("raised-bed.md (2 blocks)"), "and so is the listing");
    assert_eq!(revision(&backend), before, "and the revision");
    backend.invalidate();
    assert_ne!(revision(&backend), before, "hashed again after invalidate");
    assert!(found(&backend, "zebracorn").contains(BED), "invalidate makes the next read walk");
    assert!(browse().contains("raised-bed.md (3 blocks)"), "{}", browse());
}

#[test]
fn an_in_process_install_is_visible_to_the_very_next_search() {
    let dir = TempDir::new("watch-own");
    // The plain example: the fixture's extra topics would not pass an install's validation.
    let root = dir.path().join("memory");
    copy_tree(&example_workspace(), &root);
    let backend = warm(&root);
    assert!(found(&backend, "tomatoes").contains(BED));
    let workspace = Workspace::open(&root).expect("open the workspace");
    let delete = FileChange { path: TopicPath::new(BED).expect("a topic path"), content: None };
    let request = UpdateRequest::new(workspace.revision().expect("revision"), Edit::Changes(vec![delete]));
    workspace.update(&request, &NoDerivedViews).expect("install the delete");
    backend.invalidate();
    assert!(!found(&backend, "tomatoes").contains(BED), "no wait for an event");
}

#[test]
fn without_a_watcher_every_read_walks() {
    let dir = TempDir::new("watch-off");
    let root = example(&dir);
    let backend = backend(&root, RetrievalMethod::Bm25).with_watcher(false);
    backend.initialize("s1");
    assert!(!found(&backend, "zebracorn").contains(BED));
    std::fs::write(root.join(BED), EDITED_BED).expect("edit the topic");
    assert!(found(&backend, "zebracorn").contains(BED), "seen at once, by the walk");
    write(&root, "topics/wildlife/quokka.md", visitor("quokka", "9a0b1c2d"));
    assert!(call(&backend, "memory_browse", json!({})).contains("topics/wildlife/quokka.md"));
    std::fs::remove_file(root.join(BED)).expect("delete the topic");
    assert!(!found(&backend, "tomatoes").contains(BED));
}
