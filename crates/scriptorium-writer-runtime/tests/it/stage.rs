//! The writer's restricted stage through the public API, inside real write passes: tool
//! calls edit the stage, its diff commits through the pass's [`WriterStage`] and installs
//! in a real workspace; a rejected commit is repaired on the refreshed stage; the stage
//! directory is gone after every run; and random tool paths (absolute, `..`, unicode,
//! case variants, links, hidden components) never reach outside the stage or `sources/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use scriptorium_archive_format::{source_anchor, v2_location};
use scriptorium_transaction::{Edit, ErrorCode as TxCode, TopicPath, Workspace};
use scriptorium_writer_runtime::{
    AgentError, AgentErrorKind, Runtime, SqliteStore, Stage, StageKind, ToolErrorCode, WriterAgent, WriterReport,
    WriterStage, WriterTask,
};
use serde_json::{Value, json};

use crate::support::{FixedClock, T0, TempDir, TestResult, chain, config};

/// What the tool-using stand-in for the model does on a write run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Plan {
    /// Write one cited paragraph per record with `Write`, commit the stage's diff.
    Cite,
    /// First commit an uncited paragraph (rejected), then repair on the refreshed stage.
    RejectThenRepair,
    /// Write a file, then fail before committing.
    FailAfterWriting,
    /// Commit another edit first, so the stage's diff meets a moved revision; then
    /// refresh and commit again.
    Concurrent,
}

/// The test stand-in for the model: it calls the stage's tools as a model would, through
/// [`Stage::execute`], and records what it saw.
struct ToolWriter {
    plan: Plan,
    dirs: Mutex<Vec<PathBuf>>,
    refusals: Mutex<Vec<ToolErrorCode>>,
    rejections: Mutex<Vec<TxCode>>,
    listings: Mutex<Vec<String>>,
}

impl ToolWriter {
    fn new(plan: Plan) -> Arc<ToolWriter> {
        Arc::new(ToolWriter {
            plan,
            dirs: Mutex::default(),
            refusals: Mutex::default(),
            rejections: Mutex::default(),
            listings: Mutex::default(),
        })
    }
}

fn agent_error(message: impl std::fmt::Display) -> AgentError {
    AgentError::new(AgentErrorKind::Execution, message.to_string())
}

/// The text of the topic file `path` citing every record of the batch, as the write
/// prompt asks (links relative to the file).
fn cited(task: &WriterTask<'_>, path: &str) -> String {
    let up = "../".repeat(path.matches('/').count());
    let mut text = String::from("# Owner\n");
    for (index, record) in task.records.iter().enumerate() {
        let id = record.source.source_id();
        let location = v2_location(&id).expect("a valid source id");
        let fact = record.source.content.split(" word").next().unwrap_or("");
        let n = index + 1;
        text.push_str(&format!(
            "\n{fact} was said.[^e{n}]\n\n[^e{n}]: Time: `2024-05-01`; Sources: [turn]({up}{location}#{anchor})\n",
            anchor = source_anchor(&id)
        ));
    }
    text
}

