//! Tests of [`Workspace::update`] on real temporary workspaces (copies of the vectors'
//! `tx-base`): each rejection leaves every byte in place; successes install evidence
//! and prose together.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::derive::NoDerivedViews;
use crate::error::ErrorCode;
use crate::history::History;
use crate::test_support::{TempDir, vectors, write_tree};
use crate::update::{GitMode, UpdateRequest};
use crate::workspace::Workspace;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const PREFS: &str = "topics/prefs.md";

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

/// A fresh copy of `tx-base`, opened.
fn base(label: &str) -> Result<(TempDir, Workspace), Box<dyn std::error::Error>> {
    let dir = TempDir::new(label);
    copy_tree(&vectors().join("_resources/tx-base"), dir.path())?;
    let workspace = Workspace::open(dir.path())?;
    Ok((dir, workspace))
}

/// Every file outside `.scriptorium/` and `.git/`, for "nothing changed" checks.
fn files(root: &Path) -> std::io::Result<BTreeMap<String, Vec<u8>>> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Vec<u8>>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
            if name == ".scriptorium" || name == ".git" {
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

fn request(workspace: &Workspace, mut fields: Value) -> Result<UpdateRequest, Box<dyn std::error::Error>> {
    fields["base_revision"] = json!(workspace.revision()?);
    if fields.get("git_commit").is_none() {
        fields["git_commit"] = json!("off");
    }
    Ok(UpdateRequest::from_json(&fields)?)
}

fn owner() -> Value {
    json!({"principal_id": "owner", "speaker_kind": "human", "speaker_id": "owner/local",
           "speaker_display": "Owner", "authority_tier": "owner", "origin_id": "s/t1"})
}

/// Run a request that must be rejected with `code`; check nothing changed.
fn rejected(workspace: &Workspace, fields: Value, code: ErrorCode) -> TestResult {
    let before = files(workspace.root())?;
    let revision = workspace.revision()?;
    let mut fields = fields;
    fields["base_revision"] = json!(revision);
    fields["git_commit"] = json!("off");
    let error = match UpdateRequest::from_json(&fields) {
        Ok(request) => workspace.update(&request, &NoDerivedViews).err().ok_or("the update was accepted")?,
        Err(error) => error,
    };
    assert_eq!(error.code(), code, "{error}");
    assert_eq!(files(workspace.root())?, before);
    assert_eq!(workspace.revision()?, revision);
    Ok(())
}

#[test]
fn a_stale_base_revision_is_a_concurrent_update_with_both_revisions() -> TestResult {
    let (_dir, workspace) = base("stale")?;
    let mut fields = json!({"changes": [{"path": "topics/x.md", "action": "delete"}], "git_commit": "off"});
    fields["base_revision"] = json!("0123");
    let error = workspace.update(&UpdateRequest::from_json(&fields)?, &NoDerivedViews).err().ok_or("accepted")?;
    assert_eq!(error.code(), ErrorCode::ConcurrentUpdate);
    assert_eq!(error.details().get("base_revision"), Some(&json!("0123")));
    assert_eq!(error.details().get("revision"), Some(&json!(workspace.revision()?)));
    Ok(())
}

#[test]
fn evidence_installs_with_the_prose_citing_it_and_history_records_it() -> TestResult {
    let (dir, workspace) = base("evidence")?;
    let content = "# Tea\n\nCraig drinks sencha.[^e1]\n\n[^e1]: Time: `2024-05-01`; Sources: [c](new-source-a)\n";
    let fields = json!({
        "changes": [{"path": "topics/tea.md", "action": "write", "content": content}],
        "sources": [{"label": "new-source-a", "role": "user", "content": "I drink sencha."}],
        "provenance": owner(), "git_commit": "on", "commit_message": "add tea",
    });
    let result = workspace.update(&request(&workspace, fields)?, &NoDerivedViews)?;
    let source_id = result.source_ids.get("new-source-a").ok_or("no source id")?;
    let archive = result.changed_files.iter().find(|p| p.starts_with("sources/")).ok_or("no archive written")?;
    assert!(std::fs::read_to_string(dir.path().join(archive))?.contains(source_id.as_str()));
    let tea = std::fs::read_to_string(dir.path().join("topics/tea.md"))?;
    assert!(tea.contains(&format!("(../{archive}#")), "{tea}");
    assert_eq!(result.revision, workspace.revision()?);
    let commit = result.git_commit.ok_or("no commit")?;
    let history = History::open_or_init(dir.path())?;
    let newest = history.list(1)?;
    assert_eq!(newest.first().map(|e| (e.id.as_str(), e.message.as_str())), Some((commit.as_str(), "add tea")));
    Ok(())
}

#[test]
fn a_write_that_silently_drops_a_block_id_is_rejected_naming_it() -> TestResult {
    let (_dir, workspace) = base("drop")?;
    let before = files(workspace.root())?;
    let fields = json!({"changes": [{"path": PREFS, "action": "write", "content": "# Preferences\n"}]});
    let error = workspace.update(&request(&workspace, fields)?, &NoDerivedViews).err().ok_or("accepted")?;
    assert_eq!(error.code(), ErrorCode::InvalidTopicFormat);
    assert!(Value::Object(error.details().clone()).to_string().contains("0d9bb518"), "{:?}", error.details());
    assert_eq!(files(workspace.root())?, before);
    Ok(())
}

#[test]
fn a_whole_file_delete_may_remove_its_block_ids() -> TestResult {
    let (dir, workspace) = base("delete")?;
    let fields = json!({"changes": [{"path": PREFS, "action": "delete"}]});
    let result = workspace.update(&request(&workspace, fields)?, &NoDerivedViews)?;
    assert_eq!(result.changed_files, [PREFS]);
    assert!(!dir.path().join(PREFS).exists());
    Ok(())
}

#[test]
fn append_only_accepts_an_appended_record_and_refuses_a_rewrite() -> TestResult {
    let (dir, workspace) = base("append")?;
    let old = std::fs::read_to_string(dir.path().join(PREFS))?;
    let rewrite = old.replace("green tea", "black tea");
    rejected(
        &workspace,
        json!({"append_only": true, "changes": [{"path": PREFS, "action": "write", "content": rewrite}]}),
        ErrorCode::AppendOnlyRequired,
    )?;
    let fields = json!({"append_only": true, "memory_changes": [{
        "op": "create_record", "content": "Craig likes oolong.", "time": null,
        "source_refs": ["openprogram/sess-7f2a/m4"],
        "destination": {"topic_path": "topics/drinks.md", "headings": ["Drinks"], "position": "end"}}]});
    let result = workspace.update(&request(&workspace, fields)?, &NoDerivedViews)?;
    assert_eq!(result.changed_files, ["topics/drinks.md"]);
    Ok(())
}

#[test]
fn a_new_citation_of_a_pending_source_is_rejected() -> TestResult {
    let (_dir, workspace) = base("pending")?;
    let fields = json!({"memory_changes": [{
        "op": "create_record", "content": "Someone said hi.", "time": null,
        "source_refs": ["telegram/group-100/g1"],
        "destination": {"topic_path": "topics/hi.md", "headings": ["Hi"], "position": "end"}}]});
    rejected(&workspace, fields, ErrorCode::InvalidTopicFormat)
}

#[test]
fn top_level_arguments_are_checked_before_anything_else() -> TestResult {
    let (_dir, workspace) = base("args")?;
    let both = json!({"patch": "x", "changes": [], "base_revision": "r"});
    assert_eq!(UpdateRequest::from_json(&both).err().map(|e| e.code()), Some(ErrorCode::InvalidArgument));
    let empty = json!({"changes": [], "base_revision": "r"});
    assert_eq!(UpdateRequest::from_json(&empty).err().map(|e| e.code()), Some(ErrorCode::InvalidArgument));
    let unproven = json!({"changes": [{"path": PREFS, "action": "delete"}], "base_revision": "r",
                          "sources": [{"label": "new-source-a", "role": "user", "content": "x"}]});
    let error = UpdateRequest::from_json(&unproven).err().map(|e| e.code());
    assert_eq!(error, Some(ErrorCode::WriterPreconditionFailed));
    rejected(&workspace, json!({"changes": [{"path": "../x.md", "action": "delete"}]}), ErrorCode::PathOutsideWorkspace)
}

#[test]
fn an_undeclared_label_is_a_missing_source() -> TestResult {
    let (_dir, workspace) = base("label")?;
    let content = "# T\n\nA fact.[^e1]\n\n[^e1]: Time: `2024`; Sources: [x](new-source-b)\n";
    rejected(
        &workspace,
        json!({"changes": [{"path": "topics/t.md", "action": "write", "content": content}]}),
        ErrorCode::MissingSource,
    )
}

#[test]
fn git_mode_defaults_to_auto() -> TestResult {
    let fields = json!({"changes": [{"path": PREFS, "action": "delete"}], "base_revision": "r"});
    assert_eq!(UpdateRequest::from_json(&fields)?.git_commit, GitMode::Auto);
    Ok(())
}

#[test]
fn the_snapshot_marks_a_claim_citing_a_pending_source_pending() -> TestResult {
    let dir = TempDir::new("snapshot");
    copy_tree(&vectors().join("_resources/tx-base"), dir.path())?;
    let pending = "# G\n\nHello from the group.[^e-1] ^aaaaaaaa\n\n[^e-1]: Time: `2024`; Sources: [g1](../sources/telegram/_v2/group-100.md#source-c5abce8940d6277f)\n";
    write_tree(dir.path(), &[("topics/g.md", pending.as_bytes())]);
    let workspace = Workspace::open(dir.path())?;
    let snapshot = workspace.snapshot()?;
    assert_eq!(snapshot.revision, workspace.revision()?);
    let trust: BTreeMap<&str, bool> =
        snapshot.claims.iter().map(|claim| (claim.unit.memory_id.as_str(), claim.trusted)).collect();
    assert_eq!(trust.get("0d9bb518"), Some(&true));
    assert_eq!(trust.get("aaaaaaaa"), Some(&false));
    Ok(())
}

#[test]
fn repair_quarantines_an_unreadable_archive_tail_and_keeps_the_prefix() -> TestResult {
    let (dir, workspace) = base("repair")?;
    let archive = "sources/openprogram/_v2/sess-7f2a.md";
    let good = std::fs::read(dir.path().join(archive))?;
    let mut damaged = good.clone();
    damaged.extend_from_slice(b"garbage that is not a frame\n");
    std::fs::write(dir.path().join(archive), &damaged)?;
    let repaired = workspace.repair_archives()?;
    let first = repaired.first().ok_or("nothing repaired")?;
    assert_eq!(first.path, archive);
    assert!(first.kept_bytes > 0 && first.kept_bytes < good.len() + 1);
    let (prefix, tail) = damaged.split_at(first.kept_bytes);
    assert!(std::fs::read(dir.path().join(archive))? == prefix, "the archive is not its valid prefix");
    assert!(std::fs::read(dir.path().join(&first.quarantined))? == tail, "the quarantine does not hold the tail");
    let text = String::from_utf8(prefix.to_vec())?;
    assert!(scriptorium_archive_format::parse(&text, archive).is_complete());
    assert!(workspace.repair_archives()?.is_empty());
    Ok(())
}

/// A topic at `path` that cites the base's trusted frame, so that normalization keeps it.
fn cited_at(path: &str) -> String {
    let up = "../".repeat(path.matches('/').count());
    format!(
        "# Topic\n\nCraig likes it.[^e1]\n\n[^e1]: Time: `2024-03-16`; Sources: \
         [openprogram/sess-7f2a/m4]({up}sources/openprogram/_v2/sess-7f2a.md#source-382c7493ef6b9537)\n"
    )
}

#[test]
fn a_topic_path_differing_only_by_case_or_normalization_is_refused_whole() -> TestResult {
    let (_dir, workspace) = base("collide")?;
    // Against a committed file, and against a committed directory on the way.
    for path in ["topics/Prefs.md", "topics/People/dave.md", "topics/PEOPLE/mei.md"] {
        let fields = json!({"changes": [{"path": path, "action": "write", "content": cited_at(path)}]});
        rejected(&workspace, fields, ErrorCode::InvalidArgument)?;
    }
    // NFC and NFD spellings of one name within one request: neither file is written.
    let fields = json!({"changes": [
        {"path": "topics/caf\u{e9}.md", "action": "write", "content": cited_at("topics/a.md")},
        {"path": "topics/cafe\u{301}.md", "action": "write", "content": cited_at("topics/b.md")},
    ]});
    rejected(&workspace, fields.clone(), ErrorCode::InvalidArgument)?;
    let mut fields = fields;
    fields["base_revision"] = json!(workspace.revision()?);
    fields["git_commit"] = json!("off");
    let error = workspace
        .update(&UpdateRequest::from_json(&fields)?, &NoDerivedViews)
        .err()
        .ok_or("the update was accepted")?;
    let collides = error.details().get("collides_with").and_then(Value::as_str).ok_or("no collides_with")?;
    let mut pair = [error.path().ok_or("no path")?, collides];
    pair.sort_unstable();
    assert_eq!(pair, ["topics/cafe\u{301}.md", "topics/caf\u{e9}.md"]);
    // A case-distinct name that folds to no other path is fine.
    let fields =
        json!({"changes": [{"path": "topics/tea.md", "action": "write", "content": cited_at("topics/tea.md")}]});
    let mut request = request(&workspace, fields)?;
    request.citations = crate::update::CitationScope::AnyTrusted;
    workspace.update(&request, &NoDerivedViews)?;
    Ok(())
}

#[test]
fn no_write_reaches_a_hidden_or_internal_component() -> TestResult {
    let (_dir, workspace) = base("hidden")?;
    for (path, code) in [
        ("topics/.git/x.md", ErrorCode::PathOutsideWorkspace),
        ("topics/.scriptorium/x.md", ErrorCode::PathOutsideWorkspace),
        ("topics/.hidden/x.md", ErrorCode::ReadOnlyPath),
        ("topics/people/.x.md", ErrorCode::ReadOnlyPath),
    ] {
        let fields = json!({"changes": [{"path": path, "action": "write", "content": cited_at(path)}]});
        rejected(&workspace, fields, code)?;
    }
    Ok(())
}

#[test]
fn a_rejected_update_creates_no_history_and_an_installed_one_does() -> TestResult {
    let (dir, workspace) = base("lazy-history")?;
    let mut fields = json!({"changes": [{"path": "topics/x.md", "action": "delete"}]});
    fields["base_revision"] = json!(workspace.revision()?);
    let error = workspace.update(&UpdateRequest::from_json(&fields)?, &NoDerivedViews).err().ok_or("accepted")?;
    assert_eq!(error.code(), ErrorCode::PatchConflict);
    assert!(!dir.path().join(".git").exists(), "a rejected update initialised history");

    fields["changes"] = json!([{"path": PREFS, "action": "delete"}]);
    let result = workspace.update(&UpdateRequest::from_json(&fields)?, &NoDerivedViews)?;
    assert!(result.git_committed);
    assert!(dir.path().join(".git").is_dir());
    Ok(())
}

#[test]
fn a_request_without_a_base_is_based_on_the_revision_under_the_lock() -> TestResult {
    let (_dir, workspace) = base("at-current")?;
    // Absent from a tool request, the base is required; the owner's parse allows it.
    let fields = json!({"changes": [{"path": PREFS, "action": "delete"}], "git_commit": "off"});
    assert_eq!(UpdateRequest::from_json(&fields).err().map(|e| e.code()), Some(ErrorCode::InvalidArgument));
    let request = UpdateRequest::from_json_at_current(&fields)?;
    assert_eq!(request.base_revision, None);
    // Another edit lands in between: a fixed base would now be stale, this one is not.
    let other = UpdateRequest::from_json_at_current(
        &json!({"changes": [{"path": "topics/people/mei.md", "action": "delete"}], "git_commit": "off"}),
    )?;
    workspace.update(&other, &NoDerivedViews)?;
    let result = workspace.update(&request, &NoDerivedViews)?;
    assert_eq!(result.changed_files.iter().filter(|p| p.as_str() == PREFS).count(), 1, "{result:?}");
    Ok(())
}

#[test]
fn a_cancelled_update_installs_nothing() -> TestResult {
    let (dir, workspace) = base("cancelled")?;
    let before = files(dir.path())?;
    let request = UpdateRequest::at_current(crate::update::Edit::Changes(vec![crate::update::FileChange {
        path: crate::paths::TopicPath::new(PREFS)?,
        content: None,
    }]));
    let error = workspace.update_cancellable(&request, &NoDerivedViews, &|| true).err().ok_or("installed")?;
    assert_eq!(error.code(), ErrorCode::Cancelled);
    assert_eq!(files(dir.path())?, before);
    assert!(!dir.path().join(".git").exists());
    Ok(())
}

#[test]
fn a_headings_only_topic_is_reported_as_dropped() -> TestResult {
    let (_dir, workspace) = base("dropped")?;
    let written =
        json!({"changes": [{"path": "topics/empty.md", "action": "write", "content": "# Empty\n\n## None\n"}]});
    let result = workspace.update(&request(&workspace, written)?, &NoDerivedViews)?;
    assert_eq!(result.dropped_files, ["topics/empty.md"]);
    assert_eq!(result.to_json()["dropped_files"], json!(["topics/empty.md"]));
    Ok(())
}

#[test]
fn sources_changed_in_place_are_found_against_history_and_restored() -> TestResult {
    let (dir, workspace) = base("rewritten")?;
    let archive = "sources/openprogram/_v2/sess-7f2a.md";
    let committed = std::fs::read(dir.path().join(archive))?;
    let mut fields = json!({"changes": [{"path": PREFS, "action": "delete"}], "git_commit": "on"});
    fields["base_revision"] = json!(workspace.revision()?);
    workspace.update(&UpdateRequest::from_json(&fields)?, &NoDerivedViews)?;
    let history = History::open_existing(dir.path())?.ok_or("no history")?;
    assert_eq!(history.rewritten_sources()?, Vec::new());

    // An append is fine; an in-place change is not.
    let mut appended = committed.clone();
    appended.extend_from_slice(b"tail\n");
    std::fs::write(dir.path().join(archive), &appended)?;
    assert_eq!(history.rewritten_sources()?, Vec::new());
    let mut altered = committed.clone();
    let at = altered.len() / 2;
    altered[at] ^= 0x01;
    std::fs::write(dir.path().join(archive), &altered)?;
    let found = history.rewritten_sources()?;
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].path.as_str(), found[0].first_difference), (archive, at));

    let restored = workspace.repair_rewritten_sources()?;
    assert_eq!(restored.len(), 1);
    assert_eq!(std::fs::read(dir.path().join(archive))?, committed);
    let quarantined = restored[0].quarantined.as_deref().ok_or("nothing quarantined")?;
    assert_eq!(std::fs::read(dir.path().join(quarantined))?, altered[at..]);
    assert_eq!(history.rewritten_sources()?, Vec::new());
    Ok(())
}

