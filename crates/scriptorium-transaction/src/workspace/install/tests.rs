//! Raw installs against a freshly opened workspace: after an install beside the topics
//! (frames appended, a new archive, the runtime state, a derived file) the warm
//! workspace's next update has the outcome, the installed bytes and the committed side
//! that a workspace opened afresh after the same install has, with the cache kept across
//! the install instead of reloaded. An install that writes a topic or rewrites an archive
//! forgets the cache, and the next update sees the new bytes.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use scriptorium_archive_format::{SourceRecord, plan_append};
use scriptorium_topic_markdown::{SourceResolver, Unit};
use serde_json::{Value, json};

use crate::derive::{Derive, DerivedFiles, NoDerivedViews};
use crate::error::{Error, ErrorCode};
use crate::journal::{Changes, Installed};
use crate::runtime_state::RuntimeState;
use crate::test_support::{TempDir, vectors};
use crate::update::{StageSources, UpdateRequest, UpdateResult};
use crate::workspace::Workspace;

type TestResult = Result<(), Box<dyn std::error::Error>>;
/// The committed topics and the baseline's units.
type CommittedSide = (BTreeMap<String, Vec<u8>>, Vec<Unit>);
/// Raw changes made from a workspace root.
type MakeChanges = fn(&Path) -> Result<Changes, Box<dyn std::error::Error>>;

const ARCHIVE: &str = "sources/openprogram/_v2/sess-7f2a.md";
/// A committed, trusted frame of `ARCHIVE` that `topics/prefs.md` cites.
const OLD_SOURCE: &str = "openprogram/sess-7f2a/m4";

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

/// A fresh copy of the vectors' `tx-base`.
fn base(label: &str) -> Result<TempDir, Box<dyn std::error::Error>> {
    let dir = TempDir::new(label);
    copy_tree(&vectors().join("_resources/tx-base"), dir.path())?;
    Ok(dir)
}

/// Every file but the journal directory, the lock and its queue, and the workspace id.
fn files(root: &Path) -> std::io::Result<BTreeMap<String, Vec<u8>>> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Vec<u8>>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
            let skipped = [".scriptorium/txn", ".scriptorium/write.lock", ".scriptorium/lock-queue"];
            // The normal-form marker is a cache of its own, free to differ.
            let cache = [".scriptorium/workspace-id", ".scriptorium/committed-normal"];
            if skipped.contains(&name.as_str()) || cache.contains(&name.as_str()) {
                continue;
            }
            if entry.file_type()?.is_dir() {
                walk(&entry.path(), &format!("{name}/"), out)?;
            } else {
                out.insert(name, std::fs::read(entry.path())?);
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    walk(root, "", &mut out)?;
    Ok(out)
}

fn record_op(op: Value) -> Result<UpdateRequest, Error> {
    UpdateRequest::from_json_at_current(&json!({"memory_changes": [op], "git_commit": "off"}))
}

/// A new record in its own topic citing `source`.
fn create_citing(source: &str, topic: &str) -> Result<UpdateRequest, Error> {
    record_op(json!({
        "op": "create_record", "content": format!("Craig said so in {source}."), "time": null,
        "source_refs": [source],
        "destination": {"topic_path": topic, "headings": ["Said"], "position": "end"}}))
}

/// What an update gave, comparable across workspaces.
fn outcome(result: Result<UpdateResult, Error>) -> Result<Value, String> {
    result
        .map(|r| {
            json!([
                r.revision,
                r.source_ids,
                r.block_ids,
                r.evidence_ids,
                r.changed_files,
                r.dropped_files,
                r.memory_committed
            ])
        })
        .map_err(|error| format!("{}: {error}", error.code().as_str()))
}

/// The committed side the workspace's cache gives the next update: topics and baseline.
fn committed_side(workspace: &Workspace) -> Result<CommittedSide, Error> {
    let revision = workspace.revision()?;
    let no_plan = BTreeMap::new();
    let sources = SourceResolver::new(StageSources::new(workspace.vfs(), &no_plan));
    let mut cache = workspace.committed_cache();
    let view = cache.refresh(workspace.vfs(), &revision, &sources, &BTreeMap::new(), || false)?;
    let units = view
        .baseline
        .ids()
        .into_iter()
        .filter_map(|id| view.baseline.unit(id))
        .map(|unit| Unit { created_order: 0, ..unit.clone() })
        .collect();
    Ok((view.topics.clone(), units))
}

