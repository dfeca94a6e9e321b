//! The CLI as a newcomer meets it (issue 13 §3), on real copies of the vectors'
//! `tx-base` workspace: rejected edits and reading verbs leave the disk alone, updates
//! without a base take it under the lock, `--request` carries evidence, rejections list
//! every violation, signals are reported honestly, ranges are checked, and `check`
//! holds sources append-only against history.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::{Run, TempDir, TestResult, copy_tree, run, scriptorium, vectors};

const PREFS: &str = "topics/prefs.md";
const MEI: &str = "topics/people/mei.md";
const ARCHIVE: &str = "sources/openprogram/_v2/sess-7f2a.md";

fn tx_base() -> Result<TempDir, Box<dyn std::error::Error>> {
    let dir = TempDir::new()?;
    copy_tree(&vectors().join("_resources/tx-base"), dir.path())?;
    Ok(dir)
}

/// The first stderr line's code, `error[CODE]: …` (contract or `CLI_*` codes).
fn first_code(stderr: &str) -> Option<&str> {
    stderr.lines().next()?.strip_prefix("error[")?.split_once("]: ").map(|(code, _)| code)
}

/// Every file and directory under `root` except `skip` (a top-level name): path → (mode,
/// bytes; empty for a directory).
fn tree(root: &Path, skip: &str) -> std::io::Result<BTreeMap<String, (u32, Vec<u8>)>> {
    fn walk(dir: &Path, prefix: &str, skip: &str, out: &mut BTreeMap<String, (u32, Vec<u8>)>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if prefix.is_empty() && name == skip {
                continue;
            }
            let path = format!("{prefix}{name}");
            let meta = std::fs::symlink_metadata(entry.path())?;
            let mode = meta.permissions().mode() & 0o7777;
            if meta.is_dir() {
                out.insert(path.clone(), (mode, Vec::new()));
                walk(&entry.path(), &format!("{path}/"), skip, out)?;
            } else {
                out.insert(path, (mode, std::fs::read(entry.path())?));
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    walk(root, "", skip, &mut out)?;
    Ok(out)
}

/// The paths whose mode or bytes differ between two trees, or that only one holds.
fn differences(a: &BTreeMap<String, (u32, Vec<u8>)>, b: &BTreeMap<String, (u32, Vec<u8>)>) -> Vec<String> {
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|key| a.get(*key) != b.get(*key))
        .map(|key| format!("{key}: {:?} -> {:?}", a.get(key).map(|e| e.0), b.get(key).map(|e| e.0)))
        .collect()
}

/// Make every file and directory group- and world-readable, so that a mode migration
/// (0600/0700) would show.
fn loosen_modes(root: &Path) -> std::io::Result<()> {
    for (path, (mode, _)) in tree(root, "")? {
        let loose = if mode & 0o100 != 0 || root.join(&path).is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(root.join(&path), std::fs::Permissions::from_mode(loose))?;
    }
    Ok(())
}

fn update(ws: &TempDir, extra: &[&str], edit_flag: &str, edit: &Path) -> Result<Run, std::io::Error> {
    run(scriptorium(ws.path()).arg("update").args(extra).arg("--workspace").arg(ws.path()).arg(edit_flag).arg(edit))
}

#[test]
fn a_rejected_edit_initialises_no_git_and_changes_no_mode_or_byte() -> TestResult {
    let ws = tx_base()?;
    let patch = "--- a/topics/prefs.md\n+++ b/topics/prefs.md\n@@ -1,1 +1,1 @@\n-# Not the heading\n+# Drinks\n";
    let file = ws.write("edit.diff", patch.as_bytes())?;
    loosen_modes(ws.path())?;
    let before = tree(ws.path(), ".scriptorium")?;
    let out = update(&ws, &[], "--patch", &file)?;
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert_eq!(first_code(&out.stderr), Some("PATCH_CONFLICT"), "{}", out.stderr);
    assert!(!ws.path().join(".git").exists(), "a rejected edit initialised history");
    assert_eq!(differences(&before, &tree(ws.path(), ".scriptorium")?), Vec::<String>::new(), "a rejected edit");
    Ok(())
}

#[test]
fn reading_verbs_write_nothing_outside_their_runtime_caches() -> TestResult {
    let ws = tx_base()?;
    loosen_modes(ws.path())?;
    let before = tree(ws.path(), ".scriptorium")?;
    let runtime_state = std::fs::read(ws.path().join(".scriptorium/runtime.json"))?;
    let verbs: [&[&str]; 8] = [
        &["status"],
        &["history"],
        &["check"],
        &["core"],
        &["search", "tea"],
        &["grep", "tea"],
        &["recall", "tea"],
        &["show", "topics/prefs.md#^0d9bb518"],
    ];
    for verb in verbs {
        let out = run(scriptorium(ws.path()).args(verb).arg("--workspace").arg(ws.path()))?;
        assert!(matches!(out.code, Some(0 | 1)), "{verb:?}: {}", out.stderr);
        assert!(!ws.path().join(".git").exists(), "{verb:?} initialised history");
        assert_eq!(differences(&before, &tree(ws.path(), ".scriptorium")?), Vec::<String>::new(), "{verb:?}");
        assert_eq!(std::fs::read(ws.path().join(".scriptorium/runtime.json"))?, runtime_state, "{verb:?}");
    }
    Ok(())
}

#[test]
fn concurrent_updates_of_different_files_without_a_base_both_install() -> TestResult {
    let ws = tx_base()?;
    let prefs = std::fs::read_to_string(ws.path().join(PREFS))?;
    let mei = std::fs::read_to_string(ws.path().join(MEI))?;
    for pair in 0..20 {
        let a = json!([{"path": PREFS, "action": "write", "content": prefs.replace("coffee", &format!("coffee ({pair})"))}]);
        let b = json!([{"path": MEI, "action": "write", "content": mei.replace("Kyoto", &format!("Kyoto ({pair})"))}]);
        let a = ws.write(&format!("a{pair}.json"), a.to_string().as_bytes())?;
        let b = ws.write(&format!("b{pair}.json"), b.to_string().as_bytes())?;
        let spawn = |file: &Path| {
            scriptorium(ws.path())
                .args(["update", "--workspace"])
                .arg(ws.path())
                .arg("--changes")
                .arg(file)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
        };
        let (first, second) = (spawn(&a)?, spawn(&b)?);
        for child in [first, second] {
            let out = child.wait_with_output()?;
            assert_eq!(out.status.code(), Some(0), "pair {pair}: {}", String::from_utf8_lossy(&out.stderr));
        }
        assert!(std::fs::read_to_string(ws.path().join(PREFS))?.contains(&format!("coffee ({pair})")));
        assert!(std::fs::read_to_string(ws.path().join(MEI))?.contains(&format!("Kyoto ({pair})")));
    }
    Ok(())
}

#[test]
fn update_request_archives_evidence_so_a_cited_paragraph_can_be_added() -> TestResult {
    let ws = tx_base()?;
    let content =
        "# Dave\n\nDave builds a garden sensor.[^e1]\n\n[^e1]: Time: `2024-03-20`; Sources: [Dave](new-source-dave)\n";
    let paragraph = json!([{"path": "topics/people/dave.md", "action": "write", "content": content}]);
    // Without evidence the citation has nothing to name, and the error says how to supply it.
    let bare = ws.write("bare.json", paragraph.to_string().as_bytes())?;
    let out = update(&ws, &[], "--changes", &bare)?;
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert_eq!(first_code(&out.stderr), Some("MISSING_SOURCE"), "{}", out.stderr);
    assert!(out.stderr.lines().any(|line| line.trim_start().starts_with("hint:")), "{}", out.stderr);

    // Citing an existing source from a plain change is not evidence of this update either.
    let existing = "# Tea\n\nCraig likes tea.[^e1]\n\n[^e1]: Time: `2024-03-16`; Sources: \
        [m4](../sources/openprogram/_v2/sess-7f2a.md#source-382c7493ef6b9537)\n";
    let cited = json!([{"path": "topics/tea.md", "action": "write", "content": existing}]);
    let cited = ws.write("cited.json", cited.to_string().as_bytes())?;
    let out = update(&ws, &["--json"], "--changes", &cited)?;
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert_eq!(out.json()?["error"]["details"]["source_policy"], "not_evidence", "{}", out.stdout);
    assert!(out.stderr.lines().any(|line| line.trim_start().starts_with("hint:")), "{}", out.stderr);

    let request = json!({
        "changes": paragraph,
        "sources": [{"label": "new-source-dave", "role": "user", "content": "Dave: my garden sensor works."}],
        "provenance": {"principal_id": "local:owner", "speaker_kind": "owner", "speaker_id": "local/owner",
            "speaker_display": "Owner", "authority_tier": "owner", "origin_id": "cli/test"},
        "commit_message": "add Dave",
    });
    let file = ws.write("request.json", request.to_string().as_bytes())?;
    let out = update(&ws, &["--json"], "--request", &file)?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let result = out.json()?;
    let source = result["source_ids"]["new-source-dave"].as_str().ok_or("no source id")?;
    let written = std::fs::read_to_string(ws.path().join("topics/people/dave.md"))?;
    assert!(written.contains("Dave builds a garden sensor."), "{written}");
    assert!(!written.contains("new-source-dave"), "{written}");
    let changed = result["changed_files"].as_array().ok_or("no changed_files")?;
    assert!(changed.iter().any(|p| p.as_str().is_some_and(|p| p.starts_with("sources/"))), "{source}: {changed:?}");
    Ok(())
}

#[test]
fn a_rejected_update_lists_every_violation_and_prints_the_error_object_with_json() -> TestResult {
    let ws = tx_base()?;
    let changes = json!([
        {"path": "topics/a.md", "action": "write", "content": "# A\n\nUncited text here.\n"},
        {"path": "topics/b.md", "action": "write", "content": "# B\n\nMore uncited text.\n"},
    ]);
    let file = ws.write("edit.json", changes.to_string().as_bytes())?;
    let out = update(&ws, &["--json"], "--changes", &file)?;
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let error = out.json()?;
    assert_eq!(error["ok"], false);
    assert_eq!(error["error"]["code"], "INVALID_TOPIC_FORMAT");
    let violations = error["error"]["details"]["violations"].as_array().ok_or("no violations")?;
    assert!(violations.len() >= 2, "{violations:?}");
    // stderr: the error line, then one line per violation, naming both files.
    let listed: Vec<&str> = out.stderr.lines().skip(1).collect();
    assert_eq!(listed.len(), violations.len(), "{}", out.stderr);
    for path in ["topics/a.md", "topics/b.md"] {
        assert!(listed.iter().any(|line| line.trim_start().starts_with(path)), "{path}: {}", out.stderr);
    }
    Ok(())
}

#[test]
fn a_topic_dropped_by_normalization_is_named_in_the_result() -> TestResult {
    let ws = tx_base()?;
    let changes = json!([{"path": "topics/empty.md", "action": "write", "content": "# Empty\n\n## Nothing\n"}]);
    let file = ws.write("edit.json", changes.to_string().as_bytes())?;
    let out = update(&ws, &["--json"], "--changes", &file)?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.json()?["dropped_files"], json!(["topics/empty.md"]));
    assert!(!ws.path().join("topics/empty.md").exists());
    let text = update(&ws, &[], "--changes", &file)?;
    assert!(text.stdout.contains("dropped topics/empty.md"), "{}", text.stdout);
    Ok(())
}

