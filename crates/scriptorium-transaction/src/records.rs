//! Form C of `memory_update` (spec 02 §4.2): record operations (`memory_changes`) that
//! create, update, delete and move single paragraphs of topic files.
//!
//! Two pure steps: [`parse_record_ops`] checks the JSON shape of every operation, and
//! [`apply_record_ops`] edits staged topic text. Neither archives evidence nor assigns
//! ids: new paragraphs get no block id and cite a fresh local footnote label
//! (`new-evidence-record-<n>`),
//! which the normalizer (spec 01 §6.9) turns into minted ids, canonical source links and
//! pruned empty sections, so this module only places text.

mod apply;
mod check;
mod edit;
mod parse;
mod section;
mod tree;

use std::collections::BTreeSet;

pub use self::apply::apply_record_ops;
pub use self::parse::{MAX_RECORD_OPS, MAX_RECORD_PAYLOAD_BYTES, parse_record_ops};

/// One parsed record operation.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordOp {
    /// `create_record` (or legacy `create`): a new paragraph in a section.
    Create {
        /// The paragraph's prose, stripped, without citation or block id.
        content: String,
        /// The evidence: its time and sources.
        evidence: RecordEvidence,
        /// Where the paragraph goes.
        destination: Destination,
    },
    /// `update_record` (or legacy `update`): new prose and evidence for a paragraph.
    Update {
        /// Any id of the paragraph (identity or merged alias).
        memory_id: String,
        /// The new prose, stripped, without citation or block id.
        content: String,
        /// The new evidence.
        evidence: RecordEvidence,
    },
    /// `delete_record` (or legacy `delete`): one id, or the whole paragraph when it is its only id.
    Delete {
        /// The id to remove.
        memory_id: String,
    },
    /// `move_records`: whole paragraphs to a destination, in this order.
    Move {
        /// Every id of every moved paragraph, each paragraph's ids in its own order.
        memory_ids: Vec<String>,
        /// Where the paragraphs go.
        destination: Destination,
    },
}

/// The footnote a created or updated paragraph cites.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordEvidence {
    /// `undated`, `YYYY`, `YYYY-MM` or `YYYY-MM-DD` (a JSON `null` reads as `undated`).
    pub time: String,
    /// The cited sources, in the given order, no source twice.
    pub sources: Vec<RecordSource>,
}

/// One source of a footnote: the link label and the source id it points to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordSource {
    /// The source id (after `new-source-*` substitution), written as the link target.
    pub source: String,
    /// The link label (`source_refs` use the source id itself).
    pub label: String,
}

/// Where created or moved paragraphs go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Destination {
    /// The normalized `topics/**.md` path.
    pub topic_path: String,
    /// The heading path (at most 6); empty means the text before the first heading.
    pub headings: Vec<String>,
    /// The place inside that section.
    pub position: Position,
}

/// A place inside a destination section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Position {
    /// Before the section's first content.
    Start,
    /// After the section's last content, before its first sub-heading.
    End,
    /// Right before the paragraph carrying this id.
    Before(String),
    /// Right after the paragraph carrying this id.
    After(String),
}

impl Position {
    /// The anchor id, for `before` and `after`.
    pub fn anchor(&self) -> Option<&str> {
        match self {
            Position::Before(id) | Position::After(id) => Some(id),
            Position::Start | Position::End => None,
        }
    }
}

/// What [`apply_record_ops`] did, for the pipeline's later checks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordChanges {
    /// Every source id the ops cite explicitly: evidence of this transaction (§4.7).
    pub declared_sources: BTreeSet<String>,
    /// The ids named by delete ops: the only committed ids allowed to disappear (§4.6).
    pub deleted_ids: BTreeSet<String>,
    /// The topic paths whose bytes were written (created or edited).
    pub changed: BTreeSet<String>,
}

#[cfg(test)]
mod tests;
