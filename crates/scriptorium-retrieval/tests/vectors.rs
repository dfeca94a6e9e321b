//! The golden `bm25_search` vectors, compared *exactly*: the conformance runner allows
//! 1e-6, but the scores are computed in the reference's float order and rounded with
//! Python's rule, so every rounded score must be bit-identical.

use std::path::{Path, PathBuf};

use scriptorium_retrieval::{Bm25Options, Filters, Index, Score};
use serde_json::Value;

fn vectors() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors");
    dir.join("index.json").is_file().then_some(dir)
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("readable")).expect("JSON")
}

#[test]
fn search_scores_are_bit_identical() {
    let Some(root) = vectors() else { return };
    let index = Index::from_workspace(&root.join("_resources/bm25-world")).expect("world");
    let mut compared = 0;
    for case in std::fs::read_dir(root.join("bm25_search")).expect("cases").flatten() {
        let params = read(&case.path().join("input.json"))["params"].clone();
        let expected = read(&case.path().join("expected.json"));
        let text = |key: &str| params[key].as_str().map(str::to_owned);
        let options = Bm25Options {
            top_k: params["top_k"].as_u64().map_or(8, |k| k as usize),
            rerank: params["rerank"].as_bool().unwrap_or(true),
            filters: Filters {
                path_prefix: text("path_prefix"),
                date_from: text("date_from"),
                date_to: text("date_to"),
                speaker: text("speaker"),
                include_sources: true,
            },
        };
        let result = index.search(&text("query").expect("query"), &options);
        let Some(rows) = expected["results"].as_array() else {
            assert!(result.is_err(), "{:?} should fail", case.path());
            continue;
        };
        let hits = result.expect("search");
        assert_eq!(hits.len(), rows.len(), "{:?}", case.path());
        for (hit, row) in hits.iter().zip(rows) {
            let Score::Bm25(score) = &hit.score else { panic!("BM25 score") };
            assert_eq!(hit.event.event_id, row["event_id"].as_str().expect("id"));
            for (got, key) in [
                (score.final_score, "final_score"),
                (score.bm25_score, "bm25_score"),
                (score.lexical_score, "lexical_score"),
                (score.rule_adjustment, "rule_adjustment"),
            ] {
                assert_eq!(got.to_bits(), row[key].as_f64().expect("number").to_bits(), "{:?} {key}", case.path());
                compared += 1;
            }
        }
    }
    assert!(compared > 400, "only {compared} scores compared");
}