impl WriterAgent for ToolWriter {
    fn run(&self, task: &WriterTask<'_>, writer: &mut WriterStage<'_>) -> Result<WriterReport, AgentError> {
        if task.kind == StageKind::Organize {
            return Ok(WriterReport::default());
        }
        let mut stage = Stage::new(writer.workspace()).map_err(agent_error)?;
        self.dirs.lock().expect("dirs").push(stage.dir().to_path_buf());
        // What an injected record might ask for: every one is refused as a tool result.
        for (name, arguments) in [
            ("Write", json!({"file_path": "sources/openprogram/forged.md", "content": "forged"})),
            ("Read", json!({"file_path": "sources"})),
            ("Write", json!({"file_path": "../escape.md", "content": "x"})),
            ("Write", json!({"file_path": ".scriptorium/runtime.json", "content": "{}"})),
            ("shell", json!({"command": "rm -rf topics"})),
        ] {
            let outcome = stage.execute(name, &arguments);
            self.refusals.lock().expect("refusals").extend(outcome.code);
        }
        let path = "topics/people/owner.md";
        let write = |stage: &mut Stage, content: &str| {
            let outcome = stage.execute("Write", &json!({"file_path": path, "content": content}));
            if outcome.is_error { Err(agent_error(outcome.content)) } else { Ok(()) }
        };
        let commit = |stage: &Stage, writer: &mut WriterStage<'_>| -> Result<_, AgentError> {
            match writer.commit_stage(stage) {
                Ok(None) => Err(agent_error("the stage is unchanged")),
                Ok(Some(result)) => Ok(Ok(result)),
                Err(error) => Ok(Err(error)),
            }
        };
        match self.plan {
            Plan::Cite => {
                write(&mut stage, &cited(task, path))?;
                commit(&stage, writer)?.map_err(agent_error)?;
            }
            Plan::RejectThenRepair => {
                write(&mut stage, "# Owner\n\nAn uncited claim.\n")?;
                let error = commit(&stage, writer)?.expect_err("an uncited paragraph is rejected");
                self.rejections.lock().expect("rejections").push(error.code());
                stage.refresh(writer.workspace()).map_err(agent_error)?;
                assert!(stage.edit().map_err(agent_error)?.is_none(), "the refreshed stage is the committed tree");
                write(&mut stage, &cited(task, path))?;
                commit(&stage, writer)?.map_err(agent_error)?;
            }
            Plan::Concurrent => {
                write(&mut stage, &cited(task, path))?;
                let other = stage.execute(
                    "Write",
                    &json!({"file_path": "topics/other.md", "content": cited(task, "topics/other.md")}),
                );
                assert!(!other.is_error);
                let mut elsewhere = Stage::new(writer.workspace()).map_err(agent_error)?;
                let moved = elsewhere.execute(
                    "Write",
                    &json!({"file_path": "topics/first.md", "content": cited(task, "topics/first.md")}),
                );
                assert!(!moved.is_error);
                commit(&elsewhere, writer)?.map_err(agent_error)?;
                let error = commit(&stage, writer)?.expect_err("the revision moved since the stage was made");
                self.rejections.lock().expect("rejections").push(error.code());
                stage.refresh(writer.workspace()).map_err(agent_error)?;
                assert!(stage.edit().map_err(agent_error)?.is_none(), "the rejected diff is gone");
                write(&mut stage, &cited(task, path))?;
                commit(&stage, writer)?.map_err(agent_error)?;
            }
            Plan::FailAfterWriting => {
                write(&mut stage, &cited(task, path))?;
                return Err(agent_error("the model stopped with an error"));
            }
        }
        stage.refresh(writer.workspace()).map_err(agent_error)?;
        self.listings.lock().expect("listings").push(stage.structure_listing().map_err(agent_error)?);
        Ok(WriterReport::default())
    }
}

struct Pass {
    _dir: TempDir,
    memory: PathBuf,
    writer: Arc<ToolWriter>,
    runtime: Runtime,
    store: Arc<SqliteStore>,
}

fn pass(label: &str, plan: Plan) -> Result<Pass, Box<dyn std::error::Error>> {
    let dir = TempDir::new(label);
    let memory = dir.path().join("memory");
    let store = Arc::new(SqliteStore::open(&dir.path().join("sessions.sqlite3"))?);
    let writer = ToolWriter::new(plan);
    let runtime =
        Runtime::new(Workspace::open(&memory)?, store.clone(), writer.clone(), FixedClock::at(T0 + 60.0), config(8000));
    Ok(Pass { _dir: dir, memory, writer, runtime, store })
}

impl Pass {
    fn run(&self) -> Result<Option<scriptorium_writer_runtime::WriteFailure>, Box<dyn std::error::Error>> {
        self.store.append("s1", &chain("a", None, 3, 2, T0), T0)?;
        Ok(self.runtime.hook("s1", None, true))
    }

    fn owner_topic(&self) -> Option<String> {
        std::fs::read_to_string(self.memory.join("topics/people/owner.md")).ok()
    }

    fn stage_dirs_gone(&self) -> bool {
        let dirs = self.writer.dirs.lock().expect("dirs");
        !dirs.is_empty() && dirs.iter().all(|dir| !dir.exists())
    }
}

