//! One listing, one rule: on random trees (hidden and internal components, symbolic
//! links, directories named `*.md`, case and normalization variants, names that are not
//! UTF-8), the files `check` counts, search indexes and grep reads, and the files the
//! revision hashes, are each exactly the set the spec's rule gives.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use proptest::prelude::*;
use scriptorium_retrieval::{GREP_LIMIT_MAX, GrepRequest, grep, scan_workspace};
use scriptorium_transaction::{RealVfs, revision};
use sha2::{Digest, Sha256};

use crate::{TempDir, TestResult, run, scriptorium};

/// Directory components, raw bytes: plain, case variants, NFC and NFD `café`, hidden,
/// internal, the superseded layout, `*.md`, not UTF-8.
const DIRS: &[&[u8]] = &[
    b"a",
    b"A",
    b"caf\xc3\xa9",
    b"cafe\xcc\x81",
    b".git",
    b".scriptorium",
    b".h",
    b"x.md",
    b"memory-superseded",
    b"\xff",
];
/// File names, raw bytes.
const NAMES: &[&[u8]] = &[b"n.md", b"N.md", b".s.md", b"t.txt", b"\xfe.md", b"x.md", b"caf\xc3\xa9.md"];
/// Top-level directories, with internal ones.
const TOPS: &[&[u8]] =
    &[b"topics", b"sources", b"timeline", b".git", b".scriptorium", b".scriptorium-x", b".nativemem-y", b".h"];

/// One generated entry: a path and whether it is a symbolic link (to the first file).
type Spec = (Vec<u8>, bool);

fn entry() -> impl Strategy<Value = Spec> {
    (0..TOPS.len(), proptest::collection::vec(0..DIRS.len(), 0..3), 0..NAMES.len(), proptest::bool::weighted(0.2))
        .prop_map(|(top, dirs, name, link)| {
            let mut parts: Vec<&[u8]> = vec![TOPS.get(top).copied().unwrap_or(b"topics")];
            parts.extend(dirs.iter().filter_map(|d| DIRS.get(*d).copied()));
            parts.push(NAMES.get(name).copied().unwrap_or(b"n.md"));
            (parts.join(&b'/'), link)
        })
}

/// Whether the spec's internal rule (01 §1.2) takes the path out of the revision.
fn internal(path: &[u8]) -> bool {
    let first = path.split(|&b| b == b'/').next().unwrap_or_default();
    first == b".git"
        || [&b".scriptorium"[..], b".nativemem"]
            .iter()
            .any(|runtime| first.strip_prefix(*runtime).is_some_and(|rest| rest.is_empty() || rest.starts_with(b"-")))
}

/// Whether no reader may see the path: a component starting with `.`, `memory-superseded`,
/// or not UTF-8.
fn hidden(path: &[u8]) -> bool {
    std::str::from_utf8(path)
        .map_or(true, |text| text.split('/').any(|c| c.starts_with('.') || c == "memory-superseded"))
}

/// Whether two of `paths`, or directories on the way to them, are one file on a
/// case-insensitive, normalizing file system. The generated names differ only by ASCII
/// case and NFC/NFD `é`, so folding those two is the whole rule for them.
fn collides(paths: &BTreeSet<String>) -> bool {
    let mut spellings: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for path in paths {
        for (end, _) in path.match_indices('/').chain([(path.len(), "")]) {
            let Some(prefix) = path.get(..end) else { continue };
            let key = prefix.replace("e\u{301}", "\u{e9}").to_lowercase();
            if spellings.entry(key).or_insert_with(|| prefix.to_owned()) != prefix {
                return true;
            }
        }
    }
    false
}

fn memory(path: &str) -> bool {
    (path.starts_with("topics/") || path.starts_with("sources/")) && path.ends_with(".md")
}

