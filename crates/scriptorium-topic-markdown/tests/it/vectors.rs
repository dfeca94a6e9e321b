//! Reference output as extra test data: the `bm25-world` topics (CJK, block links,
//! legacy sources) and every committed topic tree of the transaction vectors.

use std::path::Path;

use scriptorium_topic_markdown::{
    Baseline, Mode, NormalizeOptions, SourceResolver, normalize, parse_tree, topic_events,
};
use serde_json::Value;

use crate::support::{read_tree, sources, vectors};

/// Strictly valid, and normalizing it with itself as the committed state changes nothing.
fn assert_stable(workspace: &Path) -> usize {
    let resolver = SourceResolver::new(sources(workspace));
    let topics = read_tree(&workspace.join("topics"), "topics");
    let parsed = parse_tree(&topics, &resolver, Mode::Strict);
    assert!(parsed.violations().is_empty(), "{}: {:?}", workspace.display(), parsed.violations());
    let baseline = Baseline::from_units(parsed.units().iter().cloned());
    let out = normalize(&topics, &baseline, &resolver, &NormalizeOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", workspace.display()));
    for (path, bytes) in &topics {
        let got = out.files.get(path).map(Vec::as_slice);
        assert_eq!(got, Some(bytes.as_slice()), "{}: {path} changed", workspace.display());
    }
    assert!(out.block_id_map.is_empty() && out.evidence_id_map.is_empty());
    topics.len()
}

#[test]
fn committed_reference_trees_are_stable() {
    let Some(root) = vectors() else { return };
    let mut checked = assert_stable(&root.join("_resources/tx-base"));
    let cases = std::fs::read_dir(root.join("transaction")).expect("transaction vectors");
    for case in cases.flatten() {
        let after = case.path().join("after");
        // `uncited-only-file-pruned` installs what decision Q1 rejects (DIVERGENCES.md).
        if after.join("topics").is_dir() && !case.path().ends_with("uncited-only-file-pruned") {
            checked += assert_stable(&after);
        }
    }
    assert!(checked > 10, "only {checked} topic files checked");
}

#[test]
fn bm25_world_claim_events_match_the_index() {
    let Some(root) = vectors() else { return };
    let world = root.join("_resources/bm25-world");
    let resolver = SourceResolver::new(sources(&world));
    let topics = read_tree(&world.join("topics"), "topics");
    let parsed = parse_tree(&topics, &resolver, Mode::Lenient);
    let index: Value =
        serde_json::from_slice(&std::fs::read(root.join("bm25_index/world-events/expected.json")).expect("index"))
            .expect("json");
    // Block claims only: legacy `memory-event` markers and `D<n>:<m>` lines are the
    // retrieval layer's formats; trust is resolved there too.
    let mut want: Vec<String> = index["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["path"].as_str().is_some_and(|p| p.starts_with("topics/")))
        .filter(|e| e["event_id"].as_str().is_some_and(|id| id.contains(':')))
        .map(|e| {
            format!(
                "{} {} {} {} {} {:?} {} {:?}",
                e["path"], e["line"], e["event_id"], e["content"], e["date"], e["dates"], e["headings"], e["refs"]
            )
        })
        .collect();
    let mut got: Vec<String> = parsed
        .documents()
        .iter()
        .flat_map(|d| topic_events(d, &resolver))
        .map(|e| {
            let s = |v: &str| Value::String(v.to_owned());
            let list = |v: &[String]| Value::Array(v.iter().map(|x| s(x)).collect());
            format!(
                "{} {} {} {} {} {:?} {} {:?}",
                s(&e.path),
                e.line,
                s(&e.event_id),
                s(&e.content),
                s(&e.date),
                list(&e.dates),
                list(&e.headings),
                list(&e.refs)
            )
        })
        .collect();
    want.sort();
    got.sort();
    assert!(want.len() > 40, "only {} expected claim events", want.len());
    assert_eq!(got, want);
}