#[test]
fn update_locked_runs_under_the_callers_lock_and_refuses_another_workspaces() -> TestResult {
    let (dir, workspace) = base("locked")?;
    let (_other_dir, other) = base("locked-other")?;
    let content = "# Tea\n\nCraig drinks sencha.[^e1]\n\n[^e1]: Time: `2024-05-01`; Sources: [c](new-source-a)\n";
    let fields = json!({
        "changes": [{"path": "topics/tea.md", "action": "write", "content": content}],
        "sources": [{"label": "new-source-a", "role": "user", "content": "I drink sencha."}],
        "provenance": owner(),
    });
    let foreign = other.lock(crate::lock::BACKGROUND_LOCK_TIMEOUT)?;
    let before = files(dir.path())?;
    let error = workspace.update_locked(&foreign, &request(&workspace, fields.clone())?, &NoDerivedViews);
    assert_eq!(error.err().map(|e| e.code()), Some(ErrorCode::InvalidArgument));
    assert_eq!(files(dir.path())?, before);
    drop(foreign);

    let lock = workspace.lock(crate::lock::BACKGROUND_LOCK_TIMEOUT)?;
    let result = workspace.update_locked(&lock, &request(&workspace, fields)?, &NoDerivedViews)?;
    assert!(result.changed_files.contains(&"topics/tea.md".to_owned()));
    // The lock is still ours: nobody else can take it until we drop it.
    assert_eq!(workspace.lock(std::time::Duration::ZERO).err().map(|e| e.code()), Some(ErrorCode::ConcurrentUpdate));
    drop(lock);
    assert!(workspace.lock(std::time::Duration::ZERO).is_ok());
    Ok(())
}

