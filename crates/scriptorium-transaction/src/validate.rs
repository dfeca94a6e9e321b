//! [`validate_topics`]: the checks an install runs on a topic tree, as one contract that
//! `check` calls on the committed tree instead of a copy of its own.
//!
//! An install parses the staged tree strictly, refuses a block link that names no unit
//! (the contract step, spec 01 §6.9 step 8), and refuses a cited source that does not
//! exist (step 9). The strict parse already rejects a link target that names no frame or
//! anchor; a plain handle (`D1:2`, a v2 source id) or a `#d<c>-<t>` fallback resolves to
//! an id without any file being read, so only the source pass notices that the id exists
//! nowhere. Trust is not checked: pending sources are refused only when a transaction
//! *adds* them.
//!
//! The one principled difference from an install: its source policy also refuses a new
//! citation of a pending source, or (for `memory_update` and the changes API) of a source
//! that is not this call's evidence. Both are rules about what one transaction adds, not
//! properties of a tree, so `check` does not report them; the agreement property in
//! `update/tests.rs` installs with [`crate::update::CitationScope::AnyTrusted`] for that reason.
//!
//! A plain handle (`D1:2`, a v2 source id) that locates no archived source is refused by
//! normalization as `TOPIC_INVALID_SOURCE_TARGET` (as the reference does), so `check`
//! names it with that code too, through normalization's own rule
//! ([`scriptorium_topic_markdown::unlocated_handle`]); any other unknown id is
//! `TOPIC_UNKNOWN_SOURCE`.

use std::collections::{HashMap, HashSet};

use scriptorium_topic_markdown::{
    ErrorCode, Mode, SourceLookup, SourceResolver, Unit, UnitKind, Violation, parse_tree, unlocated_handle,
};

/// What [`validate_topics`] found.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct TopicCheck {
    /// Every unit of the strict parse, in file and line order.
    pub units: Vec<Unit>,
    /// Every violation an install would refuse: the strict parse's, then
    /// `TOPIC_UNKNOWN_SOURCE` (or `TOPIC_INVALID_SOURCE_TARGET` for a plain handle),
    /// `TOPIC_SOURCE_READ_FAILED` and `TOPIC_DANGLING_BLOCK_LINK`,
    /// one per unit and id.
    pub violations: Vec<Violation>,
    /// Distinct source ids cited anywhere in the tree.
    pub cited_sources: usize,
    /// How many of those exist in the archives.
    pub resolved_sources: usize,
}

/// Validate the topic tree `topics` (path → bytes) against `sources`, as an install does.
pub fn validate_topics<'a, L, P, B>(
    topics: impl IntoIterator<Item = (&'a P, &'a B)>,
    sources: &SourceResolver<L>,
) -> TopicCheck
where
    L: SourceLookup,
    P: AsRef<str> + ?Sized + 'a,
    B: AsRef<[u8]> + ?Sized + 'a,
{
    let (_, units, mut violations) = parse_tree(topics, sources, Mode::Strict).into_parts();
    let ids: HashSet<&str> = units.iter().map(|u| u.memory_id.as_str()).collect();
    // One lookup per distinct id: many blocks cite the same frames.
    let mut exists: HashMap<&str, Result<bool, String>> = HashMap::new();
    let mut found = Vec::new();
    // Aliases share their block's content, so only blocks and legacy records are checked.
    for unit in units.iter().filter(|u| !matches!(u.kind, UnitKind::Alias { .. })) {
        let line = Some(unit.line);
        for (n, id) in unit.source_refs.iter().enumerate() {
            let known = exists.entry(id).or_insert_with(|| sources.exists(id).map_err(|error| error.to_string()));
            match known {
                Ok(true) => {}
                Ok(false) => {
                    // A plain handle is refused at normalization, with its own code.
                    let target = unit.source_links.get(n).map_or(id.as_str(), String::as_str);
                    found.push(unlocated_handle(sources, &unit.path, target, line).unwrap_or_else(|| {
                        Violation::new(
                            ErrorCode::UnknownSource,
                            &unit.path,
                            line,
                            format!("missing source reference: {id}"),
                        )
                    }))
                }
                Err(message) => {
                    found.push(Violation::new(ErrorCode::SourceReadFailed, &unit.path, line, message.clone()))
                }
            }
        }
        for target in unit.relation_targets.iter().filter(|t| !ids.contains(t.as_str())) {
            let detail = format!("dangling block link: {target}");
            found.push(Violation::new(ErrorCode::DanglingBlockLink, &unit.path, line, detail));
        }
    }
    let resolved_sources = exists.values().filter(|known| matches!(known, Ok(true))).count();
    let cited_sources = exists.len();
    violations.extend(found);
    TopicCheck { units, violations, cited_sources, resolved_sources }
}

#[cfg(test)]
mod tests;