/// Raw changes of one kind, made against `workspace` as the writer runtime makes them.
fn beside(kind: &str, workspace: &Workspace) -> Result<Changes, Box<dyn std::error::Error>> {
    let record = |thread: &str, message: &str| {
        let (provider, thread) = thread.split_once('/').unwrap_or(("openprogram", thread));
        let mut record = SourceRecord::new(provider, thread, message, 100, "user", format!("turn {message}"));
        record.timestamp = Some("2024-03-20T10:00:00+00:00".to_owned());
        record
    };
    let archived = |records: &[SourceRecord]| -> Result<Changes, Box<dyn std::error::Error>> {
        let plan = plan_append(records, &workspace.archive_tree())?;
        Ok(plan.files.into_iter().map(|file| (file.path, Some(file.bytes))).collect())
    };
    let mut state = workspace.runtime_state();
    state.local_batches += 3;
    let runtime = || (workspace.runtime_state_path(), Some(state.to_bytes()));
    Ok(match kind {
        "append" => archived(&[record("sess-7f2a", "n1"), record("sess-7f2a", "n2")])?,
        "new archive" => archived(&[record("sess-new", "n1")])?,
        "runtime state" => Changes::from([runtime()]),
        "derived file" => Changes::from([("relations.json".to_owned(), Some(b"{}\n".to_vec()))]),
        "append and runtime state" => {
            let mut changes = archived(&[record("sess-7f2a", "n1")])?;
            changes.extend([runtime()]);
            changes
        }
        "append to a pending frame's archive" => archived(&[record("telegram/group-100", "n1")])?,
        _ => return Err(format!("no such kind {kind}").into()),
    })
}

/// A topic citing `openprogram/sess-7f2a/n1` before it is archived.
fn cites_ahead() -> String {
    let id = "openprogram/sess-7f2a/n1";
    let anchor = scriptorium_archive_format::source_anchor(id);
    format!(
        "# Ahead\n\nCraig will say so.[^e-1] ^abcd5678\n\n[^e-1]: Time: `2024-03-20`; Sources: [{id}](../{ARCHIVE}#{anchor})\n"
    )
}

/// One raw install, under `lock` or a lock of its own.
fn install(workspace: &Workspace, changes: &Changes) -> Result<Installed, Error> {
    let lock = workspace.lock(Duration::from_secs(5))?;
    workspace.install(&lock, changes)
}

