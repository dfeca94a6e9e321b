//! The writer model behind a trait ([`WriterAgent`]): given a batch and a stage, it makes
//! topic edits through [`WriterStage::commit`] and reports its usage. Part 2 of the
//! writer-runtime work provides the real agent; this crate ships none.

use std::collections::{BTreeMap, BTreeSet};

use scriptorium_derived_views::ViewsCache;
use scriptorium_transaction::{
    CitationScope, Derive, DerivedFiles, Edit, Error as TxError, GitMode, RUNTIME_STATE_FILE, RuntimeState, StageDelta,
    UpdateRequest, UpdateResult, Workspace, WriteLock, WrittenBatch,
};

use crate::records::Record;
use crate::stage::Stage;

/// Which writer run this is (spec 02 §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageKind {
    /// Write a conversation batch into the topics.
    Write,
    /// Reorganize every topic file (the local and global organize passes, nightly reorganize).
    Organize,
    /// Write historical trusted sources no topic cites yet (spec 02 §8.2).
    Backfill,
    /// Distill one promoted source (spec 02 §5).
    Promote,
}

/// What the writer is given.
#[derive(Clone, Debug)]
pub struct WriterTask<'a> {
    /// The kind of run.
    pub kind: StageKind,
    /// The trusted records of the batch (empty for organize, backfill and promote runs,
    /// whose sources are archived already: see [`WriterStage::allowed_sources`]).
    pub records: &'a [Record],
    /// The batch as the writer record protocol renders it (spec 01 §5); empty for organize.
    pub observed: String,
}

/// Token usage a writer run reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
}

/// What a writer run reports besides its commits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriterReport {
    /// Tokens used.
    pub usage: Usage,
}

/// The explicit provider reasons an agent error may carry (spec 02 §2.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProviderReason {
    /// Network failure.
    Transport,
    /// 429.
    RateLimit,
    /// 5xx.
    Provider,
    /// 401.
    Auth,
    /// 403.
    Authz,
    /// Other 4xx.
    Invalid,
    /// The prompt exceeds the context window.
    Context,
    /// Refused by a content policy.
    Policy,
    /// Timed out.
    Timeout,
    /// Unknown.
    Unknown,
}

/// What kind of failure an agent error is, when no provider detail classifies it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AgentErrorKind {
    /// A plain value/precondition error (e.g. no model configured).
    Precondition,
    /// The agent ran and stopped with an error.
    Execution,
    /// Anything else.
    #[default]
    Other,
}

/// A writer agent's failure, with what the classifier reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AgentError {
    /// A diagnostic (never persisted).
    pub message: String,
    /// The kind.
    pub kind: AgentErrorKind,
    /// An explicit provider reason, if the agent knows one.
    pub provider_reason: Option<ProviderReason>,
    /// The HTTP status of the failed model call, if any.
    pub http_status: Option<u16>,
    /// A transport failure (connection refused, reset, DNS).
    pub transport: bool,
    /// A timeout.
    pub timeout: bool,
    /// A 429 that says the quota is exhausted (not worth retrying).
    pub quota_exhausted: bool,
    /// The error's own retryable verdict, if it has one.
    pub retryable: Option<bool>,
    /// The writer's edits were rejected and so was its repair.
    pub commit_rejected: bool,
}

impl AgentError {
    /// An error of `kind` with a diagnostic.
    pub fn new(kind: AgentErrorKind, message: impl Into<String>) -> Self {
        AgentError { message: message.into(), kind, ..AgentError::default() }
    }
}

impl std::fmt::Display for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AgentError {}

/// The writer model. Implementations edit topics only through the stage they are given.
pub trait WriterAgent: Send + Sync {
    /// Run once on `task`, committing topic edits through `stage`.
    fn run(&self, task: &WriterTask<'_>, stage: &mut WriterStage<'_>) -> Result<WriterReport, AgentError>;
}

/// Where a writer run makes its edits: the workspace under the pass's write lock. Every
/// accepted commit installs at once (validated, derived views rebuilt, history
/// committed) and, for a write run, records the batch's node ids in `runtime.json` in
/// the same install (exactly-once, docs/durability.md).
pub struct WriterStage<'a> {
    workspace: &'a Workspace,
    lock: &'a WriteLock,
    views: &'a ViewsCache,
    batch: Option<WrittenBatch>,
    message: &'static str,
    git: GitMode,
    /// Sources new citations may name: the batch's source ids.
    allowed_sources: BTreeSet<String>,
    changed: BTreeSet<String>,
}