#[test]
fn tool_edits_on_the_stage_install_through_the_write_pass_and_the_stage_is_gone() -> TestResult {
    let fx = pass("stage-cite", Plan::Cite)?;
    assert_eq!(fx.run()?, None);
    let topic = fx.owner_topic().expect("installed");
    for id in ["a0", "a1", "a2"] {
        assert!(topic.contains(&format!("fact {id} was said.")), "{id}");
    }
    assert!(fx.stage_dirs_gone());
    assert_eq!(
        *fx.writer.refusals.lock().expect("refusals"),
        [
            ToolErrorCode::SourcesReadOnly,
            ToolErrorCode::SourcesReadOnly,
            ToolErrorCode::OutsideStage,
            ToolErrorCode::OutsideStage,
            ToolErrorCode::InvalidCall
        ]
    );
    assert!(!fx.memory.join("sources/openprogram/forged.md").exists());
    assert!(!fx.memory.parent().expect("parent").join("escape.md").exists());
    // After the commit the refreshed stage lists the installed blocks with their new ids.
    let listings = fx.writer.listings.lock().expect("listings");
    let listing = listings.first().expect("a listing");
    let blocks: Vec<&str> = listing.lines().filter(|line| line.starts_with("  ^")).collect();
    assert_eq!(blocks.len(), 3, "{listing}");
    assert!(blocks.iter().all(|line| line.contains("  [Owner]  fact a")));
    assert!(listing.contains("topics/people/owner.md\n"));
    assert!(!listing.contains("sources/"));
    Ok(())
}

#[test]
fn a_rejected_stage_commit_changes_nothing_and_the_repair_installs_once() -> TestResult {
    let fx = pass("stage-repair", Plan::RejectThenRepair)?;
    assert_eq!(fx.run()?, None);
    assert_eq!(*fx.writer.rejections.lock().expect("rejections"), [TxCode::InvalidTopicFormat]);
    let topic = fx.owner_topic().expect("installed");
    assert!(!topic.contains("uncited"));
    assert_eq!(topic.matches("fact a0 was said.").count(), 1);
    assert!(fx.stage_dirs_gone());
    Ok(())
}

#[test]
fn a_stage_diff_meeting_a_moved_revision_is_a_concurrent_update_that_changes_nothing() -> TestResult {
    let fx = pass("stage-concurrent", Plan::Concurrent)?;
    assert_eq!(fx.run()?, None);
    assert_eq!(*fx.writer.rejections.lock().expect("rejections"), [TxCode::ConcurrentUpdate]);
    assert!(fx.memory.join("topics/first.md").exists());
    assert!(!fx.memory.join("topics/other.md").exists(), "the rejected diff installed nothing");
    assert!(fx.owner_topic().is_some(), "the diff made on the refreshed stage installed");
    assert!(fx.stage_dirs_gone());
    Ok(())
}

#[test]
fn a_failed_run_installs_nothing_and_leaves_no_stage() -> TestResult {
    let fx = pass("stage-fail", Plan::FailAfterWriting)?;
    let failure = fx.run()?.expect("the run failed");
    assert_eq!(failure.reason_code, scriptorium_writer_runtime::MemoryWriteFailureCode::ModelFailureUnknown);
    assert_eq!(fx.owner_topic(), None);
    assert!(fx.stage_dirs_gone());
    let parent = fx.memory.join(".scriptorium").join(scriptorium_writer_runtime::STAGE_PARENT);
    assert!(!parent.exists(), "no stage is left in the runtime directory");
    Ok(())
}

/// Every regular file under `root` (never through a link), path → bytes, and every link.
fn tree(root: &Path, skip: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.starts_with(skip) {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            if meta.is_dir() {
                pending.push(path);
            } else if meta.is_file() {
                out.insert(path.clone(), std::fs::read(&path).ok());
            } else {
                out.insert(path, None);
            }
        }
    }
    out
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(32)
}

