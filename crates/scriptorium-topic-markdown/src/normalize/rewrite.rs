//! Step 6, the per-file rewrite: local labels become their minted ids, new block ids
//! are appended, every definition line is re-rendered canonically (plain source
//! handles become relative links), whitespace before citations is deleted and a final
//! `^id` gets exactly one space before it. These line rewrites ignore fences, as the
//! reference's do.

use crate::definition::{SourceLink, parse_definition, render_definition, split_items};
use crate::normalize::block_ids::NewIds;
use crate::normalize::evidence::EvidenceIds;
use crate::normalize::{Staged, finish};
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
        for (index, line) in file.lines.iter_mut().enumerate() {
            let mut text = match parse_definition(line) {
                Some(definition) => {
                    let id = evidence.get(&definition.id).unwrap_or(&definition.id);
                    let links = canonical_links(&file.path, &definition.links, &definition.sources, sources);
                    render_definition(id, definition.time.as_str(), &links)
                }
                None => {
                    let renamed = if evidence.is_empty() { line.clone() } else { rename_labels(line, evidence) };
                    space_final_id(&tighten_citations(&renamed))
                }
            };
            if let Some((_, id)) = appended.iter().find(|(at, _)| *at == index) {
                text = format!("{} ^{id}", rstrip(&text));
            }
            if *line != text {
                *line = text;
            }
        }
        file.lines = finish(&file.lines);
    }
}

/// The links a definition is rendered with: plain-handle targets become relative
/// links to the source (label kept), other links stay as written; a link-less sources
/// part becomes one `[item](link)` per item.
fn canonical_links<L: SourceLookup>(
    topic_path: &str,
    links: &[SourceLink],
    raw_sources: &str,
    sources: &SourceResolver<L>,
) -> Vec<SourceLink> {
    let link_to = |handle: &str| sources.relative_link(topic_path, handle).ok().flatten();
    if links.is_empty() {
        return split_items(raw_sources)
            .map(|item| SourceLink {
                label: item.to_owned(),
                target: if is_plain_handle(item) { link_to(item) } else { None }.unwrap_or_else(|| item.to_owned()),
            })
            .collect();
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
        .collect()
}

/// Replace every mapped `[^label` (not followed by a footnote-id character).
fn rename_labels(line: &str, evidence: &EvidenceIds) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(pos) = rest.find("[^") {
        let (before, after) = rest.split_at(pos);
        out.push_str(before);
        let label_len = after.get(2..).map_or(0, |s| s.find(|c: char| !is_footnote_id_char(c)).unwrap_or(s.len()));
        let label = after.get(2..2 + label_len).unwrap_or_default();
        match evidence.get(label) {
            Some(id) if label_len > 0 => {
                out.push_str("[^");
                out.push_str(id);
                rest = after.get(2 + label_len..).unwrap_or_default();
            }
            _ => {
                out.push_str("[^");
                rest = after.get(2..).unwrap_or_default();
            }
        }
    }
    out.push_str(rest);
    out
}

/// Delete `[ \t]+` directly before each `[^FID]`.
fn tighten_citations(line: &str) -> String {
    if !line.contains("[^") {
        return line.to_owned();
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
    out
}

/// Rewrite a line-final `[ \t]*\^ID\s*$` as `" ^ID"`.
fn space_final_id(line: &str) -> String {
    match line_final_id(line) {
        Some((cut, id)) => format!("{} ^{id}", line.get(..cut).unwrap_or_default()),
        None => line.to_owned(),
    }
}
