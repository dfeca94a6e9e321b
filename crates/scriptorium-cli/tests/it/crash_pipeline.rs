//! T1 over the whole write pipeline (spec 04 §C4): the real `scriptorium` binary runs an
//! update, a restore and a legacy `core.md` migration with `SCRIPTORIUM_CRASH_AT` armed at
//! every named crash point and every occurrence of it, and aborts there. After each
//! abort, `check --repair` recovers the workspace and the invariants are checked:
//!
//! - I1: the memory files equal the before-state or the after-state byte for byte, and
//!   exactly the before-state when the crash came before the commit point;
//! - I3: the derived views (and `runtime.json`) belong to that same state, because they
//!   are installed in the same atomic step as the edit;
//! - I5: `HEAD` is the recovered tree or the checkpoint before it, and the next update's
//!   checkpoint holds the recovered tree.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use scriptorium_transaction::History;
use scriptorium_transaction::crashpoint::{ENV, POINTS};

use crate::{TempDir, TestResult, copy_tree, run, scriptorium, vectors};

type Tree = BTreeMap<String, Vec<u8>>;
type Failure = Box<dyn std::error::Error>;

/// Points reached before the journal's commit point: a crash there leaves the before-state.
const BEFORE_COMMIT: &[&str] = &[
    "lock.acquired",
    "derive.built",
    "history.objects_written",
    "stage.after_write",
    "stage.after_fsync",
    "journal.manifest_synced",
];

const PREFS: &str = "topics/prefs.md";
/// A hand-written root `core.md` with root-relative links, from the core-render vector.
const LEGACY_CORE: &str = "transaction/core-render/after/core.md";

/// Every file I1 and I3 compare: the memory files, the derived views and `runtime.json`
/// (not the lock, the journal, caches or `.git`).
fn memory_tree(root: &Path) -> std::io::Result<Tree> {
    let mut tree = Tree::new();
    collect(root, root, &mut tree)?;
    Ok(tree)
}

fn collect(root: &Path, dir: &Path, tree: &mut Tree) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let relative = path.strip_prefix(root).map_err(std::io::Error::other)?.to_string_lossy().into_owned();
        let kept = ["topics", "sources", "timeline"].iter().any(|top| relative == *top || relative.starts_with(top))
            || ["core.md", "recent_events.jsonl", "relations.json", ".scriptorium", ".scriptorium/runtime.json"]
                .contains(&relative.as_str());
        if !kept {
            continue;
        }
        if entry.file_type()?.is_dir() {
            collect(root, &path, tree)?;
        } else {
            tree.insert(relative, std::fs::read(&path)?);
        }
    }
    Ok(())
}

fn topics_of(tree: &Tree) -> Tree {
    tree.iter().filter(|(path, _)| path.starts_with("topics/")).map(|(p, b)| (p.clone(), b.clone())).collect()
}

/// The topic files of `HEAD`'s commit.
fn head_topics(root: &Path) -> Result<Tree, Failure> {
    let history = History::open_or_init(root)?;
    let head = history.head().ok_or("no HEAD commit")?;
    Ok(history.files_at(&head, &["topics"])?)
}

fn json_file(dir: &TempDir, name: &str, value: &serde_json::Value) -> Result<std::path::PathBuf, Failure> {
    Ok(dir.write(name, value.to_string().as_bytes())?)
}

/// An update of `path` to `content` through the binary, with the crash point `armed`.
fn update_cmd(root: &Path, changes: &Path, armed: Option<&str>) -> Command {
    let mut cmd = scriptorium(root);
    cmd.args(["update", "--message", "crash scenario", "--workspace"]).arg(root).arg("--changes").arg(changes);
    if let Some(armed) = armed {
        cmd.env(ENV, armed);
    }
    cmd
}

/// One scenario: a prepared workspace and the command that changes it.
struct Scenario {
    name: &'static str,
    base: TempDir,
    /// Files outside the workspace the command reads.
    inputs: TempDir,
    command: fn(&Path, &Path, Option<&str>) -> Command,
}

fn edit_prefs(inputs: &Path, extra: &str) -> Result<std::path::PathBuf, Failure> {
    let prefs = std::fs::read_to_string(vectors().join("_resources/tx-base").join(PREFS))?;
    let changed = prefs.replace("green tea over coffee", &format!("green tea over coffee, {extra}"));
    let value = serde_json::json!([{"path": PREFS, "action": "write", "content": changed}]);
    let path = inputs.join(format!("edit-{extra}.json"));
    std::fs::write(&path, value.to_string())?;
    Ok(path)
}

