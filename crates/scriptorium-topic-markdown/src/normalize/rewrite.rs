//! Step 6, the per-file rewrite: local labels become their minted ids, new block ids
//! are appended, every definition line is re-rendered canonically (plain source
//! handles become relative links), whitespace before citations is deleted and a final
//! `^id` gets exactly one space before it. These line rewrites ignore fences, as the
//! reference's do.

use std::borrow::Cow;

use crate::definition::{Definition, SourceLink, parse_definition, render_definition, split_items};
use crate::document::ItemKind;
use crate::error::{ErrorCode, Violation};
use crate::normalize::block_ids::NewIds;
use crate::normalize::evidence::EvidenceIds;
use crate::normalize::{Staged, finish, needs_finish};
use crate::source::{SourceLookup, SourceResolver, is_plain_handle};
use crate::syntax::{footnote_ref, is_footnote_id_char, line_final_id};
use crate::text::{rstrip, strip};

pub(crate) fn rewrite<L: SourceLookup>(
    files: &mut [Staged],
    evidence: &EvidenceIds,
    new_ids: &NewIds,
    sources: &SourceResolver<L>,
) {
    for file in files.iter_mut() {
        let appended = new_ids.by_file.get(&file.path).map(Vec::as_slice).unwrap_or_default();
        let mut replacements: Vec<(usize, String)> = Vec::new();
        for item in file.items() {
            for index in item.start..item.end {
                let line = file.lines().get(index).map(String::as_str).unwrap_or_default();
                // Definitions are known from the scan, except inside fences, where the
                // reference's line rewrite still sees them.
                let parsed;
                let definition = match &item.kind {
                    ItemKind::Definition(definition) => Some(definition),
                    ItemKind::Fence => {
                        parsed = parse_definition(line);
                        parsed.as_ref()
                    }
                    _ => None,
                };
                let mut text: Cow<'_, str> = match definition {
                    Some(definition) => {
                        let id = evidence.get(&definition.id).unwrap_or(&definition.id);
                        canonical_definition(line, id, definition, &file.path, sources)
                    }
                    None => tidy_line(line, evidence),
                };
                if let Some((_, id)) = appended.iter().find(|(at, _)| *at == index) {
                    text = Cow::Owned(format!("{} ^{id}", rstrip(&text)));
                }
                if let Cow::Owned(new) = text {
                    replacements.push((index, new));
                }
            }
        }
        file.replace_lines(replacements);
        if needs_finish(file.lines()) {
            let finished = finish(file.lines().to_vec());
            file.set_lines(finished);
        }
    }
}

/// A plain-handle link target left after the rewrite named no archived source: the
/// rewrite turns every handle that locates into a relative link. Such a target is an
/// `invalid source target` here, at normalization, as in the reference; the strict
/// parse alone would accept the handle as its own id and install a dangling citation.
pub(crate) fn unlinked_handles<L: SourceLookup>(files: &[Staged], sources: &SourceResolver<L>) -> Vec<Violation> {
    let mut violations = Vec::new();
    for file in files {
        for item in file.items() {
            let ItemKind::Definition(definition) = &item.kind else { continue };
            for link in &definition.links {
                violations.extend(unlocated_handle(sources, &file.path, &link.target, Some(item.line_number())));
            }
        }
    }
    violations
}

/// The violation normalization reports for the citation target `target` in the topic
/// `topic_path`: `TOPIC_INVALID_SOURCE_TARGET` when it is a plain source handle (`D1:2`,
/// a v2 source id) that locates no archived source, `TOPIC_SOURCE_READ_FAILED` when the
/// archives cannot be read; `None` for any other target, which the strict parse judges.
///
/// `check` calls this on a committed tree so that it names such a citation with the
/// code an install refuses it with.
pub fn unlocated_handle<L: SourceLookup>(
    sources: &SourceResolver<L>,
    topic_path: &str,
    target: &str,
    line: Option<usize>,
) -> Option<Violation> {
    let handle = strip(target);
    if !is_plain_handle(handle) {
        return None;
    }
    let (code, detail) = match sources.relative_link(topic_path, handle) {
        Ok(Some(_)) => return None,
        Ok(None) => (ErrorCode::InvalidSourceTarget, format!("invalid source target: {target}")),
        Err(e) => (ErrorCode::SourceReadFailed, e.to_string()),
    };
    Some(Violation::new(code, topic_path, line, detail))
}

/// A definition line rendered canonically (borrowed when it already is).
///
/// A rendered link `[LABEL](TARGET)` reads back as itself unless the label holds `]` or
/// the target `)` (a link-less item such as `x](y)`): the line then parses as other
/// links, which the next normalization would render differently. Such a line is
/// re-parsed and re-rendered until it is stable, so normalizing stays idempotent.
fn canonical_definition<'a, L: SourceLookup>(
    line: &'a str,
    id: &str,
    definition: &Definition,
    path: &str,
    sources: &SourceResolver<L>,
) -> Cow<'a, str> {
    let links = canonical_links(path, &definition.links, &definition.sources, sources);
    if is_rendered_as(line, id, definition.time.as_str(), &links) {
        return Cow::Borrowed(line);
    }
    let mut rendered = render_definition(id, definition.time.as_str(), &links);
    let mut unstable = links.iter().any(|link| link.label.contains(']') || link.target.contains(')'));
    // Each round keeps only text inside links, so the line shrinks; a few rounds suffice.
    for _ in 0..8 {
        if !unstable {
            break;
        }
        let Some(again) = parse_definition(&rendered) else { break };
        let links = canonical_links(path, &again.links, &again.sources, sources);
        let next = render_definition(&again.id, again.time.as_str(), &links);
        unstable = next != rendered;
        rendered = next;
    }
    if rendered == line { Cow::Borrowed(line) } else { Cow::Owned(rendered) }
}

