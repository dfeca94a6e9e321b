//! Incremental commits (cached blobs, `HEAD`'s unchanged subtrees reused) make exactly
//! the trees a full build makes and Git makes: after every step of random add, modify,
//! delete and rename sequences over nested directories, `HEAD`'s tree id equals the id
//! of a build with no stat cache and no reuse, and `git write-tree` of `git add -A` of
//! the memory paths into a scratch index.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

use proptest::prelude::*;

use super::super::head_tree::HeadTree;
use super::super::snapshot::Snapshot;
use super::super::stat_cache::StatCache;
use super::{changes_for, git_ok};
use crate::history::{HISTORY_PATHS, History};
use crate::journal::Changes;
use crate::test_support::{TempDir, write_tree};

/// Directories the files go in: nested, side by side, and at the top of the memory paths.
const DIRS: &[&str] = &["", "topics", "topics/a", "topics/a/b", "topics/a/b/c", "topics/d", "sources/x", "timeline"];

/// File names; `core.md` at the top is a memory path itself.
const NAMES: &[&str] = &["core.md", "f.md", "g.md", "h.jsonl"];

/// One step of a sequence.
#[derive(Clone, Debug)]
enum Step {
    /// Write file `(dir, name)` with content variant `v` (add or modify; variants 0 and
    /// 1 have the same size).
    Write(usize, usize, u8),
    /// Delete the `n`-th existing file (modulo their count).
    Delete(usize),
    /// Rename the `n`-th existing file to `(dir, name)`.
    Rename(usize, usize, usize),
    /// Delete a whole directory.
    DeleteDir(usize),
}

fn arb_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..DIRS.len(), 0..NAMES.len(), 0..4u8).prop_map(|(d, n, v)| Step::Write(d, n, v)),
        2 => any::<usize>().prop_map(Step::Delete),
        2 => (any::<usize>(), 0..DIRS.len(), 0..NAMES.len()).prop_map(|(f, d, n)| Step::Rename(f, d, n)),
        1 => (1..DIRS.len()).prop_map(Step::DeleteDir),
    ]
}

/// How a step reaches history: committed from the disk, or staged as the transaction
/// stages it (prepared from changes, then installed, then published).
#[derive(Clone, Copy, Debug)]
enum Via {
    Disk,
    Staged,
}

/// The workspace-relative path of `(dir, name)`; `core.md` is only a memory path at the
/// top, so elsewhere it stands for itself in a directory.
fn path_of(dir: usize, name: usize) -> String {
    let (dir, name) = (DIRS[dir % DIRS.len()], NAMES[name % NAMES.len()]);
    match (dir, name) {
        ("", "core.md") => "core.md".to_owned(),
        ("", other) => format!("topics/{other}"),
        (dir, name) => format!("{dir}/{name}"),
    }
}

fn content(path: &str, variant: u8) -> Vec<u8> {
    match variant {
        0 => format!("{path}: one\n").into_bytes(),
        1 => format!("{path}: two\n").into_bytes(),
        2 => format!("{path}: a longer third version\n").into_bytes(),
        _ => Vec::new(),
    }
}

/// Every memory file on disk, sorted.
fn files_on_disk(root: &Path) -> Vec<String> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = format!("{prefix}/{}", entry.file_name().to_string_lossy());
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                walk(&entry.path(), &path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    for name in HISTORY_PATHS {
        if root.join(name).is_file() {
            out.push((*name).to_owned());
        } else {
            walk(&root.join(name), name, &mut out);
        }
    }
    out.sort();
    out
}

/// Age every memory file an hour, so the next commit records (and the one after trusts)
/// its stat: without it a fast test never uses the stat cache.
fn age_all(root: &Path) {
    let hour_ago = SystemTime::now() - Duration::from_secs(3600);
    for path in files_on_disk(root) {
        let file = std::fs::File::options().write(true).open(root.join(&path)).expect("open a memory file");
        file.set_modified(hour_ago).expect("set mtime");
    }
}

