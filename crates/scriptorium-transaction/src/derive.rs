//! The derive step: how the layer above builds derived views inside the stage, so that
//! they install in the same atomic step as the edit (decision "derived views timing").
//!
//! The transaction layer defines the trait and never depends on its implementations
//! (scriptorium-derived-views provides the real one), which keeps the ladder pointing down.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::Error;

/// The `core.md` render report in the runtime directory, which the derive step may write
/// (tokens used, budget, blocks left out), so that a person can read why a block is missing.
pub const CORE_REPORT_FILE: &str = "core-report.json";

/// Derived files to write: workspace-relative path → new bytes, or `None` to remove.
pub type DerivedFiles = BTreeMap<String, Option<Vec<u8>>>;

/// Builds the derived views of a staged workspace.
pub trait Derive {
    /// Given every staged memory file (workspace-relative path → bytes: `topics/**`,
    /// `sources/**`, the committed derived files as they stand, and
    /// `<runtime-dir>/runtime.json` when it exists), return the derived files to write or
    /// remove: `core.md`, `timeline/**`, `recent_events.jsonl`, `relations.json` and
    /// `<runtime-dir>/runtime.json` (whose creation order it updates, keeping every
    /// other key) and `<runtime-dir>/`[`CORE_REPORT_FILE`]. Returning an error rejects the
    /// transaction.
    fn derive(&self, staged: &BTreeMap<String, Vec<u8>>, runtime_dir: &str) -> Result<DerivedFiles, Error>;

    /// [`derive`](Derive::derive), told how the stage differs from the committed
    /// workspace: an implementation that keeps state between calls may trust every
    /// staged file outside [`StageDelta::changed`] to hold the bytes committed at
    /// [`StageDelta::base_revision`]. The transaction calls this one; the default
    /// ignores the delta.
    fn derive_delta(
        &self,
        staged: &BTreeMap<String, Vec<u8>>,
        runtime_dir: &str,
        _delta: &StageDelta<'_>,
    ) -> Result<DerivedFiles, Error> {
        self.derive(staged, runtime_dir)
    }

    /// Called after the files of the last [`derive_delta`](Derive::derive_delta) call
    /// were installed, with the workspace's revision after the install: the stage that
    /// call saw is now committed at `revision`. Not called when the install did not
    /// happen. The default does nothing.
    fn installed(&self, _revision: &str) {}

    /// The install-time promotion pass (spec 01 §7.3), run on the same staged tree before
    /// [`derive`](Derive::derive): new topic files to add to the stage, such as
    /// `topics/core.md` promoted from a hand-written root `core.md`. Only paths under
    /// `topics/` that the stage does not hold are accepted. The default promotes nothing.
    fn promote(&self, _staged: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
        BTreeMap::new()
    }
}

/// How a stage differs from the committed workspace it was made from.
#[derive(Clone, Copy, Debug)]
pub struct StageDelta<'a> {
    base_revision: &'a str,
    changed: &'a BTreeSet<String>,
}

impl<'a> StageDelta<'a> {
    /// A stage made from the workspace committed at `base_revision`, differing from it
    /// only at `changed` (paths written, added or removed; a superset is allowed).
    pub fn new(base_revision: &'a str, changed: &'a BTreeSet<String>) -> Self {
        StageDelta { base_revision, changed }
    }

    /// The revision of the committed workspace the stage was made from.
    pub fn base_revision(&self) -> &'a str {
        self.base_revision
    }

    /// The paths where the stage may differ from that workspace.
    pub fn changed(&self) -> &'a BTreeSet<String> {
        self.changed
    }
}

/// No derived views: for callers that maintain none (tests of the transaction alone,
/// tools that only append sources). Every derived file is left as it stands.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoDerivedViews;

impl Derive for NoDerivedViews {
    fn derive(&self, _staged: &BTreeMap<String, Vec<u8>>, _runtime_dir: &str) -> Result<DerivedFiles, Error> {
        Ok(DerivedFiles::new())
    }
}
