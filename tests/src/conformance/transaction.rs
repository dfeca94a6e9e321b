//! `transaction`: `Workspace::update` on a copy of the case's `before` tree, history
//! off. A rejection must carry the expected code and leave every byte in place; a
//! success must report the expected ids and leave `topics/` and `sources/` byte for byte
//! as expected.
//!
//! Derived files (`core.md`, `timeline/`, `recent_events.jsonl`, `relations.json`,
//! `runtime.json`) and the revision that hashes them belong to the derived-views layer:
//! until [`derive_step`] returns a real implementation, a case whose every other check
//! passes reports `TODO derived-views`, never PASS.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use serde_json::{Value, json};

use scriptorium_derived_views::DerivedViews;
use scriptorium_transaction::{Derive, UpdateRequest, Workspace};

use super::temp_dir::TempDir;
use super::{Case, Outcome, diff_json};

/// The case our decision Q1 answers differently: uncited text is rejected, not pruned.
const Q1_CASE: &str = "transaction/uncited-only-file-pruned";

/// The derive step under test, and whether it is the real one. Plug the derived-views
/// implementation in here (returning `true`) to check derived files and the revision.
fn derive_step(case: &Case) -> (Box<dyn Derive>, bool) {
    let mut views = DerivedViews::default();
    // A case may lower the core budget (`MemoryConfig.core_max_tokens`) to exercise the cut.
    if let Some(budget) = case.input.pointer("/config/core_max_tokens").and_then(Value::as_u64) {
        views.core_budget = usize::try_from(budget).unwrap_or(usize::MAX);
    }
    (Box::new(views), true)
}

pub(super) fn run(case: &Case) -> Outcome {
    let workspace = match TempDir::new("transaction") {
        Ok(dir) => dir,
        Err(e) => return Outcome::fail(format!("cannot create a temporary workspace: {e}")),
    };
    check(case, workspace.path()).unwrap_or_else(Outcome::Fail)
}

fn check(case: &Case, root: &Path) -> Result<Outcome, String> {
    let before = match case.input.get("before").and_then(Value::as_str) {
        Some(resource) => case.resource(resource),
        None => case.dir.join("before"),
    };
    copy_tree(&before, root).map_err(|e| format!("cannot copy {}: {e}", before.display()))?;
    let workspace = Workspace::open(root).map_err(|e| format!("open: {e}"))?;
    let revision = workspace.revision().map_err(|e| format!("revision: {e}"))?;
    let want_revision = case.expected.get("before_revision").and_then(Value::as_str).ok_or("no before_revision")?;
    if revision != want_revision {
        return Err(format!("revision of before: got {revision}, want {want_revision}"));
    }
    let mut args = case.input.get("args").cloned().ok_or("no args")?;
    if args.get("base_revision").and_then(Value::as_str) == Some("$CURRENT") {
        args["base_revision"] = json!(want_revision);
    }
    let snapshot = visible_files(root).map_err(|e| format!("snapshot: {e}"))?;
    let (derive, real_derive) = derive_step(case);
    let outcome = UpdateRequest::from_json(&args).and_then(|request| workspace.update(&request, derive.as_ref()));
    let after = visible_files(root).map_err(|e| format!("snapshot after: {e}"))?;

    let want_ok = case.expected.get("ok").and_then(Value::as_bool).unwrap_or(false);
    match (outcome, want_ok) {
        (Err(error), false) => {
            let want = case.expected.pointer("/error/code").and_then(Value::as_str).unwrap_or_default();
            if error.code().as_str() != want {
                return Err(format!("code: got {} ({error}), want {want}", error.code()));
            }
            unchanged(&snapshot, &after)?;
            Ok(Outcome::Pass)
        }
        (Err(error), true) if case.id == Q1_CASE && error.code().as_str() == "INVALID_TOPIC_FORMAT" => {
            unchanged(&snapshot, &after)?;
            Ok(Outcome::Diverges("Q1".to_owned()))
        }
        (Err(error), true) => Err(format!("rejected: {error}")),
        (Ok(result), false) => Err(format!("accepted (revision {}), want an error", result.revision)),
        (Ok(result), true) => {
            let got = result.to_json();
            let want = case.expected.get("result").ok_or("no expected result")?;
            for key in ["source_ids", "block_ids", "evidence_ids", "memory_committed", "git_committed", "git_commit"] {
                diff_json(&format!("result.{key}"), &got[key], &want[key])?;
            }
            let memory = |files: &Value| -> Vec<Value> {
                let list = files.as_array().cloned().unwrap_or_default();
                list.into_iter().filter(|path| path.as_str().is_some_and(is_memory_path) || real_derive).collect()
            };
            diff_json(
                "result.changed_files",
                &json!(memory(&got["changed_files"])),
                &json!(memory(&want["changed_files"])),
            )?;
            compare_files(case, &after, real_derive)?;
            if real_derive {
                diff_json("result.revision", &got["revision"], &want["revision"])?;
                Ok(Outcome::Pass)
            } else {
                Ok(Outcome::Todo("derived-views"))
            }
        }
    }
}

/// `topics/` and `sources/`: the files whose bytes this layer writes itself.
fn is_memory_path(path: &str) -> bool {
    path.starts_with("topics/") || path.starts_with("sources/")
}

fn unchanged(before: &BTreeMap<String, Vec<u8>>, after: &BTreeMap<String, Vec<u8>>) -> Result<(), String> {
    match before.iter().zip(after.iter()).find(|(b, a)| b != a) {
        Some(((path, _), _)) => Err(format!("workspace changed at {path}")),
        None if before.len() != after.len() => Err("workspace gained or lost files".to_owned()),
        None => Ok(()),
    }
}

/// Every expected file (all of them once derived views are real, else those under
/// `topics/` and `sources/`) byte for byte, and no extra file in those trees.
fn compare_files(case: &Case, after: &BTreeMap<String, Vec<u8>>, all: bool) -> Result<(), String> {
    let files = case.expected.get("files").and_then(Value::as_object).ok_or("no expected files")?;
    let wanted = |path: &str| all || is_memory_path(path);
    for (path, entry) in files.iter().filter(|(path, _)| wanted(path)) {
        let source = entry.get("path").and_then(Value::as_str).ok_or(format!("files.{path} has no path"))?;
        let want = case.read(source)?;
        match after.get(path) {
            Some(got) if *got == want => {}
            Some(got) => {
                return Err(format!("{path} differs:\n{}", String::from_utf8_lossy(got)));
            }
            None => return Err(format!("{path}: missing")),
        }
    }
    match after.keys().find(|path| wanted(path) && !files.contains_key(*path)) {
        Some(extra) => Err(format!("{extra}: unexpected file")),
        None => Ok(()),
    }
}

/// Every file a revision would see: the tree without `.scriptorium/` except its
/// `runtime.json`.
fn visible_files(root: &Path) -> io::Result<BTreeMap<String, Vec<u8>>> {
    let mut files = BTreeMap::new();
    walk(root, "", &mut files)?;
    files.retain(|path, _| !path.starts_with(".scriptorium/") || path == ".scriptorium/runtime.json");
    Ok(files)
}

fn walk(dir: &Path, prefix: &str, files: &mut BTreeMap<String, Vec<u8>>) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(&entry.path(), &format!("{name}/"), files)?;
        } else if kind.is_file() {
            files.insert(name, std::fs::read(entry.path())?);
        }
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}