#[test]
fn an_install_beside_the_topics_keeps_the_cache_and_updates_as_a_fresh_workspace() -> TestResult {
    // Each kind, with a committed topic that already cites (unresolved) a frame the
    // install appends or not.
    let kinds = [
        ("append", "openprogram/sess-7f2a/n1", false),
        ("append", "openprogram/sess-7f2a/n1", true),
        ("new archive", "openprogram/sess-new/n1", false),
        ("runtime state", OLD_SOURCE, false),
        ("derived file", OLD_SOURCE, false),
        ("append and runtime state", "openprogram/sess-7f2a/n1", true),
        ("append to a pending frame's archive", "telegram/group-100/n1", false),
    ];
    for (kind, cited, ahead) in kinds {
        for same_hold in [false, true] {
            let label = format!("beside-{}-{ahead}-{same_hold}", kind.replace(' ', "-").replace('\'', ""));
            let (warm_dir, cold_dir) = (base(&format!("{label}-warm"))?, base(&format!("{label}-cold"))?);
            if ahead {
                for dir in [&warm_dir, &cold_dir] {
                    std::fs::write(dir.path().join("topics/ahead.md"), cites_ahead())?;
                }
            }
            let warm = Workspace::open(warm_dir.path())?;
            let cold = Workspace::open(cold_dir.path())?;
            // One update each, so the caches hold the tree the raw install starts from (a
            // topic citing ahead fails it, but not before the cache was loaded).
            let first = create_citing(OLD_SOURCE, "topics/first.md")?;
            let expect_first = |result: Result<UpdateResult, Error>| match result {
                Err(error) if ahead => {
                    assert_eq!(error.code(), ErrorCode::InvalidTopicFormat, "{error}");
                    Ok(())
                }
                result => result.map(drop),
            };
            let changes = if same_hold {
                let lock = warm.lock(Duration::from_secs(5))?;
                expect_first(warm.update_locked(&lock, &first, &NoDerivedViews))?;
                let changes = beside(kind, &warm)?;
                let installed = warm.install(&lock, &changes)?;
                assert!(installed.moved.is_some(), "{kind}, same hold: the cache is kept");
                changes
            } else {
                expect_first(warm.update(&first, &NoDerivedViews))?;
                let changes = beside(kind, &warm)?;
                assert!(install(&warm, &changes)?.moved.is_some(), "{kind}: the cache is kept");
                changes
            };
            expect_first(cold.update(&first, &NoDerivedViews))?;
            install(&cold, &changes)?;
            drop(cold);
            let cold = Workspace::open(cold_dir.path())?;
            // The revision the cache moved to is the one a walk finds.
            let current = warm.revision()?;
            assert_eq!(warm.committed_cache().valid_at(), Some(current.as_str()), "{kind}");
            assert_eq!(files(warm_dir.path())?, files(cold_dir.path())?, "{kind}: the install");

            // Citing the appended frame, then a frame that does not exist.
            for (n, source) in [cited, "openprogram/sess-7f2a/zz9"].into_iter().enumerate() {
                let request = create_citing(source, &format!("topics/next-{n}.md"))?;
                let (a, b) = (warm.update(&request, &NoDerivedViews), cold.update(&request, &NoDerivedViews));
                assert_eq!(a.is_ok(), n == 0, "{kind}: citing {source}: {a:?}");
                assert_eq!(outcome(a), outcome(b), "{kind}: citing {source}");
                assert_eq!(files(warm_dir.path())?, files(cold_dir.path())?, "{kind}: citing {source}");
            }
            assert_eq!(committed_side(&warm)?, committed_side(&cold)?, "{kind}");
        }
    }
    Ok(())
}

/// Derived views that pass the staged `runtime.json` through, so the creation order the
/// derive step was given (seeded or not) is what installs.
struct EchoRuntime;

impl Derive for EchoRuntime {
    fn derive(&self, staged: &BTreeMap<String, Vec<u8>>, runtime_dir: &str) -> Result<DerivedFiles, Error> {
        let path = format!("{runtime_dir}/runtime.json");
        Ok(staged.get(&path).map(|bytes| (path, Some(bytes.clone()))).into_iter().collect())
    }
}

#[test]
fn a_runtime_state_without_a_creation_order_is_seeded_again() -> TestResult {
    let (warm_dir, cold_dir) = (base("order-warm")?, base("order-cold")?);
    let warm = Workspace::open(warm_dir.path())?;
    let cold = Workspace::open(cold_dir.path())?;
    let mut ordered = RuntimeState::default();
    ordered.set_rank("0d9bb518", 0);
    let runtime = |state: &RuntimeState| Changes::from([(warm.runtime_state_path(), Some(state.to_bytes()))]);
    // A first update learns that the committed state has a creation order ...
    for workspace in [&warm, &cold] {
        install(workspace, &runtime(&ordered))?;
        workspace.update(&create_citing(OLD_SOURCE, "topics/first.md")?, &EchoRuntime)?;
    }
    // ... which a raw install then takes away: the next update must seed it again.
    assert!(install(&warm, &runtime(&RuntimeState::default()))?.moved.is_some());
    install(&cold, &runtime(&RuntimeState::default()))?;
    drop(cold);
    let cold = Workspace::open(cold_dir.path())?;
    let request = create_citing(OLD_SOURCE, "topics/second.md")?;
    assert_eq!(outcome(warm.update(&request, &EchoRuntime)), outcome(cold.update(&request, &EchoRuntime)));
    assert_eq!(files(warm_dir.path())?, files(cold_dir.path())?);
    assert!(warm.runtime_state().has_creation_order(), "seeded from the committed tree");
    Ok(())
}

/// `topics/prefs.md` with a second block, `abcd1234`, that only a raw install adds.
fn prefs_with_a_second_block(root: &Path) -> std::io::Result<Vec<u8>> {
    let mut text = std::fs::read_to_string(root.join("topics/prefs.md"))?;
    let definition = text.lines().last().unwrap_or_default().replace("[^e-d7b532f365]", "[^e-x1]");
    text.push_str(&format!("\nCraig likes oolong too.[^e-x1] ^abcd1234\n\n{definition}\n"));
    Ok(text.into_bytes())
}

