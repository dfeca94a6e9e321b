//! The creation order is seeded from the committed tree when `runtime.json` has none
//! (spec 02 §4.3): committed blocks rank first, in committed parse order, and a block a
//! transaction creates ranks after them wherever its file sorts.

use std::path::{Path, PathBuf};

use scriptorium_derived_views::DerivedViews;
use scriptorium_transaction::{RuntimeState, UpdateRequest, Workspace};
use serde_json::{Value, json};

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// The tx-base vector workspace in a scratch directory, with `runtime.json` as `runtime`
/// says: `None` removes it.
fn tx_base(name: &str, runtime: Option<&str>) -> Scratch {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/_resources/tx-base");
    let dir = std::env::temp_dir().join(format!("scriptorium-order-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_tree(&base, &dir).expect("copy the tx-base vector");
    let state = dir.join(".scriptorium/runtime.json");
    match runtime {
        Some(text) => std::fs::write(&state, text).expect("write runtime.json"),
        None => std::fs::remove_file(&state).expect("remove runtime.json"),
    }
    Scratch(dir)
}

/// The reference's ranks for tx-base (its own `runtime.json`): committed parse order.
const COMMITTED: [(&str, i64); 4] = [("ef8db871", 0), ("57c0a636", 1), ("0d9bb518", 2), ("6dfc15f1", 3)];

/// Create one record in `topic_path` and return the new block id, the ranks written and
/// the `memory_id` of the last line of `recent_events.jsonl` (the newest record).
fn create(root: &Path, topic_path: &str) -> (String, Vec<(String, i64)>, String) {
    let workspace = Workspace::open(root).expect("open");
    let args = json!({
        "base_revision": workspace.revision().expect("revision"),
        "git_commit": "off",
        "memory_changes": [{
            "op": "create_record",
            "content": "Craig bought a kettle.",
            "time": "2024-03-20",
            "source_refs": ["openprogram/sess-7f2a/m1"],
            "destination": {"topic_path": topic_path, "headings": ["Kitchen"], "position": "end"},
        }],
    });
    let request = UpdateRequest::from_json(&args).expect("a valid request");
    let result = workspace.update(&request, &DerivedViews::default()).expect("the update installs");
    let mut new_ids: Vec<&String> = result.block_ids.values().collect();
    new_ids.dedup();
    assert_eq!(new_ids.len(), 1, "one new block: {:?}", result.block_ids);
    let state = RuntimeState::parse(&std::fs::read(root.join(".scriptorium/runtime.json")).expect("runtime.json"));
    let ranks = state.creation_order().into_iter().map(|(id, rank)| (id.to_owned(), rank)).collect();
    let recent = std::fs::read_to_string(root.join("recent_events.jsonl")).expect("recent_events.jsonl");
    let last: Value = serde_json::from_str(recent.lines().last().expect("a line")).expect("JSON");
    (new_ids[0].clone(), ranks, last["memory_id"].as_str().unwrap_or_default().to_owned())
}

#[test]
fn a_new_block_ranks_after_every_committed_one_wherever_its_file_sorts() {
    // Before, between and after the committed files in parse order.
    let destinations = ["topics/aaa.md", "topics/people/a.md", "topics/pets.md", "topics/zzz/last.md"];
    let empty_order = "{\n  \"creation_order\": {},\n  \"local_batches\": 2\n}\n";
    for (n, topic_path) in destinations.into_iter().enumerate() {
        for (variant, runtime) in [("absent", None), ("empty", Some(empty_order))] {
            let scratch = tx_base(&format!("{n}-{variant}"), runtime);
            let (new_id, ranks, newest) = create(&scratch.0, topic_path);
            let mut want: Vec<(String, i64)> = COMMITTED.iter().map(|(id, rank)| ((*id).to_owned(), *rank)).collect();
            want.push((new_id.clone(), 4));
            assert_eq!(ranks, want, "{topic_path} with runtime.json {variant}");
            assert_eq!(newest, new_id, "{topic_path}: the new record is the newest recent event");
        }
    }
}

#[test]
fn a_seeded_order_keeps_the_other_runtime_counters() {
    let scratch = tx_base("counters", Some("{\"creation_order\": {}, \"local_batches\": 2, \"local_tokens\": 7}"));
    create(&scratch.0, "topics/aaa.md");
    let state = RuntimeState::parse(&std::fs::read(scratch.0.join(".scriptorium/runtime.json")).expect("runtime"));
    assert_eq!((state.local_batches, state.local_tokens), (2, 7));
}

#[test]
fn an_existing_order_is_not_reseeded() {
    // A hand-made order that is not parse order stays as it is; the new block comes next.
    let order = "{\"creation_order\": {\"6dfc15f1\": 0, \"0d9bb518\": 1, \"57c0a636\": 2, \"ef8db871\": 3}}";
    let scratch = tx_base("existing", Some(order));
    let (new_id, ranks, _) = create(&scratch.0, "topics/aaa.md");
    let want: Vec<(String, i64)> = [("6dfc15f1", 0), ("0d9bb518", 1), ("57c0a636", 2), ("ef8db871", 3)]
        .into_iter()
        .map(|(id, rank)| (id.to_owned(), rank))
        .chain([(new_id, 4)])
        .collect();
    assert_eq!(ranks, want);
}