/// The changes of one step against the files on disk (applied to disk by the caller).
fn changes_of(root: &Path, step: &Step) -> Changes {
    let existing = files_on_disk(root);
    let pick = |n: usize| (!existing.is_empty()).then(|| existing[n % existing.len()].clone());
    match step {
        Step::Write(dir, name, variant) => {
            let path = path_of(*dir, *name);
            changes_for(&path, &content(&path, *variant))
        }
        Step::Delete(n) => pick(*n).map(|path| [(path, None)].into_iter().collect()).unwrap_or_default(),
        Step::Rename(n, dir, name) => {
            let Some(from) = pick(*n) else { return Changes::new() };
            let to = path_of(*dir, *name);
            if to == from {
                return Changes::new();
            }
            let bytes = std::fs::read(root.join(&from)).expect("read the renamed file");
            [(from, None), (to, Some(bytes))].into_iter().collect()
        }
        Step::DeleteDir(dir) => {
            let prefix = format!("{}/", DIRS[dir % DIRS.len()]);
            existing.into_iter().filter(|path| path.starts_with(&prefix)).map(|path| (path, None)).collect()
        }
    }
}

/// Install `changes` on disk as the transaction does (removing emptied directories).
fn install(root: &Path, changes: &Changes) {
    for (path, bytes) in changes {
        let target = root.join(path);
        match bytes {
            Some(bytes) => write_tree(root, &[(path.as_str(), bytes.as_slice())]),
            None => {
                std::fs::remove_file(&target).expect("remove a memory file");
                let mut dir = target.parent();
                while let Some(parent) = dir.filter(|parent| *parent != root) {
                    if std::fs::remove_dir(parent).is_err() {
                        break;
                    }
                    dir = parent.parent();
                }
            }
        }
    }
}

/// `git add -A` of the memory paths into a scratch index, then `git write-tree`.
fn git_write_tree(root: &Path, scratch: &Path) -> String {
    let _ = std::fs::remove_file(scratch);
    let run = |args: &[&str]| {
        let output = Command::new("git")
            .current_dir(root)
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_INDEX_FILE", scratch)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .output()
            .expect("git runs");
        assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    };
    let present: Vec<&str> = HISTORY_PATHS.iter().copied().filter(|name| root.join(name).exists()).collect();
    if !present.is_empty() {
        let mut args = vec!["add", "-A", "--"];
        args.extend(present);
        run(&args);
    }
    run(&["write-tree"])
}

/// One sequence: after each step, the three tree ids agree.
fn check_sequence(steps: &[(Step, Via, bool)]) -> Result<(), TestCaseError> {
    let dir = TempDir::new("history-incremental");
    let root = dir.path();
    write_tree(root, &[("core.md", b"# Core\n"), ("topics/a/b/f.md", b"deep\n"), ("topics/d/g.md", b"side\n")]);
    age_all(root);
    let history = History::open_or_init(root).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let scratch = root.join(".git").join("scratch-index");
    for (n, (step, via, age)) in steps.iter().enumerate() {
        let changes = changes_of(root, step);
        match via {
            Via::Disk => {
                install(root, &changes);
                history.commit("step").map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
            Via::Staged => {
                let prepared = history.prepare("step", &changes).map_err(|e| TestCaseError::fail(e.to_string()))?;
                install(root, &changes);
                if let Some(prepared) = prepared {
                    prepared.publish().map_err(|e| TestCaseError::fail(e.to_string()))?;
                }
            }
        }
        if *age {
            age_all(root);
        }
        let head = history.head().ok_or_else(|| TestCaseError::fail("HEAD after a step"))?;
        let head_tree = git_ok(root, &["rev-parse", &format!("{head}^{{tree}}")]).trim().to_owned();
        let full = Snapshot::scan(root)
            .map_err(|e| TestCaseError::fail(e.to_string()))?
            .write_tree(&history.repo, Vec::new(), &StatCache::default(), &HeadTree::default())
            .map_err(|e| TestCaseError::fail(e.to_string()))?
            .0
            .to_string();
        let git = git_write_tree(root, &scratch);
        prop_assert_eq!(&head_tree, &full, "step {} {:?}: the incremental tree differs from the full build", n, step);
        prop_assert_eq!(&head_tree, &git, "step {} {:?}: the tree differs from git write-tree", n, step);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24),
        ..ProptestConfig::default()
    })]

    #[test]
    fn incremental_trees_equal_the_full_build_and_git(
        steps in proptest::collection::vec(
            (arb_step(), prop_oneof![Just(Via::Disk), Just(Via::Staged)], any::<bool>()),
            1..12,
        )
    ) {
        check_sequence(&steps)?;
    }
}
