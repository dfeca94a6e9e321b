//! The write hook (spec 02 §2.5, §2.6), one write pass (§2.7) under the lock wait policy
//! (§2.8), the written markers (§3), and exactly-once completion of a batch whose marking
//! a crash interrupted (docs/durability.md).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use scriptorium_archive_format::{SourceRecord, plan_append, render_observed_batch};
use scriptorium_derived_views::{DerivedViews, ViewsCache};
use scriptorium_transaction::{
    BACKGROUND_LOCK_TIMEOUT, Changes, Error as TxError, ErrorCode as TxCode, INTERACTIVE_LOCK_TIMEOUT, RuntimeState,
    STAGED_EDIT_LOCK_TIMEOUT, UpdateRequest, UpdateResult, Vfs, Workspace, WriteLock, WrittenBatch,
};
use serde_json::{Map, Value};

use crate::agent::{StageKind, WriterAgent, WriterStage, WriterTask};
use crate::batch::{MARKER_KEY, first_batch, marked_ids, reaches, unforced_gate, unwritten};
use crate::clock::{Clock, iso8601_utc, parse_iso8601};
use crate::crashpoint::hit;
use crate::failure::{MemoryWriteFailureCode as Code, PassError, WriteFailure, classify};
use crate::records::{Record, records, records_from};
use crate::status;
use crate::store::{Message, MetadataPatches, SessionInfo, SessionStore};

/// The commit message of a batch write (spec 01 §1.5).
pub const WRITE_MESSAGE: &str = "memory: incremental transaction";

/// The commit message of an organize pass.
pub const ORGANIZE_MESSAGE: &str = "memory: reorganize topics";

/// Local organize after this many batches (spec 02 §11).
pub const LOCAL_ORGANIZE_BATCHES: i64 = 5;

/// Local organize after this many tokens.
pub const LOCAL_ORGANIZE_TOKENS: i64 = 40_000;

/// Global organize at most once per this many seconds.
pub const GLOBAL_ORGANIZE_SECONDS: f64 = 24.0 * 3600.0;

/// How many sessions one page of a listing holds.
pub(crate) const SESSION_PAGE: usize = 500;

/// The runtime's settings (spec 02 §11).
#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    /// `memory.writer.enabled`.
    pub enabled: bool,
    /// `memory.writer.trigger_tokens`, already checked ([`crate::trigger_tokens`]).
    pub trigger_tokens: usize,
    /// The offset (seconds east of UTC) record timestamps are written at.
    pub utc_offset_seconds: i32,
    /// How long a write pass waits for the workspace write lock (spec 02 §2.8: 1 s).
    pub lock_timeout: Duration,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            enabled: true,
            trigger_tokens: crate::batch::DEFAULT_TRIGGER_TOKENS,
            utc_offset_seconds: 0,
            lock_timeout: BACKGROUND_LOCK_TIMEOUT,
        }
    }
}

/// The writer runtime of one workspace: its session store, writer agent and clock.
pub struct Runtime {
    workspace: Workspace,
    store: Arc<dyn SessionStore>,
    agent: Arc<dyn WriterAgent>,
    clock: Arc<dyn Clock>,
    config: RuntimeConfig,
    /// Kept between passes, so a commit re-derives only what its files change; a pass
    /// holds it under the workspace write lock, so the mutex is never contended.
    views: std::sync::Mutex<ViewsCache>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").field("root", &self.workspace.root()).field("config", &self.config).finish()
    }
}

impl Runtime {
    /// A runtime over an open workspace.
    pub fn new(
        workspace: Workspace,
        store: Arc<dyn SessionStore>,
        agent: Arc<dyn WriterAgent>,
        clock: Arc<dyn Clock>,
        config: RuntimeConfig,
    ) -> Self {
        Runtime {
            workspace,
            store,
            agent,
            clock,
            config,
            views: std::sync::Mutex::new(ViewsCache::new(DerivedViews::default())),
        }
    }

    /// The workspace.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The session store.
    pub fn store(&self) -> &dyn SessionStore {
        &*self.store
    }

    /// The clock.
    pub fn clock(&self) -> &dyn Clock {
        &*self.clock
    }

    /// The writer agent.
    pub(crate) fn agent(&self) -> &dyn WriterAgent {
        &*self.agent
    }

