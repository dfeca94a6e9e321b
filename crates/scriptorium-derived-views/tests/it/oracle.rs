//! Token counts identical to Python tiktoken's o200k_base on a multilingual oracle
//! (English, Chinese, Japanese, code, emoji, long runs, special-token strings), generated
//! by `cargo xtask gen-o200k-oracle` and committed, so this test needs no Python.

use scriptorium_derived_views::count_o200k;
use serde_json::Value;

const ORACLE: &str = include_str!("../data/o200k_oracle.jsonl");

#[test]
fn every_oracle_count_matches_tiktoken() {
    let mut checked = 0;
    let mut mismatches = Vec::new();
    for (n, line) in ORACLE.lines().enumerate() {
        let row: Value = serde_json::from_str(line).expect("an oracle line is JSON");
        let text = row["text"].as_str().expect("text");
        let want = row["count"].as_u64().expect("count");
        let got = count_o200k(text) as u64;
        if got != want {
            mismatches.push(format!("line {}: {} got {got}, want {want}: {:?}", n + 1, row["kind"], text));
        }
        checked += 1;
    }
    assert!(checked >= 2000, "the oracle holds {checked} paragraphs, want at least 2000");
    assert!(mismatches.is_empty(), "{} of {checked} counts differ:\n{}", mismatches.len(), mismatches.join("\n"));
}