/// Build the tree: regular files first (each holding one `needle` line), links last so
/// that no file is ever written through one. Returns the regular files made.
fn build(root: &Path, specs: &[Spec]) -> BTreeSet<Vec<u8>> {
    let mut files = BTreeSet::new();
    for (path, _) in specs.iter().filter(|(_, link)| !link) {
        let full = root.join(OsStr::from_bytes(path));
        let made = full.parent().is_some_and(|parent| std::fs::create_dir_all(parent).is_ok())
            && !full.exists()
            && std::fs::write(&full, b"needle\n").is_ok();
        if made {
            files.insert(path.clone());
        }
    }
    let target = files.iter().next().map(|first| root.join(OsStr::from_bytes(first)));
    for (path, _) in specs.iter().filter(|(_, link)| *link) {
        let full = root.join(OsStr::from_bytes(path));
        if full.symlink_metadata().is_err()
            && full.parent().is_some_and(|parent| std::fs::create_dir_all(parent).is_ok())
        {
            let _ = std::os::unix::fs::symlink(target.clone().unwrap_or_else(|| root.join("nowhere")), &full);
        }
    }
    // A link created above may have replaced a would-be parent: keep only real files.
    files.retain(|path| root.join(OsStr::from_bytes(path)).symlink_metadata().is_ok_and(|meta| meta.is_file()));
    files
}

/// The revision by the spec's formula over `files` (no runtime state file exists).
fn spec_revision(root: &Path, files: &BTreeSet<Vec<u8>>) -> String {
    let mut counted: Vec<&Vec<u8>> = files.iter().filter(|path| !internal(path)).collect();
    counted.sort_by(|a, b| a.split(|&x| x == b'/').cmp(b.split(|&x| x == b'/')));
    let mut hasher = Sha256::new();
    for path in counted {
        hasher.update(path);
        hasher.update([0]);
        hasher.update(std::fs::read(root.join(OsStr::from_bytes(path))).unwrap_or_default());
        hasher.update([0]);
    }
    hasher.finalize().iter().take(16).map(|byte| format!("{byte:02x}")).collect()
}

fn one_tree(specs: &[Spec]) -> TestResult {
    let ws = TempDir::new()?;
    let root = ws.path();
    std::fs::create_dir_all(root.join("topics"))?;
    let files = build(root, specs);
    let visible: BTreeSet<String> = files
        .iter()
        .filter(|path| !internal(path) && !hidden(path))
        .filter_map(|path| String::from_utf8(path.clone()).ok())
        .collect();
    let expected: BTreeSet<String> = visible.iter().filter(|path| memory(path)).cloned().collect();

    let out = run(scriptorium(root).args(["check", "--json", "--workspace"]).arg(root))?;
    let report = out.json().map_err(|e| format!("{e}: {}", out.stderr))?;
    let mut counted = BTreeSet::new();
    for section in ["topics", "archives"] {
        for file in report[section]["files"].as_array().ok_or("files")? {
            counted.insert(file["path"].as_str().ok_or("path")?.to_owned());
        }
    }
    assert_eq!(counted, expected, "check counts the memory files");
    let collision_warnings = report["listing"]["warnings"]
        .as_array()
        .map_or(0, |list| list.iter().filter(|w| w["code"] == "TXN_PATH_COLLISION").count());
    assert_eq!(collision_warnings > 0, collides(&expected), "check names case/normalization collisions");

    let indexed: BTreeSet<String> = scan_workspace(root)?.into_iter().map(|file| file.path).collect();
    assert_eq!(indexed, expected, "search indexes the memory files");

    let request = GrepRequest { limit: GREP_LIMIT_MAX, ..GrepRequest::new("needle") };
    let read: BTreeSet<String> = grep(root, &request)?.matches.into_iter().map(|m| m.path).collect();
    assert_eq!(read, visible, "grep reads the visible files");

    assert_eq!(revision(&RealVfs::new(root), ".scriptorium")?, spec_revision(root, &files), "the revision");
    Ok(())
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|cases| cases.parse().ok()).unwrap_or(24)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn check_search_grep_and_revision_agree_on_random_trees(
        specs in proptest::collection::vec(entry(), 1..14)
    ) {
        one_tree(&specs).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
}