/// Path components a hostile model might send.
fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("..".to_owned()),
        Just(".".to_owned()),
        Just(String::new()),
        Just("topics".to_owned()),
        Just("Topics".to_owned()),
        Just("TOPICS".to_owned()),
        Just("sources".to_owned()),
        Just("Sources".to_owned()),
        Just("\u{17f}ources".to_owned()),
        Just("people".to_owned()),
        Just("People".to_owned()),
        Just("ada.md".to_owned()),
        Just("Ada.md".to_owned()),
        Just("caf\u{e9}.md".to_owned()),
        Just("cafe\u{301}.md".to_owned()),
        Just("link".to_owned()),
        Just("filelink.md".to_owned()),
        Just(".git".to_owned()),
        Just(".scriptorium".to_owned()),
        Just(".hidden.md".to_owned()),
        Just("memory-superseded".to_owned()),
        Just("outside".to_owned()),
        Just("x\u{0}.md".to_owned()),
        Just("\u{4e2d}\u{6587}.md".to_owned()),
        "[a-zA-Z.]{1,6}",
    ]
}

fn hostile_path(outside: String) -> impl Strategy<Value = String> {
    prop_oneof![
        8 => prop::collection::vec(component(), 1..6).prop_map(|parts| parts.join("/")),
        1 => prop::collection::vec(component(), 1..4).prop_map(|parts| format!("/{}", parts.join("/"))),
        1 => Just(outside),
    ]
}

fn op(outside: String) -> impl Strategy<Value = (usize, String, String)> {
    (0usize..6, hostile_path(outside.clone()), hostile_path(outside))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn random_tool_paths_never_reach_outside_the_stage_or_into_sources(
        ops in prop::collection::vec(op("/tmp/scriptorium-never/x.md".to_owned()), 1..24),
    ) {
        let dir = TempDir::new("stage-paths");
        let memory = dir.path().join("memory");
        let workspace = Workspace::open(&memory).expect("open");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).expect("outside");
        std::fs::write(outside.join("ada.md"), "outside bytes").expect("outside file");
        std::fs::create_dir_all(memory.join("topics/people")).expect("topics");
        std::fs::write(memory.join("topics/people/ada.md"), "# Ada\n").expect("topic");
        std::fs::create_dir_all(memory.join("sources/local")).expect("sources");
        std::fs::write(memory.join("sources/local/ada.md"), "source bytes").expect("source");
        std::os::unix::fs::symlink(&outside, memory.join("topics/link")).expect("dir link");
        std::os::unix::fs::symlink(outside.join("ada.md"), memory.join("topics/filelink.md")).expect("file link");
        let stage_parent = workspace.runtime_dir().join(scriptorium_writer_runtime::STAGE_PARENT);
        let before = tree(dir.path(), &stage_parent);

        let mut stage = Stage::new(&workspace).expect("stage");
        for (kind, a, b) in &ops {
            let (name, arguments): (&str, Value) = match kind {
                0 => ("Read", json!({"file_path": a})),
                1 => ("Write", json!({"file_path": a, "content": "staged"})),
                2 => ("Edit", json!({"file_path": a, "old_string": "#", "new_string": "##", "replace_all": true})),
                3 => ("Move", json!({"source_path": a, "destination_path": b})),
                4 => ("Delete", json!({"path": a})),
                _ => ("Grep", json!({"pattern": "bytes", "path": a})),
            };
            let outcome = stage.execute(name, &arguments);
            prop_assert!(!outcome.content.contains("outside bytes"), "{name} {arguments}: {}", outcome.content);
            prop_assert!(!outcome.content.contains("source bytes"), "{name} {arguments}: {}", outcome.content);
            // Every file the stage holds is a topic file below its own directory, never a link.
            for (path, bytes) in tree(stage.dir(), Path::new("/nonexistent")) {
                prop_assert!(bytes.is_some(), "a link or special file in the stage: {}", path.display());
                let relative = path.strip_prefix(stage.dir()).expect("below the stage").to_str().expect("utf-8");
                prop_assert!(TopicPath::new(relative).is_ok(), "{relative}");
            }
        }
        if let Ok(Some(Edit::Changes(changes))) = stage.edit() {
            for change in &changes {
                prop_assert!(change.path.as_str().starts_with("topics/"));
                let path = change.path.as_str();
                prop_assert!(!path.starts_with("topics/link/") && path != "topics/filelink.md", "{path} is behind a link");
            }
        }
        drop(stage);
        prop_assert_eq!(tree(dir.path(), &stage_parent), before, "nothing outside the stage changed");
        prop_assert!(!stage_parent.exists());
    }
}