/// Run `update` paused at the crash point `point`, send `signal` there, let it go on,
/// and return what it printed.
fn interrupted_update(
    ws: &TempDir,
    point: &str,
    signal: &str,
) -> Result<std::process::Output, Box<dyn std::error::Error>> {
    let prefs = std::fs::read_to_string(ws.path().join(PREFS))?;
    let changes = json!([{"path": PREFS, "action": "write", "content": prefs.replace("coffee", "cocoa")}]);
    let file = ws.write("edit.json", changes.to_string().as_bytes())?;
    let pause = ws.path().join("paused");
    let child = scriptorium(ws.path())
        .args(["update", "--workspace"])
        .arg(ws.path())
        .arg("--changes")
        .arg(&file)
        .env("SCRIPTORIUM_PAUSE_AT", format!("{point}:1"))
        .env("SCRIPTORIUM_PAUSE_FILE", &pause)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let started = Instant::now();
    while !pause.exists() {
        if started.elapsed() > Duration::from_secs(60) {
            return Err("the child never reached the pause point".into());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let sent = Command::new("kill").arg(format!("-{signal}")).arg(child.id().to_string()).status()?;
    assert!(sent.success(), "kill failed");
    std::fs::remove_file(&pause)?;
    Ok(child.wait_with_output()?)
}

#[test]
fn sigint_before_the_install_exits_130_and_changes_nothing() -> TestResult {
    let ws = tx_base()?;
    let before = std::fs::read(ws.path().join(PREFS))?;
    let out = interrupted_update(&ws, "derive.built", "INT")?;
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(ws.path().join(PREFS))?, before);
    assert!(!ws.path().join(".git").exists());
    Ok(())
}

#[test]
fn sigterm_after_the_install_exits_0_and_says_the_edit_was_installed() -> TestResult {
    let ws = tx_base()?;
    let out = interrupted_update(&ws, "history.before_publish", "TERM")?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("installed"), "{stderr}");
    assert!(std::fs::read_to_string(ws.path().join(PREFS))?.contains("cocoa"));
    Ok(())
}