fn setup_run(mut cmd: Command) -> TestResult {
    let out = run(&mut cmd)?;
    if out.code != Some(0) {
        return Err(format!("setup failed: {}{}", out.stdout, out.stderr).into());
    }
    Ok(())
}

/// tx-base with one checkpoint, edited once more.
fn edit_scenario() -> Result<Scenario, Failure> {
    let (base, inputs) = (TempDir::new()?, TempDir::new()?);
    copy_tree(&vectors().join("_resources/tx-base"), base.path())?;
    setup_run(update_cmd(base.path(), &edit_prefs(inputs.path(), "hot")?, None))?;
    edit_prefs(inputs.path(), "iced")?;
    Ok(Scenario {
        name: "edit-topic",
        base,
        inputs,
        command: |root, inputs, armed| update_cmd(root, &inputs.join("edit-iced.json"), armed),
    })
}

/// tx-base with `topics/prefs.md` deleted after the first checkpoint; the command
/// restores it from that checkpoint.
fn restore_scenario() -> Result<Scenario, Failure> {
    let (base, inputs) = (TempDir::new()?, TempDir::new()?);
    copy_tree(&vectors().join("_resources/tx-base"), base.path())?;
    setup_run(update_cmd(base.path(), &edit_prefs(inputs.path(), "hot")?, None))?;
    let checkpoint = History::open_or_init(base.path())?.head().ok_or("no checkpoint")?;
    std::fs::write(inputs.path().join("checkpoint"), &checkpoint)?;
    let delete = json_file(&inputs, "delete.json", &serde_json::json!([{"path": PREFS, "action": "delete"}]))?;
    setup_run(update_cmd(base.path(), &delete, None))?;
    Ok(Scenario {
        name: "restore-checkpoint",
        base,
        inputs,
        command: |root, inputs, armed| {
            let checkpoint = std::fs::read_to_string(inputs.join("checkpoint")).unwrap_or_default();
            let mut cmd = scriptorium(root);
            cmd.args(["restore", "--workspace"]).arg(root).args([checkpoint.as_str(), PREFS]);
            if let Some(armed) = armed {
                cmd.env(ENV, armed);
            }
            cmd
        },
    })
}

/// tx-base with a hand-written root `core.md` and no `topics/core.md`: the next install
/// promotes it (spec 01 §7.3) and renders `core.md` from it.
fn migrate_scenario() -> Result<Scenario, Failure> {
    let (base, inputs) = (TempDir::new()?, TempDir::new()?);
    copy_tree(&vectors().join("_resources/tx-base"), base.path())?;
    std::fs::copy(vectors().join(LEGACY_CORE), base.path().join("core.md"))?;
    // A first checkpoint of the legacy workspace, as any workspace with history has.
    History::open_or_init(base.path())?.commit("legacy workspace")?;
    edit_prefs(inputs.path(), "iced")?;
    Ok(Scenario {
        name: "migrate-legacy-core",
        base,
        inputs,
        command: |root, inputs, armed| update_cmd(root, &inputs.join("edit-iced.json"), armed),
    })
}

/// The state after the scenario's command runs without a crash.
fn after_state(scenario: &Scenario) -> Result<Tree, Failure> {
    let copy = TempDir::new()?;
    copy_tree(scenario.base.path(), copy.path())?;
    setup_run((scenario.command)(copy.path(), scenario.inputs.path(), None))?;
    Ok(memory_tree(copy.path())?)
}

