//! The derive step: how the layer above builds derived views inside the stage, so that
//! they install in the same atomic step as the edit (decision "derived views timing").
//!
//! The transaction layer defines the trait and never depends on its implementations
//! (scriptorium-derived-views provides the real one), which keeps the ladder pointing down.

use std::collections::BTreeMap;

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

    /// The install-time promotion pass (spec 01 §7.3), run on the same staged tree before
    /// [`derive`](Derive::derive): new topic files to add to the stage, such as
    /// `topics/core.md` promoted from a hand-written root `core.md`. Only paths under
    /// `topics/` that the stage does not hold are accepted. The default promotes nothing.
    fn promote(&self, _staged: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
        BTreeMap::new()
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
