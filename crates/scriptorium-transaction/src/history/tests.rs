//! History on real repositories in temporary directories, cross-checked with the system
//! `git` binary (installed here and on CI; the library itself never runs it).

mod damage;
mod incremental;
mod stat_cache;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use super::*;
use crate::test_support::{TempDir, write_tree};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Run the system `git` in `root`, isolated from the user's and the system's config.
fn git(root: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .current_dir(root)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .expect("the git binary runs (it is installed wherever the tests run)")
}

/// `git` that must succeed; returns its standard output.
#[track_caller]
fn git_ok(root: &Path, args: &[&str]) -> String {
    let output = git(root, args);
    assert!(output.status.success(), "git {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `git fsck --full` reports no error (dangling objects are not errors).
#[track_caller]
fn assert_fsck_clean(root: &Path, context: &str) {
    let output = git(root, &["fsck", "--full", "--no-progress"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success()
            && !stderr.contains("error")
            && !stdout.contains("missing")
            && !stdout.contains("broken"),
        "{context}: git fsck is not clean:\n{stdout}\n{stderr}"
    );
}

/// A workspace with a few memory files and some things history must never hold.
fn sample(root: &Path) {
    write_tree(
        root,
        &[
            ("core.md", b"# Core\n"),
            ("topics/people/dave.md", b"Dave reviews PRs.\n"),
            ("topics/core.md", b"# Core\n"),
            ("sources/openprogram/_v2/sess.md", b"<!-- openprogram-source-archive:v2 -->\n"),
            ("timeline/2024.md", b"- 2024\n"),
            ("relations.json", b"{}\n"),
            (".scriptorium/runtime.json", b"{\"revision\":1}\n"),
            (".scriptorium-block-backup/topics/x.md", b"backup\n"),
            ("notes.txt", b"not memory\n"),
        ],
    );
}

/// Every file under `root` outside `.git/`, with its bytes.
fn memory_files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("list a directory").flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = if prefix.is_empty() { name.clone() } else { format!("{prefix}/{name}") };
            let kind = entry.file_type().expect("file type");
            if kind.is_dir() && path != ".git" {
                walk(&entry.path(), &path, out);
            } else if kind.is_file() {
                out.insert(path, std::fs::read(entry.path()).expect("read a file"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, "", &mut out);
    out
}

#[test]
fn sanitize_follows_the_reference_rules() {
    assert_eq!(sanitize_message("memory: edit topics"), "memory: edit topics");
    assert_eq!(sanitize_message("two\nlines\r\nand\tcontrols\u{7}"), "two lines andcontrols");
    assert_eq!(sanitize_message("  padded  "), "padded");
    assert_eq!(sanitize_message(""), DEFAULT_MESSAGE);
    assert_eq!(sanitize_message("\n\u{200b}\u{7} \n"), DEFAULT_MESSAGE);
    let long = "é".repeat(MAX_MESSAGE_CHARS + 20);
    assert_eq!(sanitize_message(&long).chars().count(), MAX_MESSAGE_CHARS);
    let cut_at_space = format!("{} tail", "a".repeat(MAX_MESSAGE_CHARS - 1));
    assert_eq!(sanitize_message(&cut_at_space), "a".repeat(MAX_MESSAGE_CHARS - 1));
}

#[test]
fn init_creates_history_once() -> TestResult {
    let dir = TempDir::new("history-init");
    let root = dir.path();
    sample(root);
    let before = memory_files(root);

    let history = History::open_or_init(root)?;
    assert!(history.report().is_clean(), "{:?}", history.report());
    let head = history.head().ok_or("HEAD after init")?;
    let entries = history.list(10)?;
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].message, INIT_MESSAGE);
    assert_eq!(
        entries[0].changed,
        [
            "core.md",
            "relations.json",
            "sources/openprogram/_v2/sess.md",
            "timeline/2024.md",
            "topics/core.md",
            "topics/people/dave.md"
        ]
    );
    assert_eq!(std::fs::read(root.join(".git").join(READY_MARKER))?, b"ready\n");
    let exclude = std::fs::read_to_string(root.join(".git/info/exclude"))?;
    assert!(exclude.lines().any(|line| line == "/.scriptorium*") && exclude.lines().any(|line| line == "/.nativemem*"));
    assert_eq!(git_ok(root, &["config", "--local", "user.name"]).trim(), HISTORY_USER_NAME);
    assert_eq!(git_ok(root, &["config", "--local", "user.email"]).trim(), HISTORY_USER_EMAIL);
    drop(history);

    let again = History::open_or_init(root)?;
    assert!(again.report().is_clean(), "{:?}", again.report());
    assert_eq!(again.head(), Some(head));
    assert_eq!(again.list(10)?.len(), 1);
    assert_eq!(std::fs::read_to_string(root.join(".git/info/exclude"))?, exclude, "exclude lines are not repeated");
    assert_eq!(memory_files(root), before, "history never touches a memory file");
    Ok(())
}

#[test]
fn init_of_an_empty_workspace_makes_an_empty_commit() -> TestResult {
    let dir = TempDir::new("history-empty");
    let history = History::open_or_init(dir.path())?;
    let entries = history.list(10)?;
    assert_eq!(entries.len(), 1);
    assert!(entries[0].changed.is_empty());
    assert_eq!(git_ok(dir.path(), &["ls-tree", "-r", "HEAD"]), "");
    assert_fsck_clean(dir.path(), "empty init");
    Ok(())
}

#[test]
fn commits_only_memory_paths_and_only_on_change() -> TestResult {
    let dir = TempDir::new("history-commit");
    let root = dir.path();
    sample(root);
    write_tree(root, &[("topics/.git/config", b"nested repo\n"), ("topics/GIT~1/x.md", b"ntfs alias\n")]);
    std::os::unix::fs::symlink(root.join("notes.txt"), root.join("topics/link.md"))?;
    let history = History::open_or_init(root)?;

    assert_eq!(history.commit("nothing changed")?, None);
    write_tree(root, &[("topics/people/dave.md", b"Dave reviews PRs.\nDave likes tea.\n"), ("notes.txt", b"edited\n")]);
    std::fs::remove_file(root.join("timeline/2024.md"))?;
    let id = history.commit("memory: edit topics\nsecond line")?.ok_or("a change commits")?;
    assert_eq!(history.head().as_deref(), Some(id.as_str()));
    assert_eq!(history.commit("again")?, None, "no change, no commit");

    let entries = history.list(10)?;
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].id, id);
    assert_eq!(entries[0].message, "memory: edit topics second line");
    assert_eq!(entries[0].changed, ["timeline/2024.md", "topics/people/dave.md"]);
    let tracked = git_ok(root, &["ls-tree", "-r", "--name-only", "HEAD"]);
    assert_eq!(
        tracked.lines().collect::<Vec<_>>(),
        ["core.md", "relations.json", "sources/openprogram/_v2/sess.md", "topics/core.md", "topics/people/dave.md"]
    );
    Ok(())
}

