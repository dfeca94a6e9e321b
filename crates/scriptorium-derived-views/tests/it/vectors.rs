//! Every successful transaction vector: derive from its `after/` topics and sources (and
//! the `before` runtime.json and derived files) and compare the derived files with the
//! `after/` tree — byte for byte, `runtime.json` by meaning (decision Q8). This checks
//! the views independently of the transaction pipeline.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use scriptorium_derived_views::DerivedViews;
use serde_json::Value;

const RUNTIME_DIR: &str = ".scriptorium";

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors")
}

/// Every file under `dir`, keyed by its path relative to `base`.
fn read_tree(base: &Path, dir: &str, into: &mut BTreeMap<String, Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(base.join(dir)) else { return };
    for entry in entries {
        let entry = entry.expect("directory entry");
        let name = entry.file_name().into_string().expect("UTF-8 file name");
        let relative = if dir.is_empty() { name } else { format!("{dir}/{name}") };
        if entry.file_type().expect("file type").is_dir() {
            read_tree(base, &relative, into);
        } else {
            into.insert(relative, std::fs::read(entry.path()).expect("readable file"));
        }
    }
}

fn is_derived(path: &str) -> bool {
    path == "core.md" || path.starts_with("timeline/") || path == "recent_events.jsonl" || path == "relations.json"
}

/// The differences for one case, empty when every derived file matches.
fn check_case(case: &Path) -> Vec<String> {
    let input: Value = serde_json::from_slice(&std::fs::read(case.join("input.json")).expect("input")).expect("JSON");
    let before_rel = input["before"].as_str().expect("before tree");
    let before = vectors().join(before_rel);
    let after = case.join("after");
    let mut before_files = BTreeMap::new();
    read_tree(&before, "", &mut before_files);
    let mut after_files = BTreeMap::new();
    read_tree(&after, "", &mut after_files);

    // The stage: after's topics and sources, before's derived files and runtime state.
    let mut staged: BTreeMap<String, Vec<u8>> = after_files
        .iter()
        .filter(|(path, _)| path.starts_with("topics/") || path.starts_with("sources/"))
        .map(|(p, b)| (p.clone(), b.clone()))
        .collect();
    for (path, bytes) in &before_files {
        if is_derived(path) || path.starts_with(RUNTIME_DIR) {
            staged.insert(path.clone(), bytes.clone());
        }
    }
    let mut views = DerivedViews::default();
    if let Some(budget) = input["config"]["core_max_tokens"].as_u64() {
        views.core_budget = usize::try_from(budget).expect("budget fits");
    }
    let derived = match views.build(&staged, RUNTIME_DIR) {
        Ok(derived) => derived,
        Err(error) => return vec![format!("derive failed: {error}")],
    };
    let mut result = staged.clone();
    for (path, bytes) in derived.files {
        match bytes {
            Some(bytes) => result.insert(path, bytes),
            None => result.remove(&path),
        };
    }

    let mut problems = Vec::new();
    let derived_paths: std::collections::BTreeSet<&String> =
        result.keys().chain(after_files.keys()).filter(|path| is_derived(path)).collect();
    for path in derived_paths {
        match (result.get(path), after_files.get(path)) {
            (Some(got), Some(want)) if got == want => {}
            (Some(got), Some(want)) => problems.push(format!(
                "{path} differs:\n--- got\n{}\n--- want\n{}",
                String::from_utf8_lossy(got),
                String::from_utf8_lossy(want)
            )),
            (Some(_), None) => problems.push(format!("{path}: written, absent from after/")),
            (None, _) => problems.push(format!("{path}: missing")),
        }
    }
    let runtime = format!("{RUNTIME_DIR}/runtime.json");
    let as_json = |bytes: Option<&Vec<u8>>| bytes.and_then(|b| serde_json::from_slice::<Value>(b).ok());
    if as_json(result.get(&runtime)) != as_json(after_files.get(&runtime)) {
        problems.push(format!("{runtime} differs in meaning"));
    }
    problems
}

#[test]
fn derived_files_match_every_successful_transaction_vector() {
    let root = vectors().join("transaction");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("transaction vectors")
        .map(|entry| entry.expect("entry").path())
        .filter(|dir| dir.join("after").is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 10, "expected the successful transaction cases, found {}", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let problems = check_case(case);
        if !problems.is_empty() {
            failures.push(format!("{}:\n{}", case.display(), problems.join("\n")));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases differ:\n{}", failures.len(), cases.len(), failures.join("\n\n"));
}