/// One generated paragraph of a topic file, for the check/install agreement property.
#[derive(Clone, Debug)]
enum Para {
    /// A claim citing a source the workspace holds.
    Cited,
    /// A claim citing a source that exists nowhere.
    UnknownSource,
    /// A claim citing, by a `#d<c>-<t>` fallback, a source that exists nowhere.
    UnknownFallback,
    /// A paragraph with no citation and no block id.
    Uncited,
    /// A cited claim linking to a block id no file holds.
    DanglingLink,
    /// A cited claim whose `^id` is not eight lowercase hex digits.
    BadId,
    /// A sub-heading alone.
    Heading,
}

fn topic_file(paras: &[Para]) -> String {
    let mut body = String::from("# Gen\n\n");
    let mut notes = String::new();
    for (n, para) in paras.iter().enumerate() {
        let id = format!("{:08x}", 0xa000_0000_u32 + n as u32);
        // The claim text and the source it cites, for the paragraphs that are claims.
        let (claim, source) = match para {
            Para::Uncited => {
                body.push_str(&format!("A plain remark {n}.\n\n"));
                continue;
            }
            Para::Heading => {
                body.push_str(&format!("## Part {n}\n\n"));
                continue;
            }
            Para::Cited => (format!("Craig fact {n}. ^{id}"), "D1:1"),
            Para::UnknownSource => (format!("Craig fact {n}. ^{id}"), "D9:9"),
            Para::UnknownFallback => (format!("Craig fact {n}. ^{id}"), "nowhere.md#d9-9"),
            Para::DanglingLink => (format!("See [x](prefs.md#^ffffffff) {n}. ^{id}"), "D1:1"),
            Para::BadId => (format!("Craig fact {n}. ^ZZ{n}"), "D1:1"),
        };
        body.push_str(&claim.replacen(". ^", &format!(".[^e-{n}] ^"), 1));
        body.push_str("\n\n");
        notes.push_str(&format!("[^e-{n}]: Time: `2024-01-02`; Sources: [{source}]({source})\n"));
    }
    body + &notes
}

