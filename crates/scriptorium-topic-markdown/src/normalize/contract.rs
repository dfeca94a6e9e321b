//! Step 8, the contract checks after the strict parse: committed ids must survive
//! (unless removal is allowed), links from new or changed units to other topic files
//! must target `#^block-id`, and every block link must name an existing unit.

use crate::error::{ErrorCode, Violation};
use crate::hash::FastSet;
use crate::normalize::{Baseline, Removal};
use crate::paths::{dirname, join_normalized, normpath, percent_decode, topic_relative};
use crate::syntax::{is_block_id, is_footnote_id, links};
use crate::unit::Unit;

pub(crate) fn check(units: &[Unit], baseline: &Baseline, removal: &Removal) -> Vec<Violation> {
    let mut violations = Vec::new();
    let present: FastSet<&str> = units.iter().map(|u| u.memory_id.as_str()).collect();
    let mut removed: Vec<&str> = baseline.id_iter().filter(|id| !present.contains(id) && !removal.allows(id)).collect();
    removed.sort_unstable();
    for id in removed {
        let detail = format!("block ID must not be removed: {id}");
        violations.push(Violation::new(ErrorCode::BlockIdRemoved, "", None, detail));
    }
    for unit in units {
        let changed = baseline.unit(&unit.memory_id).is_none_or(|old| old.content != unit.content);
        if changed {
            violations.extend(topic_link_violations(unit));
        }
    }
    for unit in units {
        for target in &unit.relation_targets {
            if !present.contains(target.as_str()) {
                let detail = format!("dangling block link: {target}");
                violations.push(Violation::new(ErrorCode::DanglingBlockLink, &unit.path, Some(unit.line), detail));
            }
        }
    }
    violations
}

/// Links of a unit's content that point at another topic file without a `#^id`
/// fragment (spec 01 §6.6).
pub(crate) fn topic_link_violations(unit: &Unit) -> Vec<Violation> {
    let topic = topic_relative(&unit.path);
    let mut out = Vec::new();
    for link in links(&unit.content) {
        let (path, fragment) = link.target.split_once('#').unwrap_or((link.target, ""));
        if path.is_empty() || path.starts_with('/') || has_scheme(path) {
            continue;
        }
        let resolved = normpath(&join_normalized(dirname(topic), &percent_decode(path)));
        let is_topic = resolved.to_ascii_lowercase().ends_with(".md") && !resolved.split('/').any(|c| c == "..");
        if is_topic && !is_block_fragment(fragment) {
            let detail = format!("Topic-to-Topic link must target #^block-id: {topic} -> {resolved}");
            out.push(Violation::new(ErrorCode::LinkWithoutBlockId, &unit.path, Some(unit.line), detail));
        }
    }
    out
}

/// `^(mem_[A-Za-z0-9_-]+|[A-Za-z0-9-]+)` as a whole fragment.
fn is_block_fragment(fragment: &str) -> bool {
    fragment.strip_prefix('^').is_some_and(|id| is_block_id(id) || id.strip_prefix("mem_").is_some_and(is_footnote_id))
}

/// A URL scheme: `[A-Za-z][A-Za-z0-9+.-]*:` before any `/`.
fn has_scheme(path: &str) -> bool {
    let Some((scheme, _)) = path.split_once(':') else { return false };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
}
