//! [`Runtime::promote`] (spec 02 §5, `memory_promote`): trust a pending source, then
//! distill it. The trust flip is the transaction's ([`Workspace::promote_source`]:
//! archive line, audit line and derived views in one install, then a history commit);
//! the distillation is one writer run on that single source, with it as the only source
//! new citations may name, unless a topic cites it already.
//!
//! Who may promote (the local interactive owner) is the caller's check (the tool gate
//! of the backend layer); this records the principal it is given.
//!
//! [`Workspace::promote_source`]: scriptorium_transaction::Workspace::promote_source

use std::collections::BTreeSet;

use scriptorium_transaction::{PromoteRequest, STAGED_EDIT_LOCK_TIMEOUT};

use crate::agent::{StageKind, WriterStage, WriterTask};
use crate::backfill::observed_sessions;
use crate::clock::iso8601_utc;
use crate::failure::PassError;
use crate::pass::Runtime;

/// The commit message a distillation install would carry (it makes no history commit).
const PROMOTE_MESSAGE: &str = "memory: distill promoted source";

/// The result of [`Runtime::promote`]: `{source_id, promoted, trust_state, distilled,
/// changed_files}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromoteReport {
    /// The source.
    pub source_id: String,
    /// `false` when it was trusted already.
    pub promoted: bool,
    /// Always `trusted` after a promotion.
    pub trust_state: &'static str,
    /// Whether a topic cites the source now.
    pub distilled: bool,
    /// The topic files the distillation committed, sorted.
    pub changed_files: Vec<String>,
}

impl Runtime {
    /// Promote `source_id` on behalf of the owner `principal_id`, then distill it.
    pub fn promote(&self, source_id: &str, principal_id: &str) -> Result<PromoteReport, PassError> {
        let request = PromoteRequest::new(source_id, principal_id, iso8601_utc(self.clock().now()));
        let promoted = self.workspace().promote_source(&request, &*self.views())?.promoted;
        let lock = self.workspace().lock(STAGED_EDIT_LOCK_TIMEOUT)?;
        let snapshot = self.workspace().snapshot_locked(&lock)?;
        let cited = snapshot.claims.iter().any(|claim| claim.unit.source_refs.iter().any(|id| id == source_id));
        drop(snapshot);
        let mut report = PromoteReport {
            source_id: source_id.to_owned(),
            promoted,
            trust_state: "trusted",
            distilled: cited,
            changed_files: Vec::new(),
        };
        if cited {
            return Ok(report);
        }
        let candidates = self.candidates(&lock)?;
        let Some(candidate) = candidates.into_iter().find(|c| c.event.event_id == source_id) else {
            return Ok(report);
        };
        let allowed = BTreeSet::from([source_id.to_owned()]);
        let task = WriterTask {
            kind: StageKind::Promote,
            records: &[],
            observed: observed_sessions(std::slice::from_ref(&candidate)),
        };
        let views = self.views();
        let mut stage =
            WriterStage::new(self.workspace(), &lock, &views, None, allowed, PROMOTE_MESSAGE).without_history();
        self.agent().run(&task, &mut stage)?;
        report.changed_files = stage.changed_files().iter().cloned().collect();
        let after = self.workspace().snapshot_locked(&lock)?;
        report.distilled = after.claims.iter().any(|claim| claim.unit.source_refs.iter().any(|id| id == source_id));
        Ok(report)
    }
}