#[test]
fn out_of_range_counts_and_a_malformed_base_are_invalid_argument() -> TestResult {
    let ws = tx_base()?;
    let cases: [&[&str]; 6] = [
        &["search", "tea", "--top-k", "0"],
        &["search", "tea", "--top-k", "51"],
        &["grep", "tea", "--limit", "0"],
        &["grep", "tea", "--limit", "201"],
        &["history", "--limit", "0"],
        &["history", "--limit", "10001"],
    ];
    for args in cases {
        let out = run(scriptorium(ws.path()).args(args).arg("--workspace").arg(ws.path()))?;
        assert_eq!(out.code, Some(2), "{args:?}: {}", out.stderr);
        assert_eq!(first_code(&out.stderr), Some("INVALID_ARGUMENT"), "{args:?}: {}", out.stderr);
    }
    let file = ws.write("edit.json", br#"[{"path": "topics/prefs.md", "action": "delete"}]"#)?;
    let out = update(&ws, &["--json", "--base-revision", "not-a-revision"], "--changes", &file)?;
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert_eq!(out.json()?["error"]["code"], "INVALID_ARGUMENT");
    assert!(ws.path().join(PREFS).exists());
    Ok(())
}

#[test]
fn search_never_calls_an_untrusted_speaker_hint_trusted() -> TestResult {
    let ws = TempDir::new()?;
    copy_tree(&crate::example_workspace(), ws.path())?;
    // A legacy record: trusted as a record, but its speaker `Bo (tg-7391)` is only a hint.
    let out = run(scriptorium(ws.path()).args(["search", "Reading list draft", "--workspace"]).arg(ws.path()))?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let line = out.stdout.lines().find(|l| l.contains("old-notes.md")).ok_or_else(|| out.stdout.clone())?;
    assert!(line.contains("untrusted speaker hint: Bo (tg-7391)"), "{line}");
    assert!(!line.contains("Bo (tg-7391), trusted"), "{line}");
    Ok(())
}

#[test]
fn history_shows_iso_times() -> TestResult {
    let ws = tx_base()?;
    let file = ws.write("edit.json", br#"[{"path": "topics/prefs.md", "action": "delete"}]"#)?;
    assert_eq!(update(&ws, &[], "--changes", &file)?.code, Some(0));
    let out = run(scriptorium(ws.path()).args(["history", "--workspace"]).arg(ws.path()))?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    for line in out.stdout.lines() {
        let time = line.split(' ').nth(1).ok_or(line)?;
        let shape = time.len() == 20
            && time.chars().enumerate().all(|(i, c)| match i {
                4 | 7 => c == '-',
                10 => c == 'T',
                13 | 16 => c == ':',
                19 => c == 'Z',
                _ => c.is_ascii_digit(),
            });
        assert!(shape, "not an ISO time: {line}");
    }
    Ok(())
}

#[test]
fn core_is_not_broken_by_an_unrelated_unreadable_topic() -> TestResult {
    let ws = TempDir::new()?;
    copy_tree(&vectors().join("transaction/core-render/after"), ws.path())?;
    ws.write("topics/broken.md", b"# Broken\n\n\xff\xfe not text\n")?;
    let out = run(scriptorium(ws.path()).args(["core", "--json", "--workspace"]).arg(ws.path()))?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.json()?["master"], true);
    Ok(())
}

#[test]
fn check_prints_the_first_200_violations_then_a_count() -> TestResult {
    let ws = tx_base()?;
    let mut text = String::from("# Many\n\n");
    for i in 0..250 {
        text.push_str(&format!("Uncited paragraph number {i}.\n\n"));
    }
    ws.write("topics/many.md", text.as_bytes())?;
    let json = run(scriptorium(ws.path()).args(["check", "--json", "--workspace"]).arg(ws.path()))?.json()?;
    let total = json["topics"]["violations"].as_array().map_or(0, Vec::len);
    assert!(total > 200, "{total}");
    let out = run(scriptorium(ws.path()).args(["check", "--workspace"]).arg(ws.path()))?;
    assert_eq!(out.code, Some(1));
    let printed = out.stdout.lines().filter(|line| line.trim_start().starts_with("topics/many.md")).count();
    assert_eq!(printed, 200, "{}", out.stdout);
    assert!(out.stdout.contains(&format!("{} more violations", total - 200)), "{}", out.stdout);
    Ok(())
}

#[test]
fn init_creates_an_empty_workspace_that_checks_clean() -> TestResult {
    let dir = TempDir::new()?;
    let root = dir.path().join("memory");
    let out = run(scriptorium(dir.path()).args(["init", "--workspace"]).arg(&root))?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(root.join("topics").is_dir() && root.join("sources").is_dir());
    assert!(!root.join(".git").exists());
    let check = run(scriptorium(dir.path()).args(["check", "--workspace"]).arg(&root))?;
    assert_eq!(check.code, Some(0), "{}{}", check.stdout, check.stderr);
    Ok(())
}

#[test]
fn check_reports_a_committed_archive_changed_in_place_and_repair_restores_it() -> TestResult {
    let ws = tx_base()?;
    let committed = std::fs::read(ws.path().join(ARCHIVE))?;
    // One installed edit starts history, whose first commit holds the archive.
    let file = ws.write("edit.json", br#"[{"path": "topics/prefs.md", "action": "delete"}]"#)?;
    assert_eq!(update(&ws, &[], "--changes", &file)?.code, Some(0));
    let clean = run(scriptorium(ws.path()).args(["check", "--json", "--workspace"]).arg(ws.path()))?.json()?;
    assert_eq!(clean["history"]["ok"], true, "{clean}");

    let text = String::from_utf8(committed.clone())?;
    let altered = text.replacen("Kyoto", "Osaka", 1);
    assert_ne!(altered, text, "the archive does not mention Kyoto");
    std::fs::write(ws.path().join(ARCHIVE), altered.as_bytes())?;
    let out = run(scriptorium(ws.path()).args(["check", "--json", "--workspace"]).arg(ws.path()))?;
    assert_eq!(out.code, Some(1), "{}", out.stdout);
    let report = out.json()?;
    let rewritten = &report["history"]["rewritten_sources"];
    assert_eq!(rewritten[0]["path"], ARCHIVE, "{report}");
    assert_eq!(rewritten[0]["code"], "TXN_SOURCE_REWRITTEN");

    let repaired = run(scriptorium(ws.path()).args(["check", "--repair", "--json", "--workspace"]).arg(ws.path()))?;
    assert_eq!(repaired.json()?["history"]["ok"], true, "{}{}", repaired.stdout, repaired.stderr);
    assert_eq!(std::fs::read(ws.path().join(ARCHIVE))?, committed);
    let first = rewritten[0]["first_difference"].as_u64().ok_or("no offset")?;
    let tail = altered.as_bytes().get(usize::try_from(first)?..).ok_or("offset")?;
    let mut kept = false;
    for entry in std::fs::read_dir(ws.path().join(".scriptorium/quarantine"))? {
        kept |= std::fs::read(entry?.path().join(ARCHIVE)).is_ok_and(|bytes| bytes == tail);
    }
    assert!(kept, "the altered bytes are not in the quarantine");
    Ok(())
}
