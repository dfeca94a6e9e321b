//! [`UpdateResult`]: what a successful update reports (spec 02 §4.12).

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// The result of a successful [`Workspace::update`](crate::Workspace::update).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct UpdateResult {
    /// The revision after the install.
    pub revision: String,
    /// Evidence label → archived source id.
    pub source_ids: BTreeMap<String, String>,
    /// `"topics/<path>#<n>"` (n-th new paragraph of the file) → new block id.
    pub block_ids: BTreeMap<String, String>,
    /// Local footnote label → minted evidence id.
    pub evidence_ids: BTreeMap<String, String>,
    /// The visible workspace files whose bytes changed, in path order.
    pub changed_files: Vec<String>,
    /// Topic files the edit wrote that normalization removed because they hold no
    /// record (a file of headings only), in path order; never installed.
    pub dropped_files: Vec<String>,
    /// Whether the memory files were installed (always true for a result).
    pub memory_committed: bool,
    /// Whether a history commit was published.
    pub git_committed: bool,
    /// The published commit, if any.
    pub git_commit: Option<String>,
}

impl UpdateResult {
    /// The result as the JSON object of spec 02 §4.12 (with `ok: true`).
    pub fn to_json(&self) -> Value {
        json!({
            "ok": true,
            "revision": self.revision,
            "source_ids": self.source_ids,
            "block_ids": self.block_ids,
            "evidence_ids": self.evidence_ids,
            "changed_files": self.changed_files,
            "dropped_files": self.dropped_files,
            "memory_committed": self.memory_committed,
            "git_committed": self.git_committed,
            "git_commit": self.git_commit,
        })
    }
}