fn arb_para() -> impl proptest::strategy::Strategy<Value = Para> {
    proptest::prop_oneof![
        4 => proptest::strategy::Just(Para::Cited),
        1 => proptest::strategy::Just(Para::UnknownSource),
        1 => proptest::strategy::Just(Para::UnknownFallback),
        1 => proptest::strategy::Just(Para::Uncited),
        1 => proptest::strategy::Just(Para::DanglingLink),
        1 => proptest::strategy::Just(Para::BadId),
        1 => proptest::strategy::Just(Para::Heading),
    ]
}

/// The topic codes an install rejection stands for: the listed violations, or the
/// source policy's `unknown` as `TOPIC_UNKNOWN_SOURCE`.
fn install_codes(error: &crate::error::Error) -> Vec<String> {
    let detail = |key: &str| error.details().get(key).cloned();
    if let Some(Value::Array(list)) = detail("violations") {
        return list.iter().filter_map(|v| v["code"].as_str().map(str::to_owned)).collect();
    }
    match detail("source_policy").as_ref().and_then(Value::as_str) {
        Some("unknown") => vec!["TOPIC_UNKNOWN_SOURCE".to_owned()],
        _ => vec![error.code().as_str().to_owned()],
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24),
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// `check`'s contract (`validate_topics` over the tree) reports a violation exactly
    /// when installing the same file is rejected, and the install's code is among check's.
    #[test]
    fn check_and_install_apply_one_validation_contract(paras in proptest::collection::vec(arb_para(), 0..6)) {
        use scriptorium_topic_markdown::SourceResolver;
        let (_dir, workspace) = base("contract").map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
        let content = topic_file(&paras);
        let mut tree: BTreeMap<String, Vec<u8>> = files(workspace.root())
            .map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?
            .into_iter()
            .filter(|(path, _)| path.starts_with("topics/"))
            .collect();
        tree.insert("topics/gen.md".to_owned(), content.clone().into_bytes());
        let vfs = crate::vfs::RealVfs::new(workspace.root());
        let sources = SourceResolver::new(crate::archive_tree::WorkspaceSources::new(&vfs));
        let check = crate::validate::validate_topics(tree.iter(), &sources);
        let check_codes: Vec<&str> = check.violations.iter().map(|v| v.code().as_str()).collect();
        let fields = json!({"changes": [{"path": "topics/gen.md", "action": "write", "content": content}]});
        let outcome = request(&workspace, fields)
            .map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))
            .map(|mut request| {
                // An owner installing a hand-edited tree: the evidence scope of one call is a
                // transaction rule, not a property of the tree, so it is left out here.
                request.citations = crate::update::CitationScope::AnyTrusted;
                workspace.update(&request, &NoDerivedViews)
            })?;
        match outcome {
            Ok(_) => proptest::prop_assert!(check_codes.is_empty(), "installed, but check reports {check_codes:?}\n{content}"),
            Err(error) => {
                let codes = install_codes(&error);
                proptest::prop_assert!(
                    codes.iter().any(|code| check_codes.contains(&code.as_str())),
                    "install rejects with {codes:?} ({error} {:?}), check reports {check_codes:?}\n{content}", error.details()
                );
            }
        }
    }
}

