//! Form C of spec 02 §4.2: record operations (`memory_changes`), parsed and applied to
//! the staged topics by the record-operations module.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::error::Error;
use crate::records::{apply_record_ops, parse_record_ops};

/// What the record operations did that the rest of the pipeline needs.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// Block ids named by delete operations: the only ids this edit may remove.
    pub(crate) deleted_ids: BTreeSet<String>,
    /// Existing source ids the operations declare: evidence of this transaction.
    pub(crate) declared_sources: BTreeSet<String>,
}

/// Parse `ops` (labels already replaced) and apply them to `staged`.
pub(crate) fn apply(ops: &Value, staged: &mut BTreeMap<String, Vec<u8>>) -> Result<Outcome, Error> {
    let ops = parse_record_ops(ops)?;
    let changes = apply_record_ops(&ops, staged)?;
    Ok(Outcome { deleted_ids: changes.deleted_ids, declared_sources: changes.declared_sources })
}