/// `ARCHIVE` cut before frame m4, which `topics/prefs.md` cites.
fn archive_without_m4(root: &Path) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(root.join(ARCHIVE))?;
    let cut = text.find("<a id=\"source-382c7493ef6b9537\"></a>").ok_or("frame m4")?;
    Ok(text.get(..cut).ok_or("prefix")?.as_bytes().to_vec())
}

#[test]
fn a_raw_install_of_a_topic_or_a_rewritten_archive_forgets_the_cache() -> TestResult {
    let delete = json!({"op": "delete_record", "memory_id": "abcd1234"});
    let cases: [(&str, MakeChanges, Value); 2] = [
        (
            "topic",
            |root| Ok(Changes::from([("topics/prefs.md".to_owned(), Some(prefs_with_a_second_block(root)?))])),
            delete,
        ),
        (
            "rewrite",
            |root| Ok(Changes::from([(ARCHIVE.to_owned(), Some(archive_without_m4(root)?))])),
            json!({
            "op": "update_record", "memory_id": "0d9bb518", "content": "Craig prefers sencha.", "time": null,
            "source_refs": [OLD_SOURCE]}),
        ),
    ];
    for (kind, changes, op) in cases {
        let (warm_dir, cold_dir) = (base(&format!("raw-{kind}-warm"))?, base(&format!("raw-{kind}-cold"))?);
        let warm = Workspace::open(warm_dir.path())?;
        warm.update(&create_citing(OLD_SOURCE, "topics/first.md")?, &NoDerivedViews)?;
        let installed = install(&warm, &changes(warm_dir.path())?)?;
        assert_eq!(installed.moved, None, "{kind}");
        assert_eq!(warm.committed_cache().valid_at(), None, "{kind}");
        let cold = Workspace::open(cold_dir.path())?;
        cold.update(&create_citing(OLD_SOURCE, "topics/first.md")?, &NoDerivedViews)?;
        install(&cold, &changes(cold_dir.path())?)?;
        drop(cold);
        let cold = Workspace::open(cold_dir.path())?;
        let request = record_op(op)?;
        let (a, b) = (warm.update(&request, &NoDerivedViews), cold.update(&request, &NoDerivedViews));
        // The topic's new block is there to delete; the rewritten archive lacks m4.
        assert_eq!(a.is_ok(), kind == "topic", "{kind}: {a:?}");
        assert_eq!(outcome(a), outcome(b), "{kind}");
        assert_eq!(files(warm_dir.path())?, files(cold_dir.path())?, "{kind}");
        assert_eq!(committed_side(&warm)?, committed_side(&cold)?, "{kind}");
    }
    Ok(())
}

#[test]
fn a_hand_edit_before_a_raw_install_is_seen_by_the_next_update() -> TestResult {
    for same_hold in [false, true] {
        let dir = base(&format!("raw-hand-{same_hold}"))?;
        let workspace = Workspace::open(dir.path())?;
        let lock = workspace.lock(Duration::from_secs(5))?;
        workspace.update_locked(&lock, &create_citing(OLD_SOURCE, "topics/first.md")?, &NoDerivedViews)?;
        // Not through the lock: the next walk sees it, whether or not the install did.
        std::fs::write(dir.path().join("topics/prefs.md"), prefs_with_a_second_block(dir.path())?)?;
        let changes = beside("runtime state", &workspace)?;
        let installed = if same_hold {
            let installed = workspace.install(&lock, &changes);
            drop(lock);
            installed?
        } else {
            drop(lock);
            install(&workspace, &changes)?
        };
        // Under the same hold the install takes the tree as the cache holds it; under a
        // new one it walks, finds the edit and forgets the cache.
        assert_eq!(installed.moved.is_some(), same_hold);
        assert_ne!(workspace.committed_cache().valid_at(), Some(workspace.revision()?.as_str()));
        let delete = record_op(json!({"op": "delete_record", "memory_id": "abcd1234"}))?;
        let result = workspace.update(&delete, &NoDerivedViews)?;
        assert_eq!(result.changed_files, ["topics/prefs.md"], "same hold: {same_hold}");
    }
    Ok(())
}