    /// The derived views every writer commit rebuilds.
    pub(crate) fn views(&self) -> std::sync::MutexGuard<'_, ViewsCache> {
        // A panic mid-derive may leave the cache half updated: start it afresh.
        self.views.lock().unwrap_or_else(|poisoned| {
            let mut cache = poisoned.into_inner();
            *cache = ViewsCache::new(DerivedViews::default());
            cache
        })
    }

    /// A caller's own transaction (the `memory_update` tool, the changes API) with the
    /// derived views this runtime keeps warm, so it re-derives only what the edit touches.
    /// The write lock is taken before the views, in the order a write pass takes them.
    pub fn update(&self, request: &UpdateRequest) -> Result<UpdateResult, TxError> {
        let lock = self.workspace.lock(INTERACTIVE_LOCK_TIMEOUT)?;
        let views = self.views();
        self.workspace.update_locked(&lock, request, &*views)
    }

    /// The backend's write hook (spec 02 §2.5): run [`Runtime::write`], classify what it
    /// raises, and record a failure in writer status. `None` means nothing is owed.
    pub fn hook(&self, session_id: &str, messages: Option<&[Message]>, force: bool) -> Option<WriteFailure> {
        let failure = match self.write(session_id, messages, force) {
            Ok(None) => return None,
            Ok(Some(failure)) => failure,
            Err(error) => classify(&error),
        };
        // Best effort: a status that cannot be written never changes the result.
        let _ = status::record_failure(&self.workspace, self.clock.now(), failure.reason_code, failure.retryable);
        Some(failure)
    }

    /// `writing.write` (spec 02 §2.6): unforced, one pass over the head branch if due;
    /// forced, the head branch to its last turn, then every other live tip in
    /// threshold-sized batches.
    pub fn write(
        &self,
        session_id: &str,
        messages: Option<&[Message]>,
        force: bool,
    ) -> Result<Option<WriteFailure>, PassError> {
        if !self.config.enabled {
            return Ok(None);
        }
        if session_id.is_empty() {
            return Ok(Some(WriteFailure::new(Code::MissingSessionId, false, "no session id")));
        }
        self.migrate_legacy_cursors()?;
        if self.workspace.runtime_state().written_batch.is_some() {
            // A crash left an installed batch unmarked: finish it before reading marks.
            let lock = self.workspace.lock(self.config.lock_timeout)?;
            self.finish_recorded_batch(&lock)?;
        }
        if !force {
            match messages {
                Some(rows) => self.write_session(session_id, rows, false)?,
                None => {
                    let suffix = self.unmarked(session_id, None)?;
                    self.write_records(session_id, &suffix.rows, &suffix.records, false)?
                }
            };
            return Ok(None);
        }
        let mut branches: Vec<(Option<String>, Vec<Message>)> = Vec::new();
        let head = self.store.get_session(session_id)?.and_then(|session| session.head_id);
        if let Some(head) = &head {
            branches.push((Some(head.clone()), Vec::new()));
        }
        for tip in self.store.list_branches(session_id)? {
            if !tip.archived && head.as_deref() != Some(tip.head_msg_id.as_str()) {
                branches.push((Some(tip.head_msg_id), Vec::new()));
            }
        }
        if branches.is_empty()
            && let Some(rows) = messages
        {
            branches.push((None, rows.to_vec()));
        }
        for (index, (head, given)) in branches.into_iter().enumerate() {
            let (mut rows, mut all) = match &head {
                Some(head) => {
                    let suffix = self.unmarked(session_id, Some(head))?;
                    (suffix.rows, suffix.records)
                }
                None => {
                    let all = records(session_id, &given, self.config.utc_offset_seconds)?;
                    (given, all)
                }
            };
            loop {
                let marked = marked_ids(&rows, self.workspace.workspace_id());
                let pending = unwritten(&all, &marked);
                if pending.is_empty() {
                    break;
                }
                if index > 0 && !reaches(pending, self.config.trigger_tokens) {
                    // An abandoned short branch waits for a later forced pass.
                    break;
                }
                if !self.write_records(session_id, &rows, &all, index == 0)? {
                    return Ok(Some(WriteFailure::new(Code::WriterNoProgress, false, "the writer recorded nothing")));
                }
                let Some(head) = &head else {
                    return Ok(Some(WriteFailure::new(
                        Code::SessionNodesUnavailable,
                        false,
                        "the session store lacks the written nodes",
                    )));
                };
                let suffix = self.unmarked(session_id, Some(head))?;
                (rows, all) = (suffix.rows, suffix.records);
            }
        }
        Ok(None)
    }

    /// The unmarked suffix of a branch as far as its first batch reaches
    /// ([`pending_suffix`]).
    fn unmarked(&self, session_id: &str, head: Option<&str>) -> Result<PendingSuffix, PassError> {
        pending_suffix(
            &*self.store,
            session_id,
            head,
            self.workspace.workspace_id(),
            self.config.trigger_tokens,
            self.config.utc_offset_seconds,
        )
    }

    /// One write pass over `rows` (spec 02 §2.7): the first batch of the unmarked suffix,
    /// under the write lock. `true` when a batch was handed off and marked.
    pub fn write_session(&self, session_id: &str, rows: &[Message], force: bool) -> Result<bool, PassError> {
        let all = records(session_id, rows, self.config.utc_offset_seconds)?;
        self.write_records(session_id, rows, &all, force)
    }

    /// [`Runtime::write_session`] with the records of `rows` already built (and their
    /// tokens counted).
    fn write_records(
        &self,
        session_id: &str,
        rows: &[Message],
        all: &[Record],
        force: bool,
    ) -> Result<bool, PassError> {
        if all.is_empty() {
            return Ok(false);
        }
        let mut marked = marked_ids(rows, self.workspace.workspace_id());
        if unwritten(all, &marked).is_empty() {
            return Ok(false);
        }
        let lock = self.workspace.lock(self.config.lock_timeout)?;
        // A batch a crash left installed but unmarked is finished first, without the model.
        let finished = self.finish_recorded_batch(&lock)?;
        if let Some(batch) = finished.as_ref().filter(|batch| batch.session_id == session_id) {
            marked.extend(batch.node_ids.iter().map(String::as_str));
        }
        let pending = unwritten(all, &marked);
        if pending.is_empty() {
            return Ok(finished.is_some());
        }
        let batch = first_batch(pending, self.config.trigger_tokens);
        let wrote = self.process(&lock, session_id, batch, force)?;
        drop(lock);
        if wrote {
            let _ = status::record_success(&self.workspace, self.clock.now());
        }
        Ok(wrote)
    }

    fn process(&self, lock: &WriteLock, session_id: &str, batch: &[Record], force: bool) -> Result<bool, PassError> {
        let now = self.clock.now();
        if !force && !unforced_gate(batch, self.config.trigger_tokens, now) {
            return Ok(false);
        }
        let (trusted, pending): (Vec<&Record>, Vec<&Record>) = batch.iter().partition(|record| record.is_trusted());
        let trusted_tokens =
            i64::try_from(trusted.iter().map(|record| record.tokens()).sum::<usize>()).unwrap_or(i64::MAX);
        let node_ids: Vec<String> = batch.iter().map(|record| record.node_id().to_owned()).collect();
        if !trusted.is_empty() {
            self.archive(lock, &trusted)?;
            hit("writer.archived");
            let trusted_records: Vec<Record> = trusted.iter().map(|record| (*record).clone()).collect();
            let sources: Vec<SourceRecord> = trusted_records.iter().map(|record| record.source.clone()).collect();
            let allowed: BTreeSet<String> = sources.iter().map(SourceRecord::source_id).collect();
            let record = WrittenBatch::new(session_id, node_ids.clone(), trusted_tokens);
            let views = self.views();
            let mut stage = WriterStage::new(&self.workspace, lock, &views, Some(record), allowed, WRITE_MESSAGE);
            let task = WriterTask {
                kind: StageKind::Write,
                records: &trusted_records,
                observed: render_observed_batch(&sources),
            };
            self.agent.run(&task, &mut stage)?;
            if stage.changed_files().is_empty() {
                // Decision 5: only a batch whose install changed memory is marked.
                return Ok(false);
            }
            hit("writer.installed");
        }
        if !pending.is_empty() {
            self.archive(lock, &pending)?;
        }
        self.mark(session_id, &node_ids)?;
        hit("writer.marked");
        let mut state = self.workspace.runtime_state();
        if !trusted.is_empty() {
            count_batch(&mut state, trusted_tokens);
        }
        state.written_batch = None;
        self.save_state(lock, &state)?;
        hit("writer.counters_saved");
        if !trusted.is_empty() {
            self.organize_if_due(lock, now)?;
        }
        Ok(true)
    }

    /// Finish the marking of a batch that the last install recorded (a crash fell between
    /// the install and the marking, or before the counters): mark its nodes, count it,
    /// clear the record, all without calling the model. Returns the finished batch.
    pub fn finish_recorded_batch(&self, lock: &WriteLock) -> Result<Option<WrittenBatch>, PassError> {
        let mut state = self.workspace.runtime_state();
        let Some(batch) = state.written_batch.take() else { return Ok(None) };
        self.mark(&batch.session_id, &batch.node_ids)?;
        count_batch(&mut state, batch.tokens);
        self.save_state(lock, &state)?;
        Ok(Some(batch))
    }

    fn archive(&self, lock: &WriteLock, records: &[&Record]) -> Result<(), PassError> {
        let sources: Vec<SourceRecord> = records.iter().map(|record| record.source.clone()).collect();
        let plan = plan_append(&sources, &self.workspace.archive_tree()).map_err(|error| {
            TxError::new(TxCode::InvalidArgument, error.message().to_owned())
                .with_detail("archive_code", error.code().as_str())
        })?;
        if plan.is_empty() {
            return Ok(());
        }
        let changes: Changes = plan.files.into_iter().map(|file| (file.path, Some(file.bytes))).collect();
        self.install_beside(lock, &changes)
    }

    /// A raw install between the writer's transactions, and the derived-view cache told
    /// of it, so the next commit compares only what it wrote instead of every file.
    fn install_beside(&self, lock: &WriteLock, changes: &Changes) -> Result<(), PassError> {
        let installed = self.workspace.install(lock, changes)?;
        if let Some(moved) = &installed.moved {
            self.views().moved(moved, installed.changed.iter().map(String::as_str));
        }
        Ok(())
    }

    fn mark(&self, session_id: &str, node_ids: &[String]) -> Result<(), PassError> {
        let mut marker = Map::new();
        marker.insert(MARKER_KEY.to_owned(), Value::String(self.workspace.workspace_id().to_owned()));
        let patches: MetadataPatches = node_ids.iter().map(|id| (id.clone(), marker.clone())).collect();
        self.store.merge_node_metadata_batch(session_id, &patches)?;
        Ok(())
    }

    fn save_state(&self, lock: &WriteLock, state: &RuntimeState) -> Result<(), PassError> {
        let path = self.workspace.runtime_state_path();
        let bytes = state.to_bytes();
        if self.workspace.vfs().read(Path::new(&path)).ok().as_deref() == Some(bytes.as_slice()) {
            return Ok(());
        }
        let changes: Changes = BTreeMap::from([(path, Some(bytes))]);
        self.install_beside(lock, &changes)
    }

    /// The local and global organize triggers (spec 02 §2.7).
    fn organize_if_due(&self, lock: &WriteLock, now: f64) -> Result<(), PassError> {
        let state = self.workspace.runtime_state();
        if state.local_batches >= LOCAL_ORGANIZE_BATCHES || state.local_tokens >= LOCAL_ORGANIZE_TOKENS {
            self.organize(lock)?;
            let mut state = self.workspace.runtime_state();
            state.local_batches = 0;
            state.local_tokens = 0;
            self.save_state(lock, &state)?;
        }
        let state = self.workspace.runtime_state();
        let global_due = state
            .last_global_at
            .as_deref()
            .and_then(parse_iso8601)
            .is_none_or(|last| now - last >= GLOBAL_ORGANIZE_SECONDS);
        if state.write_commits_since_global > 0 && global_due {
            self.organize(lock)?;
            let mut state = self.workspace.runtime_state();
            state.last_global_at = Some(iso8601_utc(now));
            state.write_commits_since_global = 0;
            self.save_state(lock, &state)?;
        }
        Ok(())
    }

    /// One organize run over every topic file, under the pass's lock.
    fn organize(&self, lock: &WriteLock) -> Result<BTreeSet<String>, PassError> {
        let views = self.views();
        let mut stage = WriterStage::new(&self.workspace, lock, &views, None, BTreeSet::new(), ORGANIZE_MESSAGE);
        let task = WriterTask { kind: StageKind::Organize, records: &[], observed: String::new() };
        self.agent.run(&task, &mut stage)?;
        Ok(stage.changed_files().clone())
    }

    /// Whether `memory.writer.enabled` is on.
    pub fn enabled(&self) -> bool {
        self.config.enabled
    }

    /// The offset (seconds east of UTC) local times are computed at.
    pub fn utc_offset_seconds(&self) -> i32 {
        self.config.utc_offset_seconds
    }

    /// The nightly reorganize (spec 02 §8.1): one organize run over every topic file
    /// under the staged-edit lock timeout (5 s).
    pub fn reorganize(&self) -> Result<ReorganizeReport, PassError> {
        if !self.config.enabled {
            return Ok(ReorganizeReport { status: ReorganizeStatus::Disabled, topics: 0, changed_files: Vec::new() });
        }
        let topics = count_topics(&self.workspace.root().join("topics"));
        if topics == 0 {
            return Ok(ReorganizeReport { status: ReorganizeStatus::Empty, topics, changed_files: Vec::new() });
        }
        let lock = match self.workspace.lock(STAGED_EDIT_LOCK_TIMEOUT) {
            Ok(lock) => lock,
            Err(error) if error.code() == TxCode::ConcurrentUpdate => {
                return Ok(ReorganizeReport { status: ReorganizeStatus::Busy, topics, changed_files: Vec::new() });
            }
            Err(error) => return Err(error.into()),
        };
        let changed = self.organize(&lock)?;
        Ok(ReorganizeReport { status: ReorganizeStatus::Ok, topics, changed_files: changed.into_iter().collect() })
    }

    /// `pending_turns` of the writer status (spec 02 §2.11): unmarked records on every
    /// session's eligible branches, summed; read-only.
    pub fn pending_turns(&self) -> Result<usize, PassError> {
        pending_turns(&*self.store, Some(self.workspace.workspace_id()), self.config.utc_offset_seconds)
    }

    /// Every session, archived included, paged through the store.
    pub(crate) fn all_sessions(&self) -> Result<Vec<SessionInfo>, PassError> {
        all_sessions(&*self.store)
    }

    /// One session's pending turns and their tokens.
    pub fn session_pending(&self, session_id: &str) -> Result<(usize, usize), PassError> {
        session_pending(&*self.store, session_id, Some(self.workspace.workspace_id()), self.config.utc_offset_seconds)
    }
}