/// Every skipped entry is a `listing` warning with its code; a hidden topic file fails
/// the `topics` section; a hidden archive is a warning.
#[test]
fn check_reports_every_skipped_entry_and_hidden_memory() -> TestResult {
    let ws = TempDir::new()?;
    ws.write("topics/ok.md", b"# Ok\n")?;
    ws.write("topics/.git/x.md", b"# Lost\n")?;
    ws.write("topics/x.md/inner.md", b"# Inner\n")?;
    ws.write("sources/.hidden/y.md", b"# y\n")?;
    std::os::unix::fs::symlink(ws.path().join("topics/ok.md"), ws.path().join("topics/link.md"))?;
    let fifo = std::process::Command::new("mkfifo").arg(ws.path().join("topics/pipe.md")).status()?;
    let out = run(scriptorium(ws.path()).args(["check", "--json", "--workspace"]).arg(ws.path()))?;
    assert_eq!(out.code, Some(1), "a hidden topic fails the check: {}", out.stdout);
    let report = out.json()?;
    let warnings: Vec<(&str, &str)> = report["listing"]["warnings"]
        .as_array()
        .ok_or("warnings")?
        .iter()
        .filter_map(|w| Some((w["path"].as_str()?, w["code"].as_str()?)))
        .collect();
    let mut want = vec![
        ("sources/.hidden/y.md", "TXN_HIDDEN_ARCHIVE"),
        ("topics/link.md", "TXN_SKIPPED_SYMLINK"),
        ("topics/x.md", "TXN_SKIPPED_MARKDOWN_DIR"),
    ];
    if fifo.success() {
        want.insert(2, ("topics/pipe.md", "TXN_SKIPPED_SPECIAL_FILE"));
    }
    assert_eq!(warnings, want);
    let violations: Vec<(&str, &str)> = report["topics"]["violations"]
        .as_array()
        .ok_or("violations")?
        .iter()
        .filter_map(|v| Some((v["path"].as_str()?, v["code"].as_str()?)))
        .collect();
    assert_eq!(violations, [("topics/.git/x.md", "TOPIC_INVALID_PATH")]);
    let files: Vec<&str> =
        report["topics"]["files"].as_array().ok_or("files")?.iter().filter_map(|f| f["path"].as_str()).collect();
    assert_eq!(files, ["topics/ok.md", "topics/x.md/inner.md"]);
    Ok(())
}

/// Paths already on disk that one case-insensitive or normalizing file system would
/// merge are named, each by its shortest colliding prefix.
#[test]
fn check_names_case_and_normalization_collisions_on_disk() -> TestResult {
    let ws = TempDir::new()?;
    ws.write("topics/Dave.md", b"# Dave\n")?;
    ws.write("topics/dave.md", b"# dave\n")?;
    ws.write("topics/caf\u{e9}/a.md", b"# a\n")?;
    ws.write("topics/cafe\u{301}/b.md", b"# b\n")?;
    let out = run(scriptorium(ws.path()).args(["check", "--json", "--workspace"]).arg(ws.path()))?;
    let report = out.json()?;
    let warnings: Vec<(&str, &str)> = report["listing"]["warnings"]
        .as_array()
        .ok_or("warnings")?
        .iter()
        .filter_map(|w| Some((w["path"].as_str()?, w["code"].as_str()?)))
        .collect();
    assert_eq!(warnings, [("topics/caf\u{e9}", "TXN_PATH_COLLISION"), ("topics/dave.md", "TXN_PATH_COLLISION")]);
    Ok(())
}

/// `check` validates citations by the install's rule: a `sources/` that is a symbolic
/// link holds no archive for the transaction, so it holds none for `check` either (it
/// used to follow the link and pass a workspace every install would refuse).
#[test]
fn check_resolves_citations_as_an_install_does() -> TestResult {
    let ws = TempDir::new()?;
    let root = ws.path().join("ws");
    crate::copy_tree(&crate::example_workspace(), &root)?;
    let clean = run(scriptorium(ws.path()).args(["check", "--json", "--workspace"]).arg(&root))?;
    assert_eq!(clean.code, Some(0), "{}", clean.stdout);
    std::fs::rename(root.join("sources"), ws.path().join("elsewhere"))?;
    std::os::unix::fs::symlink(ws.path().join("elsewhere"), root.join("sources"))?;
    let out = run(scriptorium(ws.path()).args(["check", "--json", "--workspace"]).arg(&root))?;
    assert_eq!(out.code, Some(1), "{}", out.stdout);
    let report = out.json()?;
    assert_eq!(report["listing"]["warnings"][0]["path"], "sources");
    assert_eq!(report["listing"]["warnings"][0]["code"], "TXN_SKIPPED_SYMLINK");
    assert_eq!(report["archives"]["files"].as_array().map(Vec::len), Some(0));
    assert_eq!(report["topics"]["ok"], false);
    assert_eq!(report["topics"]["resolved_sources"], 0);
    Ok(())
}