/// Recover with `check --repair`, then check I1, I3 and I5 against `before`/`after`.
/// Returns whether `HEAD` is the checkpoint before the recovered tree.
fn check_recovered(root: &Path, point: &str, before: &Tree, after: &Tree) -> Result<bool, Failure> {
    let repair = run(scriptorium(root).args(["check", "--repair", "--workspace"]).arg(root))?;
    if repair.code != Some(0) {
        return Err(format!("check --repair exited {:?}: {}{}", repair.code, repair.stdout, repair.stderr).into());
    }
    let recovered = memory_tree(root)?;
    let is_after = &recovered == after;
    if !is_after && &recovered != before {
        let differ: Vec<&String> =
            after.keys().chain(recovered.keys()).filter(|p| recovered.get(*p) != after.get(*p)).collect();
        return Err(format!("I1/I3: neither before nor after; differs from after at {differ:?}").into());
    }
    if is_after && BEFORE_COMMIT.contains(&point) {
        return Err("I1: a crash before the commit point installed the change".into());
    }
    let head = head_topics(root)?;
    if head == topics_of(&recovered) {
        return Ok(false);
    }
    if is_after && head == topics_of(before) {
        return Ok(true);
    }
    Err("I5: HEAD is neither the recovered tree nor the checkpoint before it".into())
}

/// I5, second half: the next update's checkpoint holds the recovered tree.
fn check_next_checkpoint(root: &Path, inputs: &Path) -> TestResult {
    let topic = "topics/projects/budget-tracker.md";
    let content = std::fs::read_to_string(root.join(topic))?.replace("in Flask", "in Flask and SQLite");
    let changes = serde_json::json!([{"path": topic, "action": "write", "content": content}]);
    let path = inputs.join("next.json");
    std::fs::write(&path, changes.to_string())?;
    setup_run(update_cmd(root, &path, None))?;
    if head_topics(root)? != topics_of(&memory_tree(root)?) {
        return Err("I5: the next checkpoint does not hold the recovered tree".into());
    }
    Ok(())
}

/// Every point × every occurrence for one scenario; returns the number of crashes checked.
fn crash_everywhere(scenario: &Scenario) -> Result<usize, Failure> {
    let before = memory_tree(scenario.base.path())?;
    let after = after_state(scenario)?;
    if before == after {
        return Err(format!("{}: the scenario changes nothing", scenario.name).into());
    }
    let mut crashes = 0;
    for point in POINTS {
        for nth in 1.. {
            let state = TempDir::new()?;
            copy_tree(scenario.base.path(), state.path())?;
            let armed = format!("{point}:{nth}");
            let out = run(&mut (scenario.command)(state.path(), scenario.inputs.path(), Some(&armed)))?;
            if out.code == Some(0) {
                // The point is not reached that often (or at all) by this scenario.
                break;
            }
            if out.code.is_some() {
                return Err(format!("{} {armed}: failed without crashing: {}", scenario.name, out.stderr).into());
            }
            let context = |error: Failure| format!("{} {armed}: {error}", scenario.name);
            let head_behind = check_recovered(state.path(), point, &before, &after).map_err(context)?;
            // Only a crash between install and publish leaves HEAD behind the files; the
            // next checkpoint must then catch up (checked once per point otherwise).
            if head_behind || nth == 1 {
                check_next_checkpoint(state.path(), scenario.inputs.path()).map_err(context)?;
            }
            crashes += 1;
        }
    }
    Ok(crashes)
}

/// Every crash point of `scenario`: each scenario passes the derive, history and journal
/// points, several install renames, and recovery.
fn crash_test(scenario: Result<Scenario, Failure>) -> TestResult {
    let scenario = scenario?;
    let crashes = crash_everywhere(&scenario)?;
    assert!(crashes >= 15, "{}: only {crashes} crashes checked", scenario.name);
    Ok(())
}

#[test]
fn every_crash_point_of_an_update_recovers_to_one_state() -> TestResult {
    crash_test(edit_scenario())
}

#[test]
fn every_crash_point_of_a_restore_recovers_to_one_state() -> TestResult {
    crash_test(restore_scenario())
}

#[test]
fn every_crash_point_of_a_legacy_core_migration_recovers_to_one_state() -> TestResult {
    crash_test(migrate_scenario())
}

#[test]
fn the_migration_promotes_the_root_core_and_renders_it() -> TestResult {
    let scenario = migrate_scenario()?;
    let after = after_state(&scenario)?;
    let legacy = std::fs::read_to_string(vectors().join(LEGACY_CORE))?;
    let promoted = after.get("topics/core.md").ok_or("topics/core.md was not created")?;
    assert_eq!(String::from_utf8_lossy(promoted), legacy.replace("](sources/", "](../sources/"));
    // The rendered root file is the master's render: the same text with root links.
    assert_eq!(after.get("core.md").map(|b| String::from_utf8_lossy(b).into_owned()), Some(legacy));
    Ok(())
}
