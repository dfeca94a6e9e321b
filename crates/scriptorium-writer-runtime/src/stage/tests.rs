//! Unit tests of the stage: what it shows, each tool's behaviour and refusals, the diff,
//! staleness, planted links, the structure listing and the tool definitions.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use scriptorium_transaction::{Edit, Workspace};
use serde_json::{Value, json};

use super::{STAGE_PARENT, Stage, TOOL_NAMES, ToolErrorCode, tool_definitions};

/// A directory removed when dropped.
pub(crate) struct Temp(PathBuf);

impl Temp {
    pub(crate) fn new(label: &str) -> Temp {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let path = std::env::temp_dir().join(format!("scriptorium-stage-{label}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("temp dir");
        Temp(path)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub(crate) const ADA: &str = "# People\n\n## Ada\n\nAda prefers   short answers and drinks green tea every morning before the standup meeting starts.[^e-1] ^ab12cd34\n\n[^e-1]: Time: `2024`; Sources: [x](D1:1)\n";

pub(crate) fn put(root: &Path, path: &str, bytes: &[u8]) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().expect("a parent")).expect("parents");
    std::fs::write(full, bytes).expect("write");
}

/// A workspace with topics, derived files, sources, a hidden file and an outside sibling.
pub(crate) fn fixture(label: &str) -> (Temp, Workspace) {
    let temp = Temp::new(label);
    let root = temp.path().join("memory");
    let workspace = Workspace::open(&root).expect("open");
    put(&root, "topics/people/ada.md", ADA.as_bytes());
    put(&root, "topics/core.md", b"# Core\n");
    put(&root, "topics/notes.txt", b"not a topic\n");
    put(&root, "topics/.draft.md", b"hidden\n");
    put(&root, "core.md", b"# Core render\n");
    put(&root, "timeline/2024.md", b"timeline\n");
    put(&root, "sources/local/_v2/t.md", b"secret source text\n");
    put(&root, "README.md", b"not staged\n");
    put(temp.path(), "outside/secret.md", b"outside\n");
    (temp, workspace)
}

fn call(stage: &mut Stage, name: &str, arguments: Value) -> Result<String, ToolErrorCode> {
    let outcome = stage.execute(name, &arguments);
    assert_eq!(outcome.is_error, outcome.code.is_some(), "{outcome:?}");
    match outcome.code {
        Some(code) => Err(code),
        None => Ok(outcome.content),
    }
}

fn read(stage: &mut Stage, path: &str) -> Result<String, ToolErrorCode> {
    call(stage, "Read", json!({"file_path": path}))
}

fn write(stage: &mut Stage, path: &str, content: &str) -> Result<String, ToolErrorCode> {
    call(stage, "Write", json!({"file_path": path, "content": content}))
}

fn changes(stage: &Stage) -> Vec<(String, Option<String>)> {
    match stage.edit().expect("diff") {
        None => Vec::new(),
        Some(Edit::Changes(changes)) => {
            changes.into_iter().map(|change| (change.path.into_string(), change.content)).collect()
        }
        Some(other) => panic!("the diff is whole-file changes, got {other:?}"),
    }
}

#[test]
fn the_stage_shows_topics_and_derived_views_but_no_sources_hidden_or_other_files() {
    let (_temp, workspace) = fixture("shows");
    let stage = Stage::new(&workspace).expect("stage");
    assert_eq!(
        stage.files(),
        ["core.md", "timeline/2024.md", "topics/core.md", "topics/notes.txt", "topics/people/ada.md"]
    );
    assert_eq!(stage.revision(), workspace.revision().expect("revision"));
    assert!(stage.dir().starts_with(workspace.runtime_dir().join(STAGE_PARENT)));
    assert!(stage.edit().expect("diff").is_none());
}

#[test]
fn the_stage_directory_is_removed_on_drop() {
    let (_temp, workspace) = fixture("drop");
    let mut stage = Stage::new(&workspace).expect("stage");
    write(&mut stage, "topics/new/deep.md", "# New\n").expect("write");
    let dir = stage.dir().to_path_buf();
    assert!(dir.join("topics/new/deep.md").is_file());
    let other = Stage::new(&workspace).expect("a second stage");
    assert_ne!(other.dir(), dir);
    drop(stage);
    assert!(!dir.exists());
    let other_dir = other.dir().to_path_buf();
    drop(other);
    assert!(!other_dir.exists());
    assert!(!workspace.runtime_dir().join(STAGE_PARENT).exists(), "the empty parent goes too");
}

#[test]
fn a_stage_left_by_a_dead_process_is_swept_and_a_live_ones_is_kept() {
    let (_temp, workspace) = fixture("sweep");
    let parent = workspace.runtime_dir().join(STAGE_PARENT);
    // Process ids above Linux's pid_max (4194304) never run.
    let dead = parent.join("4999999-0-0000000000000000");
    std::fs::create_dir_all(dead.join("topics")).expect("orphan");
    std::fs::write(dead.join("topics/x.md"), "left behind").expect("orphan file");
    let live = parent.join("1-0-0000000000000000");
    std::fs::create_dir_all(&live).expect("init's stage");
    let stage = Stage::new(&workspace).expect("stage");
    assert!(!dead.exists(), "the orphan is swept");
    assert_eq!(live.exists(), std::path::Path::new("/proc/1").exists(), "a live process's stage is kept");
    drop(stage);
    assert!(parent.exists() == live.exists());
}

#[test]
fn read_returns_text_and_refuses_what_it_cannot_show() {
    let (temp, workspace) = fixture("read");
    let root = temp.path().join("memory");
    put(&root, "topics/big.md", "é".repeat(200_001).as_bytes());
    put(&root, "topics/bad.md", b"ok \xff bytes\n");
    let mut stage = Stage::new(&workspace).expect("stage");
    assert_eq!(read(&mut stage, "topics/people/ada.md"), Ok(ADA.to_owned()));
    assert_eq!(read(&mut stage, "./topics//people/ada.md"), Ok(ADA.to_owned()));
    assert_eq!(read(&mut stage, "core.md"), Ok("# Core render\n".to_owned()));
    let big = read(&mut stage, "topics/big.md").expect("big");
    assert!(big.starts_with(&"é".repeat(200_000)));
    assert!(!big.starts_with(&"é".repeat(200_001)));
    assert!(big.ends_with("characters]"));
    assert_eq!(read(&mut stage, "topics/bad.md"), Ok("ok \u{fffd} bytes\n".to_owned()));
    assert_eq!(read(&mut stage, "topics/missing.md"), Err(ToolErrorCode::NotFound));
    assert_eq!(read(&mut stage, "topics/people"), Err(ToolErrorCode::NotAFile));
    assert_eq!(read(&mut stage, ""), Err(ToolErrorCode::NotAFile));
    assert_eq!(read(&mut stage, "sources/local/_v2/t.md"), Err(ToolErrorCode::SourcesReadOnly));
    assert_eq!(read(&mut stage, "Sources/local/_v2/t.md"), Err(ToolErrorCode::SourcesReadOnly));
    assert_eq!(read(&mut stage, "topics/.draft.md"), Err(ToolErrorCode::OutsideStage));
    assert_eq!(read(&mut stage, ".scriptorium/runtime.json"), Err(ToolErrorCode::OutsideStage));
    assert_eq!(read(&mut stage, "../outside/secret.md"), Err(ToolErrorCode::OutsideStage));
    let absolute = temp.path().join("outside/secret.md");
    assert_eq!(read(&mut stage, &absolute.display().to_string()), Err(ToolErrorCode::OutsideStage));
    assert_eq!(read(&mut stage, "README.md"), Err(ToolErrorCode::NotFound), "not a staged item");
    assert_eq!(read(&mut stage, "topics/a\nb.md"), Err(ToolErrorCode::InvalidPath));
}

#[test]
fn write_creates_and_replaces_topic_files_only_and_never_touches_the_workspace() {
    let (temp, workspace) = fixture("write");
    let root = temp.path().join("memory");
    let before = workspace.revision().expect("revision");
    let mut stage = Stage::new(&workspace).expect("stage");
    assert!(write(&mut stage, "topics/places/lisbon.md", "# Lisbon\n").expect("create").starts_with("Created"));
    assert!(write(&mut stage, "topics/core.md", "# Core\n\nNew.\n").expect("replace").starts_with("Replaced"));
    assert_eq!(read(&mut stage, "topics/places/lisbon.md"), Ok("# Lisbon\n".to_owned()));
    for refused in ["sources/x.md", "SOURCES/x.md", "ſources/x.md", "./sources/local/_v2/t.md"] {
        assert_eq!(write(&mut stage, refused, "x"), Err(ToolErrorCode::SourcesReadOnly), "{refused}");
    }
    for refused in ["core.md", "timeline/2024.md", "topics/notes.txt", "topics/x", "recent_events.jsonl", "x.md"] {
        assert_eq!(write(&mut stage, refused, "x"), Err(ToolErrorCode::ReadOnlyPath), "{refused}");
    }
    assert_eq!(write(&mut stage, "topics/people", "x"), Err(ToolErrorCode::ReadOnlyPath));
    assert_eq!(write(&mut stage, "topics/people.md/x.md", "x"), Ok("Created topics/people.md/x.md (1 bytes)".into()));
    assert_eq!(write(&mut stage, "topics/core.md/x.md", "x"), Err(ToolErrorCode::NotAFile), "parent is a file");
    assert_eq!(write(&mut stage, "topics/People/bob.md", "x"), Err(ToolErrorCode::CaseAlias));
    assert_eq!(write(&mut stage, "topics/people/ADA.md", "x"), Err(ToolErrorCode::CaseAlias));
    assert_eq!(write(&mut stage, "Topics/x.md", "x"), Err(ToolErrorCode::ReadOnlyPath));
    assert_eq!(write(&mut stage, "topics/.hidden.md", "x"), Err(ToolErrorCode::OutsideStage));
    assert_eq!(write(&mut stage, "topics/memory-superseded/x.md", "x"), Err(ToolErrorCode::OutsideStage));
    assert_eq!(write(&mut stage, "topics/Memory-Superseded/x.md", "x"), Err(ToolErrorCode::OutsideStage));
    assert_eq!(write(&mut stage, "topics/../../outside/x.md", "x"), Err(ToolErrorCode::OutsideStage));
    assert_eq!(write(&mut stage, "/etc/x.md", "x"), Err(ToolErrorCode::OutsideStage));
    assert_eq!(write(&mut stage, "topics/a\u{0}.md", "x"), Err(ToolErrorCode::InvalidPath));
    assert_eq!(write(&mut stage, "topics/a\u{7f}.md", "x"), Err(ToolErrorCode::InvalidPath));
    assert_eq!(write(&mut stage, &format!("topics/{}.md", "a".repeat(300)), "x"), Err(ToolErrorCode::InvalidPath));
    // NFD spelling of an NFC name that exists.
    write(&mut stage, "topics/caf\u{e9}.md", "x").expect("nfc");
    assert_eq!(write(&mut stage, "topics/cafe\u{301}.md", "x"), Err(ToolErrorCode::CaseAlias));
    // After a delete the spelling is free again.
    call(&mut stage, "Delete", json!({"path": "topics/café.md"})).expect("delete");
    write(&mut stage, "topics/CAFE\u{301}.md", "x").expect("free once the other spelling is gone");

    assert_eq!(workspace.revision().expect("revision"), before, "the workspace is untouched");
    assert_eq!(std::fs::read(root.join("topics/core.md")).expect("core"), b"# Core\n");
    assert!(!temp.path().join("outside/x.md").exists());
}

#[test]
fn edit_replaces_exact_text_once_or_everywhere() {
    let (_temp, workspace) = fixture("edit");
    let mut stage = Stage::new(&workspace).expect("stage");
    let edit = |stage: &mut Stage, old: &str, new: &str, all: Value| {
        call(
            stage,
            "Edit",
            json!({"file_path": "topics/people/ada.md", "old_string": old, "new_string": new, "replace_all": all}),
        )
    };
    assert_eq!(
        edit(&mut stage, "green tea", "coffee", Value::Null),
        Ok("Edited topics/people/ada.md: replaced 1 occurrence".into())
    );
    assert!(read(&mut stage, "topics/people/ada.md").expect("read").contains("drinks coffee every"));
    assert_eq!(edit(&mut stage, "green tea", "x", Value::Null), Err(ToolErrorCode::EditNoMatch));
    assert_eq!(edit(&mut stage, "e", "E", Value::Null), Err(ToolErrorCode::EditAmbiguous));
    assert_eq!(edit(&mut stage, "e", "E", json!(false)), Err(ToolErrorCode::EditAmbiguous));
    assert_eq!(edit(&mut stage, "", "E", json!(true)), Err(ToolErrorCode::InvalidCall));
    assert_eq!(edit(&mut stage, "e", "E", json!("yes")), Err(ToolErrorCode::InvalidCall));
    let all = edit(&mut stage, "Ada", "ADA", json!(true)).expect("replace all");
    assert_eq!(all, "Edited topics/people/ada.md: replaced 2 occurrences");
    assert!(!read(&mut stage, "topics/people/ada.md").expect("read").contains("Ada"));
    let missing =
        call(&mut stage, "Edit", json!({"file_path": "topics/nope.md", "old_string": "a", "new_string": "b"}));
    assert_eq!(missing, Err(ToolErrorCode::NotFound));
    let derived = call(&mut stage, "Edit", json!({"file_path": "core.md", "old_string": "Core", "new_string": "b"}));
    assert_eq!(derived, Err(ToolErrorCode::ReadOnlyPath));
    let huge = call(
        &mut stage,
        "Edit",
        json!({"file_path": "topics/people/ada.md", "old_string": "A", "new_string": "x".repeat(1 << 20), "replace_all": true}),
    );
    assert_eq!(huge, Ok("Edited topics/people/ada.md: replaced 4 occurrences".into()));
    let blowup = call(
        &mut stage,
        "Edit",
        json!({"file_path": "topics/people/ada.md", "old_string": "x", "new_string": "y".repeat(1 << 20), "replace_all": true}),
    );
    assert_eq!(blowup, Err(ToolErrorCode::TooLarge), "a million copies of a megabyte are refused before building");
}

#[test]
fn glob_matches_whole_paths_recursively_with_directories_marked() {
    let (_temp, workspace) = fixture("glob");
    let mut stage = Stage::new(&workspace).expect("stage");
    let glob = |stage: &mut Stage, pattern: &str| call(stage, "Glob", json!({"pattern": pattern}));
    assert_eq!(glob(&mut stage, "topics/**/*.md"), Ok("topics/core.md\ntopics/people/ada.md".into()));
    assert_eq!(
        glob(&mut stage, "**/*.md"),
        Ok("core.md\ntimeline/2024.md\ntopics/core.md\ntopics/people/ada.md".into())
    );
    assert_eq!(glob(&mut stage, "*.md"), Ok("core.md".into()));
    assert_eq!(glob(&mut stage, "topics/*"), Ok("topics/core.md\ntopics/notes.txt\ntopics/people/".into()));
    assert_eq!(glob(&mut stage, "topics/{core,notes}.*"), Ok("topics/core.md\ntopics/notes.txt".into()));
    assert_eq!(glob(&mut stage, "topics/[!c]*"), Ok("topics/notes.txt\ntopics/people/".into()));
    assert_eq!(glob(&mut stage, "topics/p?ople/ada.md"), Ok("topics/people/ada.md".into()));
    assert!(glob(&mut stage, "sources/**").expect("no error").starts_with("No files match"));
    assert_eq!(glob(&mut stage, "/etc/*"), Err(ToolErrorCode::InvalidPattern));
    assert_eq!(glob(&mut stage, ""), Err(ToolErrorCode::InvalidPattern));
    assert!(glob(&mut stage, "topics/{a,b").is_ok(), "an unclosed brace is literal");
    assert!(glob(&mut stage, "topics/[abc").is_ok(), "an unclosed class is literal");
    for n in 0..520 {
        write(&mut stage, &format!("topics/many/{n:04}.md"), "x").expect("write");
    }
    let many = glob(&mut stage, "topics/many/*.md").expect("many");
    let lines: Vec<&str> = many.lines().collect();
    assert_eq!(lines.len(), 501);
    assert_eq!(lines.first(), Some(&"topics/many/0000.md"));
    assert_eq!(lines.get(499), Some(&"topics/many/0499.md"));
    assert!(lines.get(500).is_some_and(|line| line.contains("20 more")));
    call(&mut stage, "Delete", json!({"path": "topics/people/ada.md"})).expect("delete");
    assert_eq!(glob(&mut stage, "topics/people/*"), Ok("No files match \"topics/people/*\".".into()));
}

#[test]
fn grep_prints_path_line_text_within_its_limits() {
    let (_temp, workspace) = fixture("grep");
    let mut stage = Stage::new(&workspace).expect("stage");
    let grep = |stage: &mut Stage, args: Value| call(stage, "Grep", args);
    assert_eq!(
        grep(&mut stage, json!({"pattern": "(?i)^# core"})),
        Ok("core.md:1:# Core render\ntopics/core.md:1:# Core".into())
    );
    assert_eq!(grep(&mut stage, json!({"pattern": "Core", "path": "topics"})), Ok("topics/core.md:1:# Core".into()));
    assert_eq!(
        grep(&mut stage, json!({"pattern": "tea", "path": "topics/people/ada.md"}))
            .map(|s| s.starts_with("topics/people/ada.md:5:Ada")),
        Ok(true)
    );
    assert!(grep(&mut stage, json!({"pattern": "secret"})).expect("searched").starts_with("No lines match"));
    assert_eq!(grep(&mut stage, json!({"pattern": "x", "path": "sources"})), Err(ToolErrorCode::SourcesReadOnly));
    assert_eq!(grep(&mut stage, json!({"pattern": "x", "path": "topics/none"})), Err(ToolErrorCode::NotFound));
    assert_eq!(grep(&mut stage, json!({"pattern": "(unclosed"})), Err(ToolErrorCode::InvalidPattern));
    assert_eq!(grep(&mut stage, json!({"pattern": "a{100000}{100000}"})), Err(ToolErrorCode::InvalidPattern));
    assert_eq!(grep(&mut stage, json!({"pattern": 7})), Err(ToolErrorCode::InvalidCall));
    let long = format!("{}\n", "z".repeat(800));
    write(&mut stage, "topics/long.md", &long.repeat(600)).expect("write");
    let out = grep(&mut stage, json!({"pattern": "z", "path": "topics/long.md"})).expect("grep");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 501);
    assert_eq!(lines.first().map(|line| line.len()), Some("topics/long.md:1:".len() + 500));
    assert!(lines.get(500).is_some_and(|line| line.contains("500 matches")));
}

#[test]
fn move_and_delete_work_on_topic_files_and_directories() {
    let (_temp, workspace) = fixture("move");
    let mut stage = Stage::new(&workspace).expect("stage");
    let mv = |stage: &mut Stage, from: &str, to: &str| {
        call(stage, "Move", json!({"source_path": from, "destination_path": to}))
    };
    write(&mut stage, "topics/people/bob.md", "# Bob\n").expect("write");
    assert_eq!(
        mv(&mut stage, "topics/people", "topics/friends"),
        Ok("Moved topics/people to topics/friends (2 files)".into())
    );
    assert_eq!(read(&mut stage, "topics/friends/ada.md"), Ok(ADA.into()));
    assert_eq!(read(&mut stage, "topics/people/ada.md"), Err(ToolErrorCode::NotFound));
    assert_eq!(mv(&mut stage, "topics/friends/ada.md", "topics/core.md"), Err(ToolErrorCode::Exists));
    assert_eq!(mv(&mut stage, "topics/friends", "topics/friends/inner"), Err(ToolErrorCode::InvalidCall));
    assert_eq!(mv(&mut stage, "topics/friends/ada.md", "topics/friends/ada.md"), Err(ToolErrorCode::InvalidCall));
    assert_eq!(mv(&mut stage, "topics/friends/ada.md", "sources/ada.md"), Err(ToolErrorCode::SourcesReadOnly));
    assert_eq!(mv(&mut stage, "topics/friends/ada.md", "core2.md"), Err(ToolErrorCode::ReadOnlyPath));
    assert_eq!(mv(&mut stage, "topics/notes.txt", "topics/notes.md"), Err(ToolErrorCode::ReadOnlyPath));
    assert_eq!(mv(&mut stage, "topics", "topics2"), Err(ToolErrorCode::ReadOnlyPath), "topics/ holds notes.txt");
    assert_eq!(mv(&mut stage, "topics/none.md", "topics/x.md"), Err(ToolErrorCode::NotFound));
    assert_eq!(read(&mut stage, "topics/friends/ada.md"), Ok(ADA.into()), "a refused move changes nothing");
    let delete = |stage: &mut Stage, path: &str| call(stage, "Delete", json!({"path": path}));
    assert_eq!(delete(&mut stage, "topics/friends"), Ok("Deleted topics/friends (2 files)".into()));
    assert_eq!(delete(&mut stage, "topics/friends"), Err(ToolErrorCode::NotFound));
    assert_eq!(delete(&mut stage, "core.md"), Err(ToolErrorCode::ReadOnlyPath));
    assert_eq!(delete(&mut stage, ""), Err(ToolErrorCode::ReadOnlyPath));
    assert_eq!(delete(&mut stage, "sources"), Err(ToolErrorCode::SourcesReadOnly));
    assert_eq!(changes(&stage), [("topics/people/ada.md".to_owned(), None)], "bob was never committed");
}

#[test]
fn the_diff_is_the_changed_topic_files_and_nothing_else() {
    let (_temp, workspace) = fixture("diff");
    let mut stage = Stage::new(&workspace).expect("stage");
    write(&mut stage, "topics/people/ada.md", ADA).expect("same bytes");
    write(&mut stage, "topics/tmp.md", "x").expect("write");
    call(&mut stage, "Delete", json!({"path": "topics/tmp.md"})).expect("delete");
    assert!(
        stage.edit().expect("diff").is_none(),
        "rewriting the same bytes and a created-then-deleted file are no change"
    );
    write(&mut stage, "topics/new.md", "# New\n").expect("write");
    call(&mut stage, "Delete", json!({"path": "topics/core.md"})).expect("delete");
    assert_eq!(
        changes(&stage),
        [("topics/core.md".to_owned(), None), ("topics/new.md".to_owned(), Some("# New\n".to_owned()))]
    );
    assert_eq!(stage.changed_paths().expect("paths"), ["topics/core.md", "topics/new.md"]);
    stage.refresh(&workspace).expect("refresh");
    assert!(stage.edit().expect("diff").is_none());
    assert_eq!(read(&mut stage, "topics/new.md"), Err(ToolErrorCode::NotFound));
    assert_eq!(read(&mut stage, "topics/core.md"), Ok("# Core\n".into()));
    assert_eq!(std::fs::read_dir(stage.dir()).expect("dir").count(), 0, "the stage directory is emptied");
}

#[test]
fn a_committed_file_that_changes_under_the_stage_reads_as_stale() {
    let (temp, workspace) = fixture("stale");
    let root = temp.path().join("memory");
    let mut stage = Stage::new(&workspace).expect("stage");
    assert_eq!(read(&mut stage, "topics/core.md"), Ok("# Core\n".into()));
    put(&root, "topics/core.md", b"# Core changed behind the stage\n");
    assert_eq!(read(&mut stage, "topics/core.md"), Err(ToolErrorCode::Stale), "not the file first read");
    std::fs::remove_file(root.join("core.md")).expect("remove");
    assert_eq!(read(&mut stage, "core.md"), Err(ToolErrorCode::Stale));
    write(&mut stage, "topics/core.md", "# Mine\n").expect("a write needs no read");
    call(&mut stage, "Delete", json!({"path": "topics/people/ada.md"})).expect("delete");
    std::fs::remove_file(root.join("topics/people/ada.md")).expect("remove");
    put(&root, "topics/people/ada.md", b"other\n");
    // Only a written file whose base must be compared is read; a delete needs nothing.
    let error = stage.edit().expect_err("core.md's base changed");
    assert_eq!(error.code(), scriptorium_transaction::ErrorCode::ConcurrentUpdate);
}

#[cfg(unix)]
#[test]
fn links_in_the_workspace_or_planted_in_the_stage_are_never_followed() {
    use std::os::unix::fs::symlink;
    let (temp, workspace) = fixture("links");
    let root = temp.path().join("memory");
    let outside = temp.path().join("outside");
    symlink(&outside, root.join("topics/away")).expect("dir link");
    symlink(outside.join("secret.md"), root.join("topics/secret.md")).expect("file link");
    let mut stage = Stage::new(&workspace).expect("stage");
    assert!(!stage.files().iter().any(|file| file.contains("away") || file.contains("secret")));
    assert_eq!(read(&mut stage, "topics/secret.md"), Err(ToolErrorCode::Symlink));
    assert_eq!(read(&mut stage, "topics/away/secret.md"), Err(ToolErrorCode::Symlink));
    assert_eq!(write(&mut stage, "topics/away/x.md", "x"), Err(ToolErrorCode::Symlink));
    assert_eq!(write(&mut stage, "topics/secret.md", "x"), Err(ToolErrorCode::Symlink));
    assert_eq!(call(&mut stage, "Delete", json!({"path": "topics/away"})), Err(ToolErrorCode::Symlink));

    // Links planted in the stage directory itself.
    write(&mut stage, "topics/mine.md", "mine").expect("write");
    let planted = stage.dir().join("topics/mine.md");
    std::fs::remove_file(&planted).expect("remove");
    symlink(outside.join("secret.md"), &planted).expect("plant");
    assert_eq!(read(&mut stage, "topics/mine.md"), Err(ToolErrorCode::Symlink));
    assert_eq!(write(&mut stage, "topics/mine.md", "overwrite"), Err(ToolErrorCode::Symlink));
    symlink(&outside, stage.dir().join("topics/planted")).expect("plant dir");
    assert_eq!(write(&mut stage, "topics/planted/x.md", "x"), Err(ToolErrorCode::Symlink));
    assert!(stage.edit().is_err(), "the diff refuses to read through the planted link");
    assert_eq!(std::fs::read(outside.join("secret.md")).expect("outside"), b"outside\n");
    assert!(!outside.join("x.md").exists());
    drop(stage);
    assert_eq!(std::fs::read(outside.join("secret.md")).expect("outside survives the drop"), b"outside\n");
}

#[test]
fn the_structure_listing_names_every_file_and_each_topic_block() {
    let (_temp, workspace) = fixture("listing");
    let mut stage = Stage::new(&workspace).expect("stage");
    write(&mut stage, "topics/uncited.md", "# New\n\nNo id yet.\n").expect("write");
    call(&mut stage, "Delete", json!({"path": "topics/core.md"})).expect("delete");
    let listing = stage.structure_listing().expect("listing");
    let expected = "core.md\ntimeline/2024.md\ntopics/notes.txt\ntopics/people/ada.md\n  ^ab12cd34  [Ada]  Ada prefers short answers and drinks green tea every morning before the standup meeting s…\ntopics/uncited.md\n";
    assert_eq!(listing, expected);
    let block = listing.lines().find(|line| line.starts_with("  ^")).expect("a block line");
    let prose = block.split("  ").nth(3).expect("prose");
    assert_eq!(prose.chars().count(), super::LISTING_PROSE_CHARS);
}

/// Past its budget the listing keeps every file line, lists `topics/core.md`'s blocks
/// first and other files' blocks whole or not at all, and says what it left out.
#[test]
fn a_listing_over_its_budget_keeps_the_files_and_says_what_it_left_out() {
    let (_temp, workspace) = fixture("listing-budget");
    let mut stage = Stage::new(&workspace).expect("stage");
    for n in 0..30 {
        let topic =
            format!("# T{n}\n\nFact {n} is true.[^e1] ^{n:08x}\n\n[^e1]: Time: `2024-01-01`; Sources: [x](D1:1)\n");
        write(&mut stage, &format!("topics/t{n:02}.md"), &topic).expect("write");
    }
    let full = stage.structure_listing_within(usize::MAX).expect("listing");
    assert!(!full.contains("not listed"));
    assert_eq!(stage.structure_listing().expect("listing"), full, "a small stage is listed whole");
    let files = stage.files();
    let paths: usize = files.iter().map(|path| path.len() + 1).sum();
    let budget = paths + 200;
    let short = stage.structure_listing_within(budget).expect("listing");
    let (body, note) = short.trim_end().rsplit_once('\n').expect("a note line");
    assert!(note.contains("more topic files are not listed"), "{note}");
    assert!(body.len() < budget);
    for path in &files {
        assert!(short.lines().any(|line| line == path), "{path} is listed");
    }
    // Each listed file shows all of its blocks or none.
    let listed: Vec<&str> = short.lines().filter(|line| line.starts_with("  ^")).collect();
    assert!(!listed.is_empty() && listed.len() < full.lines().filter(|line| line.starts_with("  ^")).count());
    let tiny = stage.structure_listing_within(80).expect("listing");
    assert!(tiny.contains("topics/ (32 files)"), "{tiny}");
    assert!(tiny.trim_end().ends_with("Grep to find text)"), "{tiny}");
    assert!(tiny.lines().count() < files.len());
}

#[test]
fn the_dispatcher_answers_every_malformed_call_with_an_error() {
    let (_temp, workspace) = fixture("dispatch");
    let mut stage = Stage::new(&workspace).expect("stage");
    assert_eq!(call(&mut stage, "shell", json!({"command": "ls"})), Err(ToolErrorCode::InvalidCall));
    assert_eq!(call(&mut stage, "read", json!({"file_path": "core.md"})), Err(ToolErrorCode::InvalidCall));
    assert_eq!(call(&mut stage, "Read", json!(["core.md"])), Err(ToolErrorCode::InvalidCall));
    assert_eq!(call(&mut stage, "Read", json!({})), Err(ToolErrorCode::InvalidCall));
    assert_eq!(call(&mut stage, "Read", json!({"file_path": 1})), Err(ToolErrorCode::InvalidCall));
    assert_eq!(call(&mut stage, "Read", json!({"file_path": null})), Err(ToolErrorCode::InvalidCall));
    assert_eq!(call(&mut stage, "Write", json!({"file_path": "topics/a.md"})), Err(ToolErrorCode::InvalidCall));
    let huge = "x".repeat(super::MAX_ARGUMENT_BYTES + 1);
    assert_eq!(
        call(&mut stage, "Write", json!({"file_path": "topics/a.md", "content": huge})),
        Err(ToolErrorCode::InvalidCall)
    );
    assert_eq!(call(&mut stage, "Read", json!({"file_path": "core.md", "extra": 1})), Ok("# Core render\n".into()));
    let outcome = stage.execute_json("Read", "{\"file_path\": ");
    assert_eq!(outcome.code, Some(ToolErrorCode::InvalidCall));
    assert!(outcome.content.starts_with("WRITER_STAGE_INVALID_CALL: "));
    assert!(outcome.content.contains("\nHint: "));
    assert_eq!(stage.execute_json("Read", "{\"file_path\": \"core.md\"}").content, "# Core render\n");
    assert!(stage.edit().expect("diff").is_none(), "no malformed call changed the stage");
}

#[test]
fn every_tool_has_an_object_schema_whose_required_fields_are_properties() {
    let definitions = tool_definitions();
    assert!(definitions.iter().map(|definition| definition.name).eq(TOOL_NAMES));
    for definition in &definitions {
        let schema = &definition.parameters;
        assert_eq!(schema["type"], "object", "{}", definition.name);
        let properties = schema["properties"].as_object().expect("properties");
        let required = schema["required"].as_array().expect("required");
        assert!(!required.is_empty());
        assert!(required.iter().all(|name| name.as_str().is_some_and(|name| properties.contains_key(name))));
        assert!(
            properties.values().all(|property| property["type"].is_string() && property["description"].is_string())
        );
        assert!(!definition.description.is_empty());
        assert_eq!(definition.to_json()["name"], definition.name);
    }
}

#[test]
fn error_codes_are_unique_stage_codes() {
    let codes: std::collections::BTreeSet<&str> = ToolErrorCode::ALL.iter().map(|code| code.as_str()).collect();
    assert_eq!(codes.len(), ToolErrorCode::ALL.len());
    assert!(codes.iter().all(|code| code.starts_with("WRITER_STAGE_")));
}

#[test]
fn the_diff_installs_through_the_workspace_at_the_stage_revision_only() {
    use scriptorium_transaction::{ErrorCode as TxCode, NoDerivedViews, UpdateRequest};
    let (temp, workspace) = fixture("install");
    let root = temp.path().join("memory");
    let mut stage = Stage::new(&workspace).expect("stage");
    // The fixture's citation names no archived source, so the edit that installs here is a delete.
    call(&mut stage, "Delete", json!({"path": "topics/people"})).expect("delete");
    let edit = stage.edit().expect("diff").expect("a change");

    let stale = Stage::at_revision(&workspace, "0".repeat(32)).expect("stage at a wrong revision");
    let error = workspace
        .update(&UpdateRequest::new(stale.revision(), edit.clone()), &NoDerivedViews)
        .expect_err("a base that is not the committed revision");
    assert_eq!(error.code(), TxCode::ConcurrentUpdate);
    assert!(root.join("topics/people/ada.md").exists(), "nothing installed");

    let result = workspace.update(&UpdateRequest::new(stage.revision(), edit), &NoDerivedViews).expect("install");
    assert!(result.changed_files.iter().any(|path| path == "topics/people/ada.md"), "{:?}", result.changed_files);
    assert!(!root.join("topics/people/ada.md").exists());
    stage.refresh_at(&workspace, result.revision.clone()).expect("refresh");
    assert_eq!(stage.revision(), workspace.revision().expect("revision"));
    assert!(stage.edit().expect("diff").is_none());
    assert_eq!(read(&mut stage, "topics/people/ada.md"), Err(ToolErrorCode::NotFound));
    assert!(stage.files().iter().all(|path| root.join(path).is_file()), "the refreshed stage is the installed tree");
}