#[test]
fn list_and_files_at_round_trip() -> TestResult {
    let dir = TempDir::new("history-files-at");
    let root = dir.path();
    sample(root);
    let history = History::open_or_init(root)?;
    let mut states = vec![(history.head().ok_or("head")?, memory_files(root))];
    for round in 0..3 {
        write_tree(root, &[("topics/people/dave.md", format!("Dave, round {round}.\n").as_bytes())]);
        write_tree(root, &[(&format!("topics/new-{round}.md"), b"new\n")]);
        let id = history.commit(&format!("round {round}"))?.ok_or("a change commits")?;
        states.push((id, memory_files(root)));
    }
    let entries = history.list(2)?;
    assert_eq!(entries.iter().map(|entry| entry.message.as_str()).collect::<Vec<_>>(), ["round 2", "round 1"]);
    assert!(entries[0].time > 1_600_000_000);

    for (id, files) in &states {
        let expected: BTreeMap<String, Vec<u8>> = files
            .iter()
            .filter(|(path, _)| snapshot::normalize(path).ok().flatten().is_some())
            .map(|(path, bytes)| (path.clone(), bytes.clone()))
            .collect();
        assert_eq!(&history.files_at(id, &[])?, &expected);
        assert_eq!(&history.files_at(&id[..7], &[])?, &expected, "abbreviated ids resolve");
        let dave = history.files_at(&id.to_uppercase(), &["topics/people/dave.md"])?;
        assert_eq!(dave.keys().collect::<Vec<_>>(), ["topics/people/dave.md"]);
        assert_eq!(dave.get("topics/people/dave.md"), files.get("topics/people/dave.md"));
        let under = history.files_at(id, &["topics/people/", "core.md"])?;
        assert_eq!(under.keys().collect::<Vec<_>>(), ["core.md", "topics/people/dave.md"]);
    }
    let first = &states[0].0;
    assert!(history.files_at(first, &["topics/new-0.md"])?.is_empty(), "a file born later is absent");

    let code = |result: Result<BTreeMap<String, Vec<u8>>, Error>| result.err().map(|error| error.code());
    assert_eq!(
        code(history.files_at("0123456789abcdef0123456789abcdef01234567", &[])),
        Some(ErrorCode::MemoryNotFound)
    );
    assert_eq!(code(history.files_at("ffffff", &[])), Some(ErrorCode::MemoryNotFound));
    assert_eq!(code(history.files_at("abc", &[])), Some(ErrorCode::InvalidArgument));
    assert_eq!(code(history.files_at("HEAD~1", &[])), Some(ErrorCode::InvalidArgument));
    assert_eq!(code(history.files_at(first, &["../x"])), Some(ErrorCode::PathOutsideWorkspace));
    assert_eq!(code(history.files_at(first, &[".git/config"])), Some(ErrorCode::PathOutsideWorkspace));
    assert_eq!(code(history.files_at(first, &["notes.txt"])), Some(ErrorCode::InvalidArgument));
    let tree = git_ok(root, &["rev-parse", &format!("{first}^{{tree}}")]);
    assert_eq!(code(history.files_at(tree.trim(), &[])), Some(ErrorCode::MemoryNotFound), "a tree is not a revision");
    Ok(())
}

