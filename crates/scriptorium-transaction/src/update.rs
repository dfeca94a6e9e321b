//! [`Workspace::update`]: the write transaction of spec 02 §4.3 in this project's design.
//!
//! Under the write lock: recover, check the base revision, stage the committed topics in
//! memory, plan this call's evidence appends, substitute labels, apply the edit,
//! normalize and validate strictly, check append-only and the source-reference policy,
//! run the derive step, prepare history, then install everything — evidence, prose and
//! derived views — through the journal in one atomic step, and publish history last.
//! Any rejection returns before the install, so no byte of the workspace changes.

mod changes;
mod edit;
mod memory_changes;
mod policy;
mod request;
mod result;
mod stage;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use scriptorium_archive_format::{ErrorCode as ArchiveCode, plan_append};
use scriptorium_topic_markdown::{Mode, NormalizeOptions, Removal, SourceLookup, SourceResolver, parse_tree};

use crate::derive::{CORE_REPORT_FILE, Derive, StageDelta};
use crate::error::{Error, ErrorCode};
use crate::evidence::evidence_records;
use crate::journal::Changes;
use crate::lock::{INTERACTIVE_LOCK_TIMEOUT, WriteLock};
use crate::revision::{RUNTIME_STATE_FILE, is_internal_path};
use crate::runtime_state::RuntimeState;
use crate::vfs::Vfs;
use crate::workspace::Workspace;

pub use self::changes::FileChange;
pub use self::request::{CitationScope, Edit, GitMode, UpdateRequest};
pub use self::result::UpdateResult;
pub(crate) use self::stage::CommittedCache;
pub(crate) use self::stage::StageSources;
pub use self::stage::WRITER_STAGE_ITEMS;
pub(crate) use self::stage::read_tree;
use self::stage::{DERIVED_FILES, differences, normalize_stage};

impl Workspace {
    /// Run one all-or-nothing update (spec 02 §4.3). `derive` builds the derived views in
    /// the stage ([`NoDerivedViews`](crate::NoDerivedViews) leaves them as they are).
    ///
    /// A rejected update returns exactly one [`ErrorCode`] and changes no byte of the
    /// workspace. With [`GitMode::On`], a history commit that cannot be published after
    /// the install returns `GIT_COMMIT_FAILED` with details `memory_committed: true`.
    pub fn update(&self, request: &UpdateRequest, derive: &dyn Derive) -> Result<UpdateResult, Error> {
        self.update_cancellable(request, derive, &|| false)
    }

    /// [`Workspace::update`], asking `cancel` once more just before the install: when it
    /// answers true the update stops there with `TXN_CANCELLED`, having changed nothing.
    /// Past that point the install runs to the end, so an interrupted caller can say
    /// exactly which of the two happened (a CLI on SIGINT).
    pub fn update_cancellable(
        &self,
        request: &UpdateRequest,
        derive: &dyn Derive,
        cancel: &dyn Fn() -> bool,
    ) -> Result<UpdateResult, Error> {
        let lock = self.lock(INTERACTIVE_LOCK_TIMEOUT)?;
        self.update_locked_cancellable(&lock, request, derive, cancel)
    }

    /// [`update`](Workspace::update) under a write lock the caller already holds, so a
    /// caller can keep one lock across several steps (the writer runtime's write pass:
    /// archive, writer transaction, marking). The lock must be this workspace's
    /// (`INVALID_ARGUMENT` otherwise) and is still held when this returns.
    pub fn update_locked(
        &self,
        lock: &WriteLock,
        request: &UpdateRequest,
        derive: &dyn Derive,
    ) -> Result<UpdateResult, Error> {
        self.update_locked_cancellable(lock, request, derive, &|| false)
    }

