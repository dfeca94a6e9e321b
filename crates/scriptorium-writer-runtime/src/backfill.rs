//! [`Runtime::backfill`] (spec 02 §8.2): write the historical trusted sources that no
//! topic cites yet, in token-budgeted batches, under one write lock for the whole run.
//! Markers are not involved: what is owed is read off the workspace itself (a source
//! nobody cites), so a rerun resumes at the first source still uncited and a complete
//! workspace costs no model call.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use scriptorium_archive_format::{
    SourceEvent, SourceRecord, TrustState, UNDATED, WriterRecord, is_v2_source_path, plan_append,
    render_observed_section, source_events,
};
use scriptorium_derived_views::count_o200k;
use scriptorium_transaction::{
    Changes, Edit, Error as TxError, ErrorCode as TxCode, FileChange, STAGED_EDIT_LOCK_TIMEOUT, TopicPath, WriteLock,
};
use sha2::{Digest, Sha256};

use crate::agent::{StageKind, WriterStage, WriterTask};
use crate::failure::PassError;
use crate::pass::Runtime;

/// The token budget of one backfill batch (spec 02 §8.2).
pub const BACKFILL_BUDGET_TOKENS: usize = 16_000;

/// The provider of the legacy-core migration source.
pub const LEGACY_CORE_PROVIDER: &str = "openprogram-migration";

/// How a backfill ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackfillStatus {
    /// Every trusted source is cited.
    Ok,
    /// A batch made no progress: some sources stay uncited.
    Incomplete,
}

/// The result of [`Runtime::backfill`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackfillReport {
    /// How it ended.
    pub status: BackfillStatus,
    /// Uncited trusted sources at the start.
    pub candidates: usize,
    /// Sources handed to the writer.
    pub processed: usize,
    /// Uncited trusted sources at the end.
    pub remaining: usize,
    /// The workspace revision at the end.
    pub revision: String,
}

/// One uncited trusted source, as the writer will see it.
#[derive(Clone, Debug)]
pub(crate) struct Candidate {
    pub(crate) event: SourceEvent,
    pub(crate) tokens: usize,
}

impl Runtime {
    /// Backfill (spec 02 §8.2) with batches of at most `budget` tokens (each source
    /// counting at least one; a batch holds at least one source). A failing batch
    /// returns its error; earlier batches stay installed.
    pub fn backfill(&self, budget: usize) -> Result<BackfillReport, PassError> {
        let lock = self.workspace().lock(STAGED_EDIT_LOCK_TIMEOUT)?;
        self.prepare_legacy_core(&lock)?;
        let mut pending = self.candidates(&lock)?;
        let candidates = pending.len();
        let mut processed = 0;
        while !pending.is_empty() {
            let batch = budget_prefix(&pending, budget);
            processed += batch.len();
            self.backfill_batch(&lock, batch)?;
            let next = self.candidates(&lock)?;
            let ids = |list: &[Candidate]| list.iter().map(|c| c.event.event_id.clone()).collect::<Vec<_>>();
            if ids(&next) == ids(&pending) {
                let remaining = next.len();
                let revision = self.workspace().revision()?;
                return Ok(BackfillReport {
                    status: BackfillStatus::Incomplete,
                    candidates,
                    processed,
                    remaining,
                    revision,
                });
            }
            pending = next;
        }
        let revision = self.workspace().revision()?;
        Ok(BackfillReport { status: BackfillStatus::Ok, candidates, processed, remaining: 0, revision })
    }

    /// Every trusted source event no topic unit cites, v2 frames preferred over a legacy
    /// event of the same id, in (path, line, id) order.
    pub(crate) fn candidates(&self, lock: &WriteLock) -> Result<Vec<Candidate>, PassError> {
        let snapshot = self.workspace().snapshot_locked(lock)?;
        let cited: HashSet<&str> =
            snapshot.claims.iter().flat_map(|claim| claim.unit.source_refs.iter().map(String::as_str)).collect();
        let mut by_id: BTreeMap<String, SourceEvent> = BTreeMap::new();
        for (path, bytes) in &snapshot.sources {
            let Ok(text) = std::str::from_utf8(bytes) else { continue };
            for event in source_events(path, text) {
                if event.trust_state != TrustState::Trusted || cited.contains(event.event_id.as_str()) {
                    continue;
                }
                let keep_old = by_id.get(&event.event_id).is_some_and(|old| is_v2_source_path(&old.path));
                if !keep_old {
                    by_id.insert(event.event_id.clone(), event);
                }
            }
        }
        let mut out: Vec<Candidate> =
            by_id.into_values().map(|event| Candidate { tokens: count_o200k(&event.content).max(1), event }).collect();
        out.sort_by(|a, b| {
            (&a.event.path, a.event.line, &a.event.event_id).cmp(&(&b.event.path, b.event.line, &b.event.event_id))
        });
        Ok(out)
    }