/// How many nodes [`pending_suffix`] loads first while it looks for the end of the first
/// batch; later chunks are sized from the tokens per node seen so far, at most
/// [`MAX_CHUNK`].
const FIRST_CHUNK: usize = 64;

/// The largest chunk [`pending_suffix`] loads at once.
const MAX_CHUNK: usize = 1024;

/// The part of a branch's unmarked suffix (spec 02 §3.2) that a write pass reads.
#[derive(Debug)]
pub struct PendingSuffix {
    /// Every node id of the unmarked suffix, oldest first (visible nodes only).
    pub ids: Vec<String>,
    /// The suffix's nodes from its start, loaded in chunks until the records' tokens
    /// reach the threshold (so the first batch, spec 02 §2.4, ends within them), else
    /// all of them.
    pub rows: Vec<Message>,
    /// The records of `rows` (spec 02 §2.2), ordinals counted from the suffix's start,
    /// their tokens counted as far as the threshold.
    pub records: Vec<Record>,
}

/// The unmarked suffix of the branch ending at `head` (default: the session head) after
/// this workspace's newest mark, read as a pass needs it: the walk reads only ids,
/// predecessors and markers ([`SessionStore::get_unmarked_suffix_ids`]), and contents are
/// loaded only as far as the first batch reaches. Its records are the branch's pending
/// ones as far as they are loaded, so the first batch, the unforced gate and the
/// "reaches the threshold" test of a forced pass see what they would on the whole
/// suffix; a precondition failure (spec 02 §2.2 steps 4, 5) in a later node is reported
/// by the pass that reaches it.
pub fn pending_suffix(
    store: &dyn SessionStore,
    session_id: &str,
    head: Option<&str>,
    workspace_id: &str,
    threshold: usize,
    utc_offset: i32,
) -> Result<PendingSuffix, PassError> {
    let ids = store.get_unmarked_suffix_ids(session_id, head, MARKER_KEY, workspace_id)?;
    let mut rows: Vec<Message> = Vec::new();
    let mut all: Vec<Record> = Vec::new();
    let mut sum = 0usize;
    let (mut at, mut chunk) = (0usize, FIRST_CHUNK);
    while let Some(wanted) = ids.get(at..ids.len().min(at.saturating_add(chunk))) {
        if wanted.is_empty() {
            break;
        }
        at += wanted.len();
        let loaded = store.get_nodes(session_id, wanted)?;
        let found = records_from(session_id, &loaded, rows.len(), utc_offset)?;
        rows.extend(loaded);
        // Tokens are counted only up to the threshold: the records after the batch's end
        // stay uncounted unless a later step asks.
        let reached = found.iter().any(|record| {
            sum = sum.saturating_add(record.tokens());
            sum >= threshold
        });
        all.extend(found);
        if reached {
            break;
        }
        // The next chunk: what the tokens per node so far say is missing, with a margin.
        let per_node = (sum / rows.len().max(1)).max(1);
        chunk = (threshold.saturating_sub(sum) / per_node).saturating_mul(5) / 4 + 8;
        chunk = chunk.clamp(FIRST_CHUNK / 4, MAX_CHUNK);
    }
    Ok(PendingSuffix { ids, rows, records: all })
}