/// Whether `line` is exactly `render_definition(id, time, links)`, without building it.
fn is_rendered_as(line: &str, id: &str, time: &str, links: &[SourceLink]) -> bool {
    let Some(rest) = line.strip_prefix("[^").and_then(|r| r.strip_prefix(id)) else { return false };
    let Some(rest) = rest.strip_prefix("]: Time: `").and_then(|r| r.strip_prefix(time)) else { return false };
    let Some(mut rest) = rest.strip_prefix("`; Sources: ") else { return false };
    for (n, link) in links.iter().enumerate() {
        let after = if n > 0 { rest.strip_prefix(", ") } else { Some(rest) };
        let after = after
            .and_then(|r| r.strip_prefix('['))
            .and_then(|r| r.strip_prefix(link.label.as_str()))
            .and_then(|r| r.strip_prefix("]("))
            .and_then(|r| r.strip_prefix(link.target.as_str()))
            .and_then(|r| r.strip_prefix(')'));
        match after {
            Some(after) => rest = after,
            None => return false,
        }
    }
    rest.is_empty()
}

/// A line that is not a definition: labels renamed, spaces before citations removed,
/// one space before a final `^id`.
fn tidy_line<'a>(line: &'a str, evidence: &EvidenceIds) -> Cow<'a, str> {
    let renamed = if evidence.is_empty() { Cow::Borrowed(line) } else { rename_labels(line, evidence) };
    let tight = match tighten_citations(&renamed) {
        Cow::Borrowed(_) => renamed,
        Cow::Owned(tight) => Cow::Owned(tight),
    };
    match space_final_id(&tight) {
        Cow::Borrowed(_) => tight,
        Cow::Owned(spaced) => Cow::Owned(spaced),
    }
}

/// The links a definition is rendered with: plain-handle targets become relative
/// links to the source (label kept), other links stay as written; a link-less sources
/// part becomes one `[item](link)` per item.
fn canonical_links<'a, L: SourceLookup>(
    topic_path: &str,
    links: &'a [SourceLink],
    raw_sources: &str,
    sources: &SourceResolver<L>,
) -> Cow<'a, [SourceLink]> {
    let link_to = |handle: &str| sources.relative_link(topic_path, handle).ok().flatten();
    // Usually every link is already a path: nothing to copy.
    if !links.is_empty() && !links.iter().any(|link| is_plain_handle(strip(&link.target))) {
        return Cow::Borrowed(links);
    }
    if links.is_empty() {
        return split_items(raw_sources)
            .map(|item| SourceLink {
                label: item.to_owned(),
                target: if is_plain_handle(item) { link_to(item) } else { None }.unwrap_or_else(|| item.to_owned()),
            })
            .collect::<Vec<_>>()
            .into();
    }
    links
        .iter()
        .map(|link| {
            let target = strip(&link.target);
            match is_plain_handle(target).then(|| link_to(target)).flatten() {
                Some(relative) => SourceLink { label: link.label.clone(), target: relative },
                None => link.clone(),
            }
        })
        .collect::<Vec<_>>()
        .into()
}

/// Replace every mapped `[^label` (not followed by a footnote-id character).
fn rename_labels<'a>(line: &'a str, evidence: &EvidenceIds) -> Cow<'a, str> {
    if !line.contains("[^") {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    let mut changed = false;
    while let Some(pos) = rest.find("[^") {
        let (before, after) = rest.split_at(pos);
        out.push_str(before);
        let label_len = after.get(2..).map_or(0, |s| s.find(|c: char| !is_footnote_id_char(c)).unwrap_or(s.len()));
        let label = after.get(2..2 + label_len).unwrap_or_default();
        out.push_str("[^");
        match evidence.get(label) {
            Some(id) if label_len > 0 => {
                out.push_str(id);
                changed = true;
                rest = after.get(2 + label_len..).unwrap_or_default();
            }
            _ => rest = after.get(2..).unwrap_or_default(),
        }
    }
    out.push_str(rest);
    if changed { Cow::Owned(out) } else { Cow::Borrowed(line) }
}

/// Delete `[ \t]+` directly before each `[^FID]`.
fn tighten_citations(line: &str) -> Cow<'_, str> {
    if !line.contains(" [^") && !line.contains("\t[^") {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(pos) = rest.find("[^") {
        let (before, after) = rest.split_at(pos);
        if footnote_ref(after).is_ok() {
            out.push_str(before.trim_end_matches([' ', '\t']));
        } else {
            out.push_str(before);
        }
        out.push_str("[^");
        rest = after.get(2..).unwrap_or_default();
    }
    out.push_str(rest);
    if out == line { Cow::Borrowed(line) } else { Cow::Owned(out) }
}

/// Rewrite a line-final `[ \t]*\^ID\s*$` as `" ^ID"`.
fn space_final_id(line: &str) -> Cow<'_, str> {
    match line_final_id(line) {
        Some((cut, id)) => {
            let head = line.get(..cut).unwrap_or_default();
            if line.len() == cut + 2 + id.len() && line.get(cut..cut + 2) == Some(" ^") {
                Cow::Borrowed(line)
            } else {
                Cow::Owned(format!("{head} ^{id}"))
            }
        }
        None => Cow::Borrowed(line),
    }
}
