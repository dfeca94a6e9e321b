//! The transaction vectors that use `memory_changes`, replayed without the pipeline:
//! substitute `new-source-*` labels by the vector's `source_ids`, apply the ops to the
//! `before` topics, normalize against the committed baseline, and compare the topic
//! files with `after/` byte for byte (or the normalizer's error with the expected one).

use std::collections::BTreeMap;
use std::path::Path;

use scriptorium_topic_markdown::{
    Baseline, MemorySources, Mode, NormalizeOptions, Removal, SourceResolver, normalize, parse_tree,
};
use serde_json::Value;

use crate::records::{apply_record_ops, parse_record_ops};
use crate::test_support::vectors;

/// Every file under `dir`, keyed `prefix/<relative path>`.
fn read_tree(dir: &Path, prefix: &str) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![(dir.to_path_buf(), prefix.to_owned())];
    while let Some((folder, key)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries {
            let entry = entry.expect("a listable entry");
            let child = format!("{key}/{}", entry.file_name().to_string_lossy());
            if entry.path().is_dir() {
                pending.push((entry.path(), child));
            } else {
                files.insert(child, std::fs::read(entry.path()).expect("a readable file"));
            }
        }
    }
    files
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("the vector file exists")).expect("valid JSON")
}

/// Replace every `new-source-*` label in the string values of `value` (longest first).
fn substitute(value: &mut Value, ids: &[(String, String)]) {
    match value {
        Value::String(text) => {
            for (label, id) in ids {
                *text = text.replace(label, id);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| substitute(item, ids)),
        Value::Object(fields) => fields.values_mut().for_each(|item| substitute(item, ids)),
        _ => {}
    }
}

/// Replay one vector; `Err` explains the first difference.
fn replay(case: &Path) -> Result<(), String> {
    let input = json(&case.join("input.json"));
    let expected = json(&case.join("expected.json"));
    let mut changes = input["args"]["memory_changes"].clone();
    let source_ids = expected["result"]["source_ids"].as_object().cloned().unwrap_or_default();
    let mut ids: Vec<(String, String)> =
        source_ids.iter().map(|(label, id)| (label.clone(), id.as_str().unwrap_or_default().to_owned())).collect();
    ids.sort_by_key(|(label, _)| std::cmp::Reverse(label.len()));
    substitute(&mut changes, &ids);

    let before = vectors().join(input["before"].as_str().expect("a before tree"));
    let after = case.join("after");
    // The after tree holds the sources this call archived; the before tree the rest.
    let source_root = if after.is_dir() { &after } else { &before };
    let sources =
        SourceResolver::new(read_tree(&source_root.join("sources"), "sources").into_iter().collect::<MemorySources>());
    let committed = read_tree(&before.join("topics"), "topics");
    let baseline = Baseline::from_units(parse_tree(&committed, &sources, Mode::Strict).units().iter().cloned());

    let mut staged = committed;
    let ops = parse_record_ops(&changes).map_err(|e| format!("parse: {} {}", e.code(), e.message()))?;
    let applied = apply_record_ops(&ops, &mut staged).map_err(|e| format!("apply: {} {}", e.code(), e.message()))?;
    let options = NormalizeOptions::with_removal(Removal::Only(applied.deleted_ids));
    let result = normalize(&staged, &baseline, &sources, &options);
    if expected["ok"] == Value::Bool(false) {
        let want = expected["error"]["message"].as_str().unwrap_or_default();
        return match result {
            Err(violations) if violations.to_string().contains(want) => Ok(()),
            Err(violations) => Err(format!("normalize failed with {violations}, want {want}")),
            Ok(_) => Err(format!("normalize succeeded, want {want}")),
        };
    }
    let normalized = result.map_err(|v| format!("normalize: {v}"))?;
    let want = read_tree(&after.join("topics"), "topics");
    if normalized.files != want {
        let show = |files: &BTreeMap<String, Vec<u8>>| {
            files.iter().map(|(p, b)| format!("== {p}\n{}", String::from_utf8_lossy(b))).collect::<String>()
        };
        return Err(format!("topics differ.\ngot:\n{}\nwant:\n{}", show(&normalized.files), show(&want)));
    }
    let minted = serde_json::to_value(&normalized.evidence_id_map).map_err(|e| e.to_string())?;
    if minted != expected["result"]["evidence_ids"] {
        return Err(format!("evidence ids {minted}, want {}", expected["result"]["evidence_ids"]));
    }
    Ok(())
}

/// The vectors this replay reproduces: every `memory_changes` vector whose outcome is
/// decided by the topic text (the others fail in the pipeline, before or after it).
const REPLAYED: &[&str] = &[
    "create-before-anchor",
    "update-record",
    "delete-record",
    "core-render",
    "source-bytes-exact",
    "err-dangling-link",
    "err-topic-link-no-block",
];

#[test]
fn transaction_vectors_replay_through_the_normalizer() {
    let failures: Vec<String> = REPLAYED
        .iter()
        .filter_map(|name| replay(&vectors().join("transaction").join(name)).err().map(|e| format!("{name}: {e}")))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_replay_covers_every_memory_changes_vector_it_can() {
    // The remaining vectors are refused by parse (err-unknown-field, err-invalid-time), by
    // the id lookup (err-memory-not-found) or by the append-only rule of the pipeline.
    let mut others = Vec::new();
    for entry in std::fs::read_dir(vectors().join("transaction")).expect("the vectors exist") {
        let dir = entry.expect("an entry").path();
        let input = json(&dir.join("input.json"));
        let name = dir.file_name().expect("a name").to_string_lossy().into_owned();
        if input["args"].get("memory_changes").is_some() && !REPLAYED.contains(&name.as_str()) {
            others.push(name);
        }
    }
    others.sort();
    assert_eq!(others, ["err-append-only", "err-invalid-time", "err-memory-not-found", "err-unknown-field"]);
}

#[test]
fn the_refused_vectors_fail_with_their_code_and_message() {
    for name in ["err-invalid-time", "err-memory-not-found", "err-unknown-field"] {
        let case = vectors().join("transaction").join(name);
        let input = json(&case.join("input.json"));
        let expected = json(&case.join("expected.json"));
        let mut topics = read_tree(&vectors().join(input["before"].as_str().expect("before")).join("topics"), "topics");
        let error = match parse_record_ops(&input["args"]["memory_changes"]) {
            Ok(ops) => apply_record_ops(&ops, &mut topics).expect_err("refused"),
            Err(error) => error,
        };
        assert_eq!(error.code().as_str(), expected["error"]["code"], "{name}");
        assert_eq!(error.message(), expected["error"]["message"], "{name}");
    }
}

/// The base tree of the transaction vectors: its sources, committed topics and baseline.
fn base() -> (SourceResolver<MemorySources>, BTreeMap<String, Vec<u8>>, Baseline) {
    let before = vectors().join("_resources/tx-base");
    let sources =
        SourceResolver::new(read_tree(&before.join("sources"), "sources").into_iter().collect::<MemorySources>());
    let committed = read_tree(&before.join("topics"), "topics");
    let baseline = Baseline::from_units(parse_tree(&committed, &sources, Mode::Strict).units().iter().cloned());
    (sources, committed, baseline)
}

#[test]
fn a_move_to_another_directory_normalizes_with_relinked_sources() {
    let (sources, mut staged, baseline) = base();
    let ops = parse_record_ops(&serde_json::json!([{"op": "move_records", "memory_ids": ["57c0a636", "ef8db871"],
        "destination": {"topic_path": "topics/family.md", "headings": ["Family"], "position": "end"}}]))
    .expect("valid");
    let applied = apply_record_ops(&ops, &mut staged).expect("applies");
    let options = NormalizeOptions::with_removal(Removal::Only(applied.deleted_ids));
    let normalized = normalize(&staged, &baseline, &sources, &options).expect("normalizes");
    let link = "[openprogram/sess-7f2a/m3](../sources/openprogram/_v2/sess-7f2a.md#source-8ae45631f3876daa)";
    let want = format!(
        "# Family\n\nShe works at a tea shop.[^e-eebb845436] ^57c0a636\n\n\
         [^e-eebb845436]: Time: `2024-03-15`; Sources: {link}\n\n\
         Mei is Craig's sister and lives in Kyoto.[^e-adf5b26e76] ^ef8db871\n\n\
         [^e-adf5b26e76]: Time: `2024-03-15`; Sources: {link}\n"
    );
    let got = normalized.files.get("topics/family.md").map(|b| String::from_utf8_lossy(b).into_owned());
    assert_eq!(got.as_deref(), Some(want.as_str()));
    assert_eq!(normalized.pruned, ["topics/people/mei.md"]);
}