#[test]
fn prepare_writes_objects_and_publish_moves_the_branch() -> TestResult {
    let dir = TempDir::new("history-prepare");
    let root = dir.path();
    sample(root);
    let history = History::open_or_init(root)?;
    let old_head = history.head().ok_or("head")?;

    let mut changes = Changes::new();
    changes.insert("topics/people/erin.md".to_owned(), Some(b"Erin joined.\n".to_vec()));
    changes.insert("topics/people/dave.md".to_owned(), None);
    changes.insert(".scriptorium/runtime.json".to_owned(), Some(b"{\"revision\":2}\n".to_vec()));
    let prepared = history.prepare("memory: edit topics", &changes)?.ok_or("the change prepares a commit")?;
    let id = prepared.id();
    assert_eq!(prepared.message(), "memory: edit topics");
    assert_eq!(git_ok(root, &["cat-file", "-t", &id]).trim(), "commit", "objects are written before publishing");
    assert_eq!(history.head(), Some(old_head.clone()), "the branch has not moved");
    drop(prepared);
    assert_eq!(history.head(), Some(old_head.clone()), "dropping a prepared commit leaves the branch alone");

    let prepared = history.prepare("memory: edit topics", &changes)?.ok_or("prepared again")?;
    assert_eq!(prepared.publish()?, history.head().ok_or("head")?);
    let tracked = git_ok(root, &["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(tracked.contains("topics/people/erin.md") && !tracked.contains("dave.md") && !tracked.contains("runtime"));
    assert_eq!(git_ok(root, &["show", "HEAD:topics/people/erin.md"]), "Erin joined.\n");

    let mut outside = Changes::new();
    outside.insert("../escape.md".to_owned(), Some(Vec::new()));
    let refused = history.prepare("x", &outside).err().map(|error| error.code());
    assert_eq!(refused, Some(ErrorCode::PathOutsideWorkspace));

    // A commit prepared on a parent that is no longer HEAD must not overwrite the newer commit.
    let stale = history.prepare("stale", &changes_for("topics/a.md", b"a\n"))?.ok_or("stale prepared")?;
    write_tree(root, &[("topics/b.md", b"b\n")]);
    let newer = history.commit("newer")?.ok_or("newer commit")?;
    assert_eq!(stale.publish().err().map(|error| error.code()), Some(ErrorCode::GitCommitFailed));
    assert_eq!(history.head(), Some(newer));
    assert_fsck_clean(root, "after prepare and publish");
    Ok(())
}

fn changes_for(path: &str, bytes: &[u8]) -> Changes {
    let mut changes = Changes::new();
    changes.insert(path.to_owned(), Some(bytes.to_vec()));
    changes
}

#[test]
fn a_crash_between_prepare_and_publish_is_caught_up_by_the_next_commit() -> TestResult {
    let dir = TempDir::new("history-crash");
    let root = dir.path();
    sample(root);
    let history = History::open_or_init(root)?;
    let old_head = history.head();
    // The transaction prepared, installed, and crashed before publishing.
    let prepared = history.prepare("lost", &changes_for("topics/people/dave.md", b"installed\n"))?;
    assert!(prepared.is_some());
    drop(prepared);
    write_tree(root, &[("topics/people/dave.md", b"installed\n")]);
    drop(history);

    let history = History::open_or_init(root)?;
    assert!(history.report().is_clean(), "{:?}", history.report());
    assert_eq!(history.head(), old_head, "HEAD is the old commit");
    let id = history.commit("next checkpoint")?.ok_or("the change is still uncommitted")?;
    assert_eq!(
        history.files_at(&id, &["topics/people/dave.md"])?.get("topics/people/dave.md").map(Vec::as_slice),
        Some(&b"installed\n"[..])
    );
    Ok(())
}

#[test]
fn system_git_reads_what_we_write() -> TestResult {
    let dir = TempDir::new("history-git-reads");
    let root = dir.path();
    sample(root);
    let history = History::open_or_init(root)?;
    write_tree(root, &[("topics/people/dave.md", b"changed\n")]);
    let id = history.commit("memory: edit topics/people/dave.md")?.ok_or("commit")?;

    let log = git_ok(root, &["log", "--format=%H|%an|%ae|%s"]);
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(
        lines,
        [
            format!("{id}|{HISTORY_USER_NAME}|{HISTORY_USER_EMAIL}|memory: edit topics/people/dave.md"),
            format!(
                "{}|{HISTORY_USER_NAME}|{HISTORY_USER_EMAIL}|{INIT_MESSAGE}",
                history.list(2)?.get(1).map(|entry| entry.id.clone()).unwrap_or_default()
            ),
        ]
    );
    let commit = git_ok(root, &["cat-file", "-p", &id]);
    assert!(
        commit.starts_with("tree ")
            && commit.contains("\nparent ")
            && commit.ends_with("\n\nmemory: edit topics/people/dave.md\n")
    );
    assert_eq!(git_ok(root, &["cat-file", "-p", "HEAD:topics/people/dave.md"]), "changed\n");
    assert_eq!(
        git_ok(root, &["status", "--porcelain"]),
        "?? notes.txt\n",
        "the index matches HEAD; runtime dirs are excluded"
    );
    assert_eq!(
        git_ok(root, &["reflog", "--format=%gs"]).lines().next(),
        Some("commit: memory: edit topics/people/dave.md")
    );
    assert_fsck_clean(root, "our commits");
    Ok(())
}

#[test]
fn a_repository_made_by_system_git_is_accepted() -> TestResult {
    let dir = TempDir::new("history-git-made");
    let root = dir.path();
    sample(root);
    // What the reference does, with the git binary.
    git_ok(root, &["init", "-q", "-b", "master"]);
    git_ok(root, &["config", "user.name", HISTORY_USER_NAME]);
    git_ok(root, &["config", "user.email", HISTORY_USER_EMAIL]);
    std::fs::write(
        root.join(".git/info/exclude"),
        "# git ls-files --others --exclude-from=.git/info/exclude\n/.scriptorium*\n/.nativemem*\n",
    )?;
    let mut add = vec!["add", "-A", "--"];
    add.extend(HISTORY_PATHS.iter().filter(|path| root.join(path).exists()));
    git_ok(root, &add);
    git_ok(root, &["commit", "-q", "--allow-empty", "-m", INIT_MESSAGE]);
    std::fs::write(root.join(".git").join(READY_MARKER), "ready\n")?;
    let config = std::fs::read(root.join(".git/config"))?;
    let their_head = git_ok(root, &["rev-parse", "HEAD"]).trim().to_owned();

    let history = History::open_or_init(root)?;
    assert!(history.report().is_clean(), "{:?}", history.report());
    assert_eq!(history.head(), Some(their_head.clone()));
    assert_eq!(history.commit("unchanged")?, None, "our tree of their files equals their tree");
    assert_eq!(std::fs::read(root.join(".git/config"))?, config, "a complete config is left as it is");

    write_tree(root, &[("topics/people/dave.md", b"ours\n")]);
    let ours = history.commit("memory: edit topics")?.ok_or("commit")?;
    assert_eq!(git_ok(root, &["rev-parse", "HEAD^"]).trim(), their_head);
    assert_eq!(git_ok(root, &["rev-parse", "refs/heads/master"]).trim(), ours, "their branch moved");
    assert_eq!(git_ok(root, &["status", "--porcelain"]), "?? notes.txt\n");
    assert_fsck_clean(root, "mixed history");

    // And the reference can carry on after us.
    write_tree(root, &[("topics/people/dave.md", b"theirs again\n")]);
    git_ok(root, &add);
    git_ok(root, &["commit", "-q", "-m", "memory: incremental transaction"]);
    let history = History::open_or_init(root)?;
    assert!(history.report().is_clean(), "{:?}", history.report());
    assert_eq!(history.list(10)?.len(), 3);
    Ok(())
}

#[test]
fn a_hand_committed_file_outside_memory_is_kept() -> TestResult {
    let dir = TempDir::new("history-keep");
    let root = dir.path();
    sample(root);
    let history = History::open_or_init(root)?;
    git_ok(root, &["add", "notes.txt"]);
    git_ok(root, &["-c", "user.name=x", "-c", "user.email=x@y", "commit", "-q", "-m", "by hand"]);
    write_tree(root, &[("topics/core.md", b"# Core\nmore\n")]);
    history.commit("memory: edit topics/core.md")?.ok_or("commit")?;
    assert!(git_ok(root, &["ls-tree", "--name-only", "HEAD"]).lines().any(|name| name == "notes.txt"));
    assert!(history.files_at(&history.head().ok_or("head")?, &[])?.keys().all(|path| path != "notes.txt"));
    Ok(())
}

#[test]
fn iso_time_is_utc_iso_8601() {
    let entry = |time| HistoryEntry { id: String::new(), time, message: String::new(), changed: Vec::new() };
    assert_eq!(entry(0).iso_time(), "1970-01-01T00:00:00Z");
    assert_eq!(entry(951_782_400).iso_time(), "2000-02-29T00:00:00Z");
    assert_eq!(entry(1_700_000_000).iso_time(), "2023-11-14T22:13:20Z");
    assert_eq!(entry(-1).iso_time(), "1969-12-31T23:59:59Z");
}