/// Every session of `store`, archived included, 500 at a time.
pub fn all_sessions(store: &dyn SessionStore) -> Result<Vec<SessionInfo>, PassError> {
    let mut out = Vec::new();
    loop {
        let page = store.list_sessions(SESSION_PAGE, out.len(), true)?;
        let done = page.len() < SESSION_PAGE;
        out.extend(page);
        if done {
            return Ok(out);
        }
    }
}

/// `pending_turns` (spec 02 §2.11) summed over every session of `store`. Marks count
/// only when they equal `workspace_id`; without an id nothing counts as marked.
pub fn pending_turns(
    store: &dyn SessionStore,
    workspace_id: Option<&str>,
    utc_offset: i32,
) -> Result<usize, PassError> {
    let mut total = 0;
    for session in all_sessions(store)? {
        total += session_pending(store, &session.id, workspace_id, utc_offset)?.0;
    }
    Ok(total)
}

/// One session's pending turns and their tokens: distinct unmarked records on the head
/// branch and the live tips, else on all its messages. Read-only.
pub fn session_pending(
    store: &dyn SessionStore,
    session_id: &str,
    workspace_id: Option<&str>,
    utc_offset: i32,
) -> Result<(usize, usize), PassError> {
    let messages = store.get_messages(session_id)?;
    let marked: HashSet<&str> = workspace_id.map(|id| marked_ids(&messages, id)).unwrap_or_default();
    let mut heads: Vec<String> = Vec::new();
    if let Some(head) = store.get_session(session_id)?.and_then(|session| session.head_id) {
        heads.push(head);
    }
    for tip in store.list_branches(session_id)? {
        if !tip.archived && !heads.contains(&tip.head_msg_id) {
            heads.push(tip.head_msg_id);
        }
    }
    let mut seen = HashSet::new();
    let (mut turns, mut sum) = (0, 0);
    let mut count = |found: Vec<Record>| {
        for record in found {
            if !marked.contains(record.node_id()) && seen.insert(record.node_id().to_owned()) {
                turns += 1;
                sum += record.tokens();
            }
        }
    };
    if heads.is_empty() {
        count(records(session_id, &messages, utc_offset)?);
    }
    for head in &heads {
        let rows = store.get_branch(session_id, Some(head))?;
        count(records(session_id, &rows, utc_offset)?);
    }
    Ok((turns, sum))
}

/// How a reorganize ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReorganizeStatus {
    /// The writer is disabled.
    Disabled,
    /// There are no topic files.
    Empty,
    /// The organize run finished (an empty change list: the model chose to do nothing).
    Ok,
    /// Another writer held the lock.
    Busy,
}

/// The result of [`Runtime::reorganize`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReorganizeReport {
    /// How it ended.
    pub status: ReorganizeStatus,
    /// How many topic files there are.
    pub topics: usize,
    /// The topic files the run committed, sorted.
    pub changed_files: Vec<String>,
}

/// The `*.md` files under `dir`, recursively.
fn count_topics(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .filter_map(Result::ok)
        .map(|entry| {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => count_topics(&path),
                Ok(kind) if kind.is_file() && path.extension().is_some_and(|ext| ext == "md") => 1,
                _ => 0,
            }
        })
        .sum()
}

/// Count one written batch: `local_batches`, `local_tokens`, `write_commits_since_global`.
fn count_batch(state: &mut RuntimeState, trusted_tokens: i64) {
    state.local_batches = state.local_batches.saturating_add(1);
    state.local_tokens = state.local_tokens.saturating_add(trusted_tokens);
    state.write_commits_since_global = state.write_commits_since_global.saturating_add(1);
}