impl<'a> WriterStage<'a> {
    pub(crate) fn new(
        workspace: &'a Workspace,
        lock: &'a WriteLock,
        views: &'a ViewsCache,
        batch: Option<WrittenBatch>,
        allowed_sources: BTreeSet<String>,
        message: &'static str,
    ) -> Self {
        WriterStage {
            workspace,
            lock,
            views,
            batch,
            message,
            git: GitMode::Auto,
            allowed_sources,
            changed: BTreeSet::new(),
        }
    }

    /// This stage, committing without a history commit: backfill and distillation ride
    /// along with the next commit (spec 02 §4.11).
    pub(crate) fn without_history(mut self) -> Self {
        self.git = GitMode::Off;
        self
    }

    /// The workspace being written.
    pub fn workspace(&self) -> &Workspace {
        self.workspace
    }

    /// The source ids this run may newly cite (the batch's records).
    pub fn allowed_sources(&self) -> &BTreeSet<String> {
        &self.allowed_sources
    }

    /// Commit one edit against the current revision. A rejected edit changes nothing and
    /// returns the transaction's error (the agent may repair and try again).
    pub fn commit(&mut self, edit: Edit) -> Result<UpdateResult, TxError> {
        // No base: the update reads the current revision under the lock this run holds,
        // which a revision taken here first would only repeat (a walk of the workspace).
        self.commit_at(None, edit)
    }

    /// Commit the diff of a writer [`Stage`] made from this workspace, against the revision
    /// the stage started from: if anything installed since (this run's own earlier commit
    /// included), the commit is `CONCURRENT_UPDATE` and changes nothing (spec 02 §10.4).
    /// `Ok(None)` when the stage holds no change. The caller refreshes the stage after
    /// the commit, accepted or rejected, to continue from the committed tree.
    pub fn commit_stage(&mut self, stage: &Stage) -> Result<Option<UpdateResult>, TxError> {
        let Some(edit) = stage.edit()? else { return Ok(None) };
        self.commit_at(Some(stage.revision().to_owned()), edit).map(Some)
    }

    fn commit_at(&mut self, base: Option<String>, edit: Edit) -> Result<UpdateResult, TxError> {
        let mut request = match base {
            Some(base) => UpdateRequest::new(base, edit),
            None => UpdateRequest::at_current(edit),
        };
        request.commit_message = self.message.to_owned();
        request.git_commit = self.git;
        // New citations must name the batch (archived before the run) or a source the
        // topics already cite (decision 4: regrouping, as a split or merge does).
        request.citations = CitationScope::Sources(self.allowed_sources.clone());
        let derive = BatchDerive { views: self.views, batch: self.batch.as_ref() };
        let result = self.workspace.update_locked(self.lock, &request, &derive)?;
        self.changed.extend(result.changed_files.iter().filter(|path| path.starts_with("topics/")).cloned());
        Ok(result)
    }

    /// The topic files this run's accepted commits changed.
    pub fn changed_files(&self) -> &BTreeSet<String> {
        &self.changed
    }
}

impl std::fmt::Debug for WriterStage<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriterStage").field("batch", &self.batch).field("changed", &self.changed).finish()
    }
}

/// The derived views, plus the batch record written into the same `runtime.json`.
struct BatchDerive<'a> {
    views: &'a ViewsCache,
    batch: Option<&'a WrittenBatch>,
}

impl BatchDerive<'_> {
    fn with_batch(
        &self,
        mut files: DerivedFiles,
        staged: &BTreeMap<String, Vec<u8>>,
        runtime_dir: &str,
    ) -> DerivedFiles {
        let Some(batch) = self.batch else { return files };
        let path = format!("{runtime_dir}/{RUNTIME_STATE_FILE}");
        let current = match files.get(&path) {
            Some(Some(bytes)) => RuntimeState::parse(bytes),
            _ => staged.get(&path).map(|bytes| RuntimeState::parse(bytes)).unwrap_or_default(),
        };
        let mut state = current;
        state.written_batch = Some(batch.clone());
        files.insert(path, Some(state.to_bytes()));
        files
    }
}

impl Derive for BatchDerive<'_> {
    fn derive(&self, staged: &BTreeMap<String, Vec<u8>>, runtime_dir: &str) -> Result<DerivedFiles, TxError> {
        let files = self.views.derive(staged, runtime_dir)?;
        Ok(self.with_batch(files, staged, runtime_dir))
    }

    fn derive_delta(
        &self,
        staged: &BTreeMap<String, Vec<u8>>,
        runtime_dir: &str,
        delta: &StageDelta<'_>,
    ) -> Result<DerivedFiles, TxError> {
        let files = self.views.derive_delta(staged, runtime_dir, delta)?;
        Ok(self.with_batch(files, staged, runtime_dir))
    }

    fn promote(&self, staged: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
        self.views.promote(staged)
    }

    fn installed(&self, revision: &str) {
        self.views.installed(revision);
    }
}