/// The runtime file an install writes when it finds the tree it installed normal.
const NORMAL_MARKER: &str = ".scriptorium/committed-normal";

/// `prefs.md` with a second paragraph that normalization gives a block id.
fn prefs_with(extra: &str) -> String {
    format!(
        "# Preferences\n\nCraig prefers green tea over coffee.[^e-d7b532f365] ^0d9bb518\n\n{extra}[^e-d7b532f365]\n\n\
         [^e-d7b532f365]: Time: `2024-03-16`; Sources: [openprogram/sess-7f2a/m4](../sources/openprogram/_v2/sess-7f2a.md#source-382c7493ef6b9537)\n"
    )
}

#[test]
fn a_new_process_trusts_the_recorded_normal_form_and_gets_what_a_whole_tree_pass_gives() -> TestResult {
    // Two copies take the same first install; in one the marker is then deleted, so the
    // cold update there normalizes the whole tree, in the other only the edited file.
    let mut results = Vec::new();
    for keep_marker in [true, false] {
        let (dir, workspace) = base(if keep_marker { "normal-kept" } else { "normal-gone" })?;
        let first =
            json!({"changes": [{"path": PREFS, "action": "write", "content": prefs_with("Mei likes oolong.")}]});
        workspace.update(&any_trusted(request(&workspace, first)?), &NoDerivedViews)?;
        let revision = workspace.revision()?;
        assert_eq!(std::fs::read(dir.path().join(NORMAL_MARKER))?, revision.as_bytes());
        if !keep_marker {
            std::fs::remove_file(dir.path().join(NORMAL_MARKER))?;
        }
        drop(workspace);
        // A new process: a cold cache.
        let workspace = Workspace::open(dir.path())?;
        let dropped = json!({"changes": [{"path": PREFS, "action": "write", "content": "# Preferences\n"}]});
        let refused = workspace.update(&request(&workspace, dropped)?, &NoDerivedViews).err().ok_or("accepted")?;
        let mei = std::fs::read_to_string(dir.path().join("topics/people/mei.md"))?.replacen(
            "^ef8db871\n",
            "^ef8db871\n\nMei drinks no coffee.[^e-adf5b26e76]\n",
            1,
        );
        let second = json!({"changes": [{"path": "topics/people/mei.md", "action": "write", "content": mei}]});
        let result = workspace.update(&any_trusted(request(&workspace, second)?), &NoDerivedViews)?;
        results.push((refused.code(), result.block_ids, files(dir.path())?));
    }
    assert_eq!(results.first().map(|r| r.0), Some(ErrorCode::InvalidTopicFormat));
    assert_eq!(results.first().map(|r| r.1.len()), Some(1), "one minted id");
    assert_eq!(results.first(), results.last());
    Ok(())
}

/// An owner's edit: new citations may name any trusted source.
fn any_trusted(mut request: UpdateRequest) -> UpdateRequest {
    request.citations = crate::update::CitationScope::AnyTrusted;
    request
}