    fn backfill_batch(&self, lock: &WriteLock, batch: &[Candidate]) -> Result<(), PassError> {
        let allowed: BTreeSet<String> = batch.iter().map(|c| c.event.event_id.clone()).collect();
        let task = WriterTask { kind: StageKind::Backfill, records: &[], observed: observed_sessions(batch) };
        let views = self.views();
        let mut stage =
            WriterStage::new(self.workspace(), lock, &views, None, allowed, BACKFILL_MESSAGE).without_history();
        self.agent().run(&task, &mut stage)?;
        Ok(())
    }

    /// Spec 02 §8.2 step 2: a hand-written root `core.md` with no `topics/core.md`
    /// becomes memory. One that parses as a topic file is committed as
    /// `topics/core.md`; any other is archived whole as one trusted source the writer
    /// then turns into topics.
    fn prepare_legacy_core(&self, lock: &WriteLock) -> Result<(), PassError> {
        let root = self.workspace().root();
        if root.join("topics/core.md").exists() {
            return Ok(());
        }
        let Ok(bytes) = std::fs::read(root.join("core.md")) else { return Ok(()) };
        let Ok(text) = String::from_utf8(bytes.clone()) else { return Ok(()) };
        if text.trim().is_empty() {
            return Ok(());
        }
        let path = TopicPath::new("topics/core.md").map_err(PassError::from)?;
        let views = self.views();
        let mut stage =
            WriterStage::new(self.workspace(), lock, &views, None, BTreeSet::new(), BACKFILL_MESSAGE).without_history();
        match stage.commit(Edit::Changes(vec![FileChange { path, content: Some(text.clone()) }])) {
            Ok(_) => return Ok(()),
            Err(error) if error.code() == TxCode::InvalidTopicFormat => {}
            Err(error) => return Err(error.into()),
        }
        let digest = Sha256::digest(&bytes);
        let hex: String = digest.iter().take(12).map(|byte| format!("{byte:02x}")).collect();
        let mut record = SourceRecord::new(LEGACY_CORE_PROVIDER, "legacy-core", hex, 0, "system", text);
        record.speaker_id = Some("runtime:legacy-core".to_owned());
        record.speaker_display = Some("Legacy core migration".to_owned());
        record.speaker_kind = "runtime".to_owned();
        record.principal_id = "owner".to_owned();
        record.authority_tier = Some("owner".to_owned());
        let plan = plan_append(&[record], &self.workspace().archive_tree()).map_err(|error| {
            TxError::new(TxCode::InvalidArgument, error.message().to_owned())
                .with_detail("archive_code", error.code().as_str())
        })?;
        if !plan.is_empty() {
            let changes: Changes = plan.files.into_iter().map(|file| (file.path, Some(file.bytes))).collect();
            self.workspace().install(lock, &changes)?;
        }
        Ok(())
    }
}

/// The commit message a backfill install would carry (it makes no history commit).
const BACKFILL_MESSAGE: &str = "memory: backfill";

/// The greedy prefix of `pending` whose tokens stay within `budget`, at least one item.
fn budget_prefix(pending: &[Candidate], budget: usize) -> &[Candidate] {
    let mut sum = 0usize;
    let mut end = 0;
    for candidate in pending {
        sum = sum.saturating_add(candidate.tokens);
        if end > 0 && sum > budget {
            break;
        }
        end += 1;
    }
    pending.get(..end).unwrap_or(pending)
}

/// The batch as observed sessions: consecutive sources of one date share a heading
/// (`event.date` or `undated`); the speaker is the first of label, display, id, `user`.
pub(crate) fn observed_sessions(batch: &[Candidate]) -> String {
    let mut sections: Vec<String> = Vec::new();
    let mut group: Vec<WriterRecord> = Vec::new();
    let mut date: Option<String> = None;
    for candidate in batch {
        let event = &candidate.event;
        let this = event.date.clone().unwrap_or_else(|| UNDATED.to_owned());
        if date.as_ref().is_some_and(|d| *d != this) {
            sections.push(render_observed_section(date.as_deref().unwrap_or(UNDATED), &group));
            group.clear();
        }
        date = Some(this);
        let speaker = [&event.speaker_label, &event.speaker_display, &event.speaker_id]
            .into_iter()
            .find(|text| !text.is_empty())
            .map_or("user", String::as_str);
        group.push(WriterRecord {
            source_id: event.event_id.clone(),
            speaker: speaker.to_owned(),
            content: event.content.clone(),
        });
    }
    if let Some(date) = date {
        sections.push(render_observed_section(&date, &group));
    }
    sections.join("\n\n")
}

#[cfg(test)]
mod tests;