    fn update_locked_cancellable(
        &self,
        lock: &WriteLock,
        request: &UpdateRequest,
        derive: &dyn Derive,
        cancel: &dyn Fn() -> bool,
    ) -> Result<UpdateResult, Error> {
        self.recover(lock)?;
        let current = self.revision()?;
        // No base: the edit is based on what is committed now, read under the lock, so
        // two such edits of different files never see each other as concurrent.
        if let Some(base) = &request.base_revision
            && *base != current
        {
            return Err(Error::new(ErrorCode::ConcurrentUpdate, "memory changed since base_revision")
                .with_detail("base_revision", base.as_str())
                .with_detail("revision", current));
        }

        let vfs = self.vfs();
        let no_plan = BTreeMap::new();
        let committed_sources = SourceResolver::new(StageSources::new(vfs, &no_plan));
        // The committed topics and baseline, re-read and re-parsed only where they changed.
        let mut cache = self.committed_cache();
        let ordered = cache.creation_order_known(&current);
        let view =
            cache.refresh(vfs, &current, &committed_sources, &request.known_ids_from, || self.normal_at(&current))?;
        let (committed, baseline) = (view.topics, &*view.baseline);

        // Evidence lands in the stage with the prose that cites it (one install).
        let archived = evidence_records(&request.sources, request.provenance.as_ref())?;
        let plan = plan_append(&archived.records, &self.archive_tree()).map_err(archive_error)?;
        let planned: BTreeMap<String, Vec<u8>> = plan.files.into_iter().map(|file| (file.path, file.bytes)).collect();

        let mut staged = committed.clone();
        let applied = edit::apply(&request.edit, &archived.source_ids, baseline, &mut staged)?;
        // The topic files this edit writes; any that normalization prunes is reported.
        let written: Vec<String> = differences(&staged, committed)
            .into_iter()
            .filter_map(|(path, bytes)| bytes.map(|_| path.clone()))
            .collect();

        let sources = SourceResolver::new(StageSources::new(vfs, &planned));
        let options = NormalizeOptions::with_removal(Removal::Only(applied.removable));
        let new_sources: BTreeSet<String> = archived.source_ids.values().cloned().collect();
        let mut normalized =
            normalize_stage(&view, staged, &sources, &new_sources, &options).map_err(|v| policy::topic_error(&v))?;
        policy::check_topic_collisions(committed, &normalized.files)?;
        if request.append_only {
            policy::check_append_only(committed, &normalized.files)?;
        }
        let mut evidence = new_sources.clone();
        evidence.extend(applied.declared_sources);
        if let CitationScope::Sources(extra) = &request.citations {
            // Decision 4: what the topics already cite may be regrouped between blocks.
            evidence.extend(extra.iter().cloned());
            evidence.extend(baseline.units().flat_map(|unit| unit.source_refs.iter().cloned()));
        }
        let scope = (request.citations != CitationScope::AnyTrusted).then_some(&evidence);
        policy::check_source_refs(&normalized.units, baseline, &sources, scope)?;

        let mut changes: Changes = differences(&normalized.files, committed)
            .into_iter()
            .map(|(path, bytes)| (path.clone(), bytes.cloned()))
            .collect();
        for (path, bytes) in &planned {
            changes.insert(path.clone(), Some(bytes.clone()));
        }
        let master_removed = committed.contains_key(TOPIC_CORE) && !normalized.files.contains_key(TOPIC_CORE);
        // Beyond the topics the derive step sees the planned archives and, on a first
        // transaction, the creation order seeded from the committed tree.
        let mut overlay = planned;
        let (ordered, seeded) =
            if ordered { (true, None) } else { self.seeded_runtime_state(committed, &committed_sources) };
        if let Some(bytes) = seeded {
            overlay.insert(self.runtime_state_path(), bytes);
        }
        self.derive_into(derive, &mut normalized.files, &overlay, master_removed, &current, &mut changes)?;
        crate::crashpoint!("derive.built");

        if cancel() {
            return Err(Error::new(ErrorCode::Cancelled, "the update was interrupted before the install"));
        }
        // History is created at the first install, never by a rejected edit (spec 02
        // §4.11 "on first use"); its first commit holds the memory as it was before.
        let history = match request.git_commit {
            GitMode::Off => None,
            GitMode::On | GitMode::Auto => Some(self.history_for_commit()?),
        };
        // The tree changes from here on: the cache learns the result only after the install.
        cache.invalidate();
        cache.set_creation_order_known(ordered);
        let prepared = match &history {
            Some(history) => history.prepare(&request.commit_message, &changes)?,
            None => None,
        };
        crate::crashpoint!("history.objects_written");
        let installed = self.install_files(lock, &changes)?;
        crate::crashpoint!("history.before_publish");
        let (git_committed, git_commit) = match prepared.map(|commit| commit.publish()).transpose() {
            Ok(id) => {
                if let Some(id) = &id {
                    self.history_published(id);
                }
                (id.is_some(), id)
            }
            Err(error) if request.git_commit == GitMode::On => {
                return Err(error.with_detail("memory_committed", true).with_detail("git_committed", false));
            }
            // `auto`: the memory is installed; history catches up at the next commit.
            Err(_) => (false, None),
        };
        crate::crashpoint!("history.published");
        // Under the lock since the base check: the tree is that one with `changes` installed.
        // What it hashes it holds: the installed bytes, and the committed topics
        // (normalized, equal to the committed ones where unchanged).
        let known = |path: &[u8]| {
            let path = std::str::from_utf8(path).ok()?;
            match changes.get(path) {
                Some(bytes) => bytes.as_deref(),
                None => normalized.files.get(path).map(Vec::as_slice),
            }
        };
        let revision = self.revision_after_install(changes.keys().map(String::as_str), &known)?;
        cache.installed(&changes, revision.clone(), &normalized, &new_sources);
        cache.vouch(lock.stamp());
        // The archives as installed, read afresh (the resolvers above keep what they read).
        if cache.settle(&SourceResolver::new(StageSources::new(vfs, &no_plan))) {
            self.record_normal(&revision);
        }
        drop(cache);
        derive.installed(&revision);
        Ok(UpdateResult {
            revision,
            source_ids: archived.source_ids,
            block_ids: normalized.block_id_map,
            evidence_ids: normalized.evidence_id_map,
            changed_files: installed.changed.into_iter().filter(|path| !is_internal_path(path)).collect(),
            dropped_files: written.into_iter().filter(|path| !normalized.files.contains_key(path)).collect(),
            memory_committed: true,
            git_committed,
            git_commit,
        })
    }

