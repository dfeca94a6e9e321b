//! Shared fixtures: temporary directories, a fixed clock, message builders, and the test
//! stand-in for the external writer model, which applies the edits a test gives it. It
//! lives here, in test code only, and is never shipped as a writer.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use scriptorium_archive_format::{source_anchor, v2_location};
use scriptorium_transaction::{Edit, FileChange, TopicPath, Workspace};
use scriptorium_writer_runtime::{
    AgentError, Clock, Message, Runtime, RuntimeConfig, SqliteStore, StageKind, Timestamp, WriterAgent, WriterReport,
    WriterStage, WriterTask,
};
use serde_json::{Value, json};

pub(crate) type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A directory removed when dropped (unless borrowed).
pub(crate) struct TempDir(PathBuf, bool);

impl TempDir {
    pub(crate) fn new(label: &str) -> TempDir {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let path = std::env::temp_dir().join(format!("scriptorium-wr-{label}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create temp dir");
        TempDir(path, true)
    }

    /// An existing directory this handle never removes (a child process's view).
    pub(crate) fn borrowed(path: PathBuf) -> TempDir {
        TempDir(path, false)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if self.1 {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A clock a test sets.
#[derive(Debug)]
pub(crate) struct FixedClock(Mutex<f64>);

impl FixedClock {
    pub(crate) fn at(now: f64) -> Arc<FixedClock> {
        Arc::new(FixedClock(Mutex::new(now)))
    }

    pub(crate) fn set(&self, now: f64) {
        *self.0.lock().expect("clock") = now;
    }
}

impl Clock for FixedClock {
    fn now(&self) -> f64 {
        *self.0.lock().expect("clock")
    }
}

/// 2024-05-01T10:00:00Z.
pub(crate) const T0: f64 = 1_714_557_600.0;

/// An owner turn stamped with the authority schema, as a local terminal writes it.
pub(crate) fn owner_turn(id: &str, predecessor: Option<&str>, role: &str, text: &str, at: f64) -> Message {
    let mut message = Message::text(id, role, text);
    message.predecessor = predecessor.map(str::to_owned);
    message.timestamp = Timestamp::Unix(at);
    let (kind, speaker_id, display) =
        if role == "user" { ("owner", "owner/local", "Owner") } else { ("runtime", "runtime/agent%2Fmain", "main") };
    let authority = json!({
        "authority_schema": 1, "speaker_kind": kind, "speaker_id": speaker_id, "speaker_display": display,
        "principal_id": "owner", "authority_tier": "owner", "interaction": "interactive",
    });
    if let Value::Object(map) = authority {
        message.metadata = map;
    }
    message
}

/// A chain of `n` alternating user/assistant turns `<prefix>0 … <prefix>n-1` after
/// `after`, each saying `fact <id>` and `words` filler words.
pub(crate) fn chain(prefix: &str, after: Option<&str>, n: usize, words: usize, at: f64) -> Vec<Message> {
    let mut out = Vec::new();
    let mut previous = after.map(str::to_owned);
    for index in 0..n {
        let id = format!("{prefix}{index}");
        let role = if index.is_multiple_of(2) { "user" } else { "assistant" };
        let text = format!("fact {id}{}", " word".repeat(words));
        out.push(owner_turn(&id, previous.as_deref(), role, &text, at + index as f64));
        previous = Some(id);
    }
    out
}

/// What the stand-in writer does on a write run.
#[derive(Clone, Debug)]
pub(crate) enum Script {
    /// Append one cited paragraph per record to `topics/facts.md`.
    Facts,
    /// Commit nothing.
    Nothing,
    /// Fail with this error before committing anything.
    Fail(AgentError),
}

/// The test stand-in for the writer model: it does what its script says and counts runs.
#[derive(Debug)]
pub(crate) struct ScriptedWriter {
    pub(crate) script: Mutex<Script>,
    pub(crate) write_runs: AtomicUsize,
    pub(crate) organize_runs: AtomicUsize,
    /// When set, every organize run fails with this error.
    pub(crate) organize_error: Mutex<Option<AgentError>>,
}

impl ScriptedWriter {
    pub(crate) fn new(script: Script) -> Arc<ScriptedWriter> {
        Arc::new(ScriptedWriter {
            script: Mutex::new(script),
            write_runs: AtomicUsize::new(0),
            organize_runs: AtomicUsize::new(0),
            organize_error: Mutex::new(None),
        })
    }

    pub(crate) fn writes(&self) -> usize {
        self.write_runs.load(Ordering::SeqCst)
    }
}

impl WriterAgent for ScriptedWriter {
    fn run(&self, task: &WriterTask<'_>, stage: &mut WriterStage<'_>) -> Result<WriterReport, AgentError> {
        if task.kind == StageKind::Organize {
            self.organize_runs.fetch_add(1, Ordering::SeqCst);
            return match self.organize_error.lock().expect("organize error").clone() {
                Some(error) => Err(error),
                None => Ok(WriterReport::default()),
            };
        }
        self.write_runs.fetch_add(1, Ordering::SeqCst);
        let script = self.script.lock().expect("script").clone();
        if matches!(task.kind, StageKind::Backfill | StageKind::Promote) {
            return match script {
                Script::Facts => cite_allowed(stage),
                Script::Nothing => Ok(WriterReport::default()),
                Script::Fail(error) => Err(error),
            };
        }
        match script {
            Script::Nothing => Ok(WriterReport::default()),
            Script::Fail(error) => Err(error),
            Script::Facts => {
                let mut text = String::new();
                for record in task.records {
                    let id = record.source.source_id();
                    let location = v2_location(&id).expect("a valid source id");
                    let fact = record.source.content.split(" word").next().unwrap_or("");
                    text.push_str(&format!(
                        "\n{fact} was said.[^n-{label}]\n\n[^n-{label}]: Time: `2024-05-01`; Sources: [{id}](../{location}#{anchor})\n",
                        label = record.node_id(),
                        anchor = source_anchor(&id)
                    ));
                }
                append_facts(stage, &text)?;
                Ok(WriterReport::default())
            }
        }
    }
}

/// Backfill and promote runs: one cited paragraph per source the stage may cite.
fn cite_allowed(stage: &mut WriterStage<'_>) -> Result<WriterReport, AgentError> {
    let mut text = String::new();
    for id in stage.allowed_sources().clone() {
        let location = v2_location(&id).expect("a valid source id");
        let anchor = source_anchor(&id);
        text.push_str(&format!(
            "\nsource {id} was said.[^n-{anchor}]\n\n[^n-{anchor}]: Time: `2024-05-01`; Sources: [said](../{location}#{anchor})\n"
        ));
    }
    append_facts(stage, &text)?;
    Ok(WriterReport::default())
}

/// Append `paragraphs` to `topics/facts.md` and commit it; a rejection is the run's error.
fn append_facts(stage: &mut WriterStage<'_>, paragraphs: &str) -> Result<(), AgentError> {
    let path = "topics/facts.md";
    let existing =
        std::fs::read_to_string(stage.workspace().root().join(path)).unwrap_or_else(|_| "# Facts\n".to_owned());
    let text = format!("{}\n{paragraphs}", existing.trim_end());
    let change = FileChange { path: TopicPath::new(path).expect("topic path"), content: Some(text) };
    stage.commit(Edit::Changes(vec![change])).map_err(|error| AgentError {
        commit_rejected: true,
        ..AgentError::new(Default::default(), error.to_string())
    })?;
    Ok(())
}

/// A workspace, a session store and a runtime over them.
pub(crate) struct Fixture {
    pub(crate) dir: TempDir,
    pub(crate) store: Arc<SqliteStore>,
    pub(crate) writer: Arc<ScriptedWriter>,
    pub(crate) clock: Arc<FixedClock>,
    pub(crate) runtime: Runtime,
}

impl Fixture {
    pub(crate) fn new(
        label: &str,
        script: Script,
        config: RuntimeConfig,
    ) -> Result<Fixture, Box<dyn std::error::Error>> {
        let dir = TempDir::new(label);
        Self::at(dir, script, config)
    }

    /// A fixture over an existing directory (a restart after a crash).
    pub(crate) fn at(
        dir: TempDir,
        script: Script,
        config: RuntimeConfig,
    ) -> Result<Fixture, Box<dyn std::error::Error>> {
        let store = Arc::new(SqliteStore::open(&dir.path().join("sessions.sqlite3"))?);
        let workspace = Workspace::open(dir.path().join("memory"))?;
        let writer = ScriptedWriter::new(script);
        let clock = FixedClock::at(T0 + 60.0);
        let runtime = Runtime::new(workspace, store.clone(), writer.clone(), clock.clone(), config);
        Ok(Fixture { dir, store, writer, clock, runtime })
    }

    pub(crate) fn memory(&self) -> PathBuf {
        self.dir.path().join("memory")
    }

    /// The bytes of `topics/facts.md`, or empty.
    pub(crate) fn facts(&self) -> String {
        std::fs::read_to_string(self.memory().join("topics/facts.md")).unwrap_or_default()
    }

    /// How many times `fact <id> was said.` appears in the topics.
    pub(crate) fn fact_count(&self, id: &str) -> usize {
        self.facts().matches(&format!("fact {id} was said.")).count()
    }

    /// The node ids of `session` that carry this workspace's marker.
    pub(crate) fn marked(&self, session: &str) -> Result<Vec<String>, Box<dyn std::error::Error>> {
        use scriptorium_writer_runtime::SessionStore;
        let id = self.runtime.workspace().workspace_id().to_owned();
        let messages = self.store.get_messages(session)?;
        Ok(messages
            .into_iter()
            .filter(|m| m.field(scriptorium_writer_runtime::MARKER_KEY) == Some(id.as_str()))
            .map(|m| m.id)
            .collect())
    }
}

/// A config with `trigger_tokens`.
pub(crate) fn config(trigger_tokens: usize) -> RuntimeConfig {
    RuntimeConfig { trigger_tokens, ..RuntimeConfig::default() }
}
