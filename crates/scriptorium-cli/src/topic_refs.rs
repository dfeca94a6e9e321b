//! The reference checks an install runs after the strict parse (spec 01 §6.9 step 9),
//! applied to the committed tree: every cited source id exists in the archives, and
//! every block link names a unit somewhere in the tree.
//!
//! The strict parse already rejects a link target that names no frame or anchor; this
//! adds what it cannot see from one definition: a plain handle (`D1:2`, a v2 source
//! id) or a `#d<c>-<t>` fallback resolves to an id without any file being read, so
//! only this pass notices that the id exists nowhere. Trust is not checked: pending
//! sources are refused only when a transaction *adds* them.

use std::collections::{HashMap, HashSet};

use scriptorium_topic_markdown::{ErrorCode, SourceLookup, SourceResolver, Unit, UnitKind, Violation};

/// What the reference pass found.
#[derive(Debug, Default)]
pub(crate) struct RefCheck {
    /// Distinct source ids cited anywhere in the tree.
    pub(crate) cited_sources: usize,
    /// How many of those exist in the archives.
    pub(crate) resolved_sources: usize,
    /// `TOPIC_UNKNOWN_SOURCE`, `TOPIC_SOURCE_READ_FAILED` and `TOPIC_DANGLING_BLOCK_LINK`
    /// violations, one per unit and id.
    pub(crate) violations: Vec<Violation>,
}

/// Check the source refs and block links of `units` (aliases share their block's
/// content, so only blocks and legacy records are checked).
pub(crate) fn check_refs<L: SourceLookup>(units: &[Unit], sources: &SourceResolver<L>) -> RefCheck {
    let ids: HashSet<&str> = units.iter().map(|u| u.memory_id.as_str()).collect();
    // One lookup per distinct id: many blocks cite the same frames.
    let mut exists: HashMap<&str, Result<bool, String>> = HashMap::new();
    let mut violations = Vec::new();
    for unit in units.iter().filter(|u| !matches!(u.kind, UnitKind::Alias { .. })) {
        let line = Some(unit.line);
        for id in &unit.source_refs {
            let found = exists.entry(id).or_insert_with(|| sources.exists(id).map_err(|e| e.to_string()));
            match found {
                Ok(true) => {}
                Ok(false) => violations.push(Violation::new(
                    ErrorCode::UnknownSource,
                    &unit.path,
                    line,
                    format!("missing source reference: {id}"),
                )),
                Err(message) => {
                    violations.push(Violation::new(ErrorCode::SourceReadFailed, &unit.path, line, message.clone()));
                }
            }
        }
        for target in unit.relation_targets.iter().filter(|t| !ids.contains(t.as_str())) {
            let detail = format!("dangling block link: {target}");
            violations.push(Violation::new(ErrorCode::DanglingBlockLink, &unit.path, line, detail));
        }
    }
    let resolved_sources = exists.values().filter(|found| matches!(found, Ok(true))).count();
    RefCheck { cited_sources: exists.len(), resolved_sources, violations }
}