    /// Whether an install (of this or another process) recorded the tree at `revision`
    /// as normal, in [`NORMAL_MARKER`].
    fn normal_at(&self, revision: &str) -> bool {
        let path = format!("{}/{NORMAL_MARKER}", self.runtime_dir_name());
        self.vfs().read(Path::new(&path)).is_ok_and(|bytes| bytes == revision.as_bytes())
    }

    /// Record that the tree at `revision` is normal. A cache only, so not synced: a
    /// marker lost or torn by a crash names no revision, and then the next cold update
    /// normalizes the whole tree, as it would without it.
    pub(crate) fn record_normal(&self, revision: &str) {
        let vfs = self.vfs();
        let path = format!("{}/{NORMAL_MARKER}", self.runtime_dir_name());
        let temp = format!("{path}.{:016x}.tmp", crate::random::u64());
        let written = vfs.create_file(Path::new(&temp), revision.as_bytes()).map(drop);
        if written.and_then(|()| vfs.rename(Path::new(&temp), Path::new(&path))).is_err() {
            let _ = vfs.remove_file(Path::new(&temp));
        }
    }

    /// Whether the committed `runtime.json` has a creation order, and when it has none
    /// yet, that file with the order seeded from the committed tree (see
    /// [`RuntimeState::seeded`]). The tree is parsed only in that case, which is the first
    /// transaction of a workspace.
    fn seeded_runtime_state<L: SourceLookup>(
        &self,
        committed: &BTreeMap<String, Vec<u8>>,
        sources: &SourceResolver<L>,
    ) -> (bool, Option<Vec<u8>>) {
        let bytes = self.vfs().read(Path::new(&self.runtime_state_path())).ok();
        if bytes.as_deref().is_some_and(|bytes| RuntimeState::parse(bytes).has_creation_order()) {
            return (true, None);
        }
        let tree = parse_tree(committed.iter(), sources, Mode::Lenient);
        (false, RuntimeState::seeded(bytes.as_deref(), tree.units().iter().map(|unit| unit.memory_id.as_str())))
    }

