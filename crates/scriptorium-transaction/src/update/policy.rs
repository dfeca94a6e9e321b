//! The checks that run on the normalized stage: the append-only rule for non-owner
//! callers (decision 11), the source-reference policy (spec 02 §4.7), and turning topic
//! violations into one `INVALID_TOPIC_FORMAT` that lists them all.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use scriptorium_archive_format::{TrustState, collision_key};
use scriptorium_topic_markdown::{Baseline, SourceLookup, SourceResolver, Unit, Violations};
use serde_json::{Value, json};

use crate::error::{Error, ErrorCode};

/// Decision 11: every committed topic file must be installed as its own bytes followed by
/// new bytes; a new file is fine. Checked after normalization, on the bytes that would
/// actually be installed.
pub(crate) fn check_append_only(
    committed: &BTreeMap<String, Vec<u8>>,
    staged: &BTreeMap<String, Vec<u8>>,
) -> Result<(), Error> {
    for (path, before) in committed {
        let kept = staged.get(path).is_some_and(|after| after.starts_with(before));
        if !kept {
            return Err(Error::new(
                ErrorCode::AppendOnlyRequired,
                "paired memory updates may create or append, but cannot rewrite existing content",
            )
            .with_path(path.as_str()));
        }
    }
    Ok(())
}

/// Spec 02 §4.7: a source ref a staged block cites that its committed namesake did not is
/// new; it must resolve, name a trusted frame if it names a v2 frame, and belong to
/// `evidence` (this call's archived and declared sources) when there is such a set.
pub(crate) fn check_source_refs<L: SourceLookup>(
    units: &[Unit],
    baseline: &Baseline,
    sources: &SourceResolver<L>,
    evidence: Option<&BTreeSet<String>>,
) -> Result<(), Error> {
    for unit in units {
        let before: BTreeSet<&str> = baseline
            .unit(&unit.memory_id)
            .map(|old| old.source_refs.iter().map(String::as_str).collect())
            .unwrap_or_default();
        for reference in unit.source_refs.iter().filter(|r| !before.contains(r.as_str())) {
            // `source_policy` names which rule of §4.7 failed, so a front end can say
            // how to supply the evidence.
            let reject = |policy: &str, message: String| {
                Error::new(ErrorCode::InvalidTopicFormat, message)
                    .with_detail("memory_id", unit.memory_id.as_str())
                    .with_detail("source_ref", reference.as_str())
                    .with_detail("source_policy", policy)
            };
            let unreadable = |error: scriptorium_topic_markdown::SourceReadError| {
                Error::new(ErrorCode::Io, error.to_string()).with_path(error.path.clone())
            };
            if !sources.exists(reference).map_err(unreadable)? {
                return Err(reject("unknown", format!("unknown source: {reference}")));
            }
            match sources.trust(reference).map_err(unreadable)? {
                Some(TrustState::Trusted) | None => {}
                Some(_) => return Err(reject("pending", format!("source is pending; promote it first: {reference}"))),
            }
            if evidence.is_some_and(|set| !set.contains(reference)) {
                return Err(reject(
                    "not_evidence",
                    format!("source reference is not evidence of this transaction: {reference}"),
                ));
            }
        }
    }
    Ok(())
}

/// Refuse the whole update when a topic path it creates differs from another topic path
/// of the staged tree, or from a directory on the way to one, only by case or Unicode
/// normalization (`topics/Dave.md` next to `topics/dave.md`, NFC next to NFD): on a
/// case-insensitive or normalizing file system the two are one file, so one would
/// silently overwrite the other. Source archive paths are refused the same way (spec 01
/// §2.8). Pairs that are already committed are left alone: refusing them would block
/// every later update of a workspace that a case-sensitive system holds fine.
///
/// Errors: `INVALID_ARGUMENT` with the new path and detail `collides_with`.
pub(crate) fn check_topic_collisions<B>(
    committed: &BTreeMap<String, Vec<u8>>,
    staged: &BTreeMap<String, B>,
) -> Result<(), Error> {
    // Both maps are sorted: one merge walk finds the new paths, without a lookup per path.
    let mut committed_paths = committed.keys().peekable();
    let mut new = Vec::new();
    for path in staged.keys() {
        while committed_paths.next_if(|committed| *committed < path).is_some() {}
        if committed_paths.next_if(|committed| *committed == path).is_none() {
            new.push(path);
        }
    }
    if new.is_empty() {
        return Ok(());
    }
    let kept: Vec<&String> = staged.keys().filter(|path| committed.contains_key(*path)).collect();
    let mut seen: HashMap<String, &str> = HashMap::new();
    // Committed spellings first, so that the error names the new path.
    for path in kept.into_iter().chain(new.iter().copied()) {
        for prefix in prefixes(path) {
            let other = *seen.entry(collision_key(prefix)).or_insert(prefix);
            if other != prefix {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!("topic path collision: {prefix} and {other} differ only by case or normalization"),
                )
                .with_path(path.as_str())
                .with_detail("collides_with", other));
            }
        }
    }
    Ok(())
}

/// `topics`, `topics/a`, `topics/a/b.md` for `topics/a/b.md`.
fn prefixes(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').filter_map(|(at, _)| path.get(..at)).chain([path])
}

/// Every violation as one `INVALID_TOPIC_FORMAT`; the message is the first one's.
pub(crate) fn topic_error(violations: &Violations) -> Error {
    let message = violations.first().map_or_else(|| "invalid topic".to_owned(), |first| first.detail().to_owned());
    let list: Vec<Value> = violations
        .iter()
        .map(|v| json!({"code": v.code().as_str(), "file": v.file(), "line": v.line(), "detail": v.detail()}))
        .collect();
    let mut error = Error::new(ErrorCode::InvalidTopicFormat, message).with_detail("violations", list);
    if let Some(first) = violations.first() {
        error = error.with_path(first.file());
    }
    error
}