    /// The derive step: run the promotion pass on the whole staged tree, then hand it to
    /// `derive` and add what both return (where it differs from the committed bytes) to
    /// `changes`. `overlay`: staged files beyond the topics (planned archives, a seeded
    /// `runtime.json`), over the committed ones; `master_removed`: this transaction
    /// deletes `topics/core.md`. The `topics` move into the stage and back (the whole
    /// tree is not copied), so on an error they are gone.
    pub(crate) fn derive_into(
        &self,
        derive: &dyn Derive,
        topics: &mut BTreeMap<String, Vec<u8>>,
        overlay: &BTreeMap<String, Vec<u8>>,
        master_removed: bool,
        base_revision: &str,
        changes: &mut Changes,
    ) -> Result<(), Error> {
        let vfs = self.vfs();
        let mut staged = read_tree(vfs, "sources")?;
        staged.append(topics);
        let mut committed_derived = read_tree(vfs, "timeline")?;
        let runtime_state = self.runtime_state_path();
        let core_report = format!("{}/{CORE_REPORT_FILE}", self.runtime_dir_name());
        for path in DERIVED_FILES.iter().copied().chain([runtime_state.as_str(), core_report.as_str()]) {
            if let Ok(bytes) = vfs.read(Path::new(path)) {
                committed_derived.insert(path.to_owned(), bytes);
            }
        }
        staged.extend(committed_derived.iter().map(|(path, bytes)| (path.clone(), bytes.clone())));
        // Over the committed files: a seeded `runtime.json` replaces the committed one.
        staged.extend(overlay.iter().map(|(path, bytes)| (path.clone(), bytes.clone())));
        // Spec 01 §7.1: removing `topics/core.md` removes its render, which must not be
        // promoted back as a hand-written root `core.md`.
        if master_removed && staged.remove(ROOT_CORE).is_some() {
            changes.insert(ROOT_CORE.to_owned(), None);
        }
        // Install-time promotion (spec 01 §7.3): new topic files only, derived with the rest.
        let mut promoted = Vec::new();
        for (path, bytes) in derive.promote(&staged) {
            if !path.starts_with("topics/") || staged.contains_key(&path) {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    "the promotion pass wrote an existing or non-topic path",
                )
                .with_path(path));
            }
            changes.insert(path.clone(), Some(bytes.clone()));
            promoted.push(path.clone());
            staged.insert(path, bytes);
        }
        // Everything the stage changes so far: topics, planned archives, promotions.
        let changed: BTreeSet<String> = changes.keys().cloned().collect();
        let delta = StageDelta::new(base_revision, &changed);
        for (path, bytes) in derive.derive_delta(&staged, self.runtime_dir_name(), &delta)? {
            let allowed = DERIVED_FILES.contains(&path.as_str())
                || path.starts_with("timeline/")
                || path == format!("{}/{RUNTIME_STATE_FILE}", self.runtime_dir_name())
                || path == format!("{}/{CORE_REPORT_FILE}", self.runtime_dir_name());
            if !allowed {
                return Err(
                    Error::new(ErrorCode::InvalidArgument, "the derive step wrote a non-derived path").with_path(path)
                );
            }
            if path == ROOT_CORE && master_removed {
                continue;
            }
            if committed_derived.get(&path) != bytes.as_ref() {
                changes.insert(path, bytes);
            }
        }
        // The topics back: every staged path under `topics/` but the promoted ones.
        let mut back = staged.split_off(TOPICS_FROM);
        back.split_off(TOPICS_TO);
        for path in &promoted {
            back.remove(path);
        }
        *topics = back;
        Ok(())
    }
}

/// Every path under `topics/` sorts from this key up to [`TOPICS_TO`] (`'/' + 1` is `'0'`).
const TOPICS_FROM: &str = "topics/";
/// The first key after every path under `topics/`.
const TOPICS_TO: &str = "topics0";

/// The runtime-directory file naming the last revision an install found normal (every
/// topic file its own normalization), so that a new process normalizes only the files an
/// update changes: on a 50 MB topic tree the whole-tree pass is most of a one-line edit.
/// The revision hashes every topic and source byte, which is all normal form depends on.
const NORMAL_MARKER: &str = "committed-normal";

/// The master of the rendered `core.md` (spec 01 §7).
const TOPIC_CORE: &str = "topics/core.md";
/// The rendered, always-in-context file.
const ROOT_CORE: &str = "core.md";

/// An archive writer refusal: unreadable archives are I/O; the rest (an incomplete
/// archive per decision Q4, colliding names, limits) reject the request's sources.
fn archive_error(error: scriptorium_archive_format::Error) -> Error {
    let code = if error.code() == ArchiveCode::ReadFailed { ErrorCode::Io } else { ErrorCode::InvalidArgument };
    Error::new(code, error.message().to_owned()).with_detail("archive_code", error.code().as_str())
}

#[cfg(test)]
mod tests;
