//! Step 9's link rewrite (the install-time pass): every definition link that
//! resolves gets the canonical relative path of its source, and every block link gets
//! the current relative path of the file holding its target.

use std::collections::BTreeMap;

use crate::definition::{SourceLink, render_definition};
use crate::document::{ItemKind, TopicDocument, render_lines};
use crate::hash::FastMap;
use crate::paths::{dirname, quote_link_path, relpath};
use crate::source::{SourceLookup, SourceResolver};
use crate::syntax::block_links;
use crate::unit::Unit;

/// Rewrite source and block links in `files` (workspace-relative path → bytes) in
/// place, given the tree's `units`. Returns whether any file changed. Files that are
/// not UTF-8 are left alone.
pub fn rewrite_links<L: SourceLookup>(
    files: &mut BTreeMap<String, Vec<u8>>,
    units: &[Unit],
    sources: &SourceResolver<L>,
) -> bool {
    let homes = homes(units);
    let home = |id: &str| homes.get(id).copied();
    let mut changed = false;
    for (path, bytes) in files.iter_mut() {
        let Ok(text) = std::str::from_utf8(bytes) else { continue };
        let document = TopicDocument::from_text(path, text);
        if let Some(lines) = rewrite_document(&document, &home, sources) {
            let rendered = render_lines(&lines).into_bytes();
            if rendered != *bytes {
                *bytes = rendered;
                changed = true;
            }
        }
    }
    changed
}

/// [`rewrite_links`] on parsed documents, `home` telling which file holds a unit id;
/// changed documents are rebuilt.
pub(crate) fn rewrite_documents<'h, L: SourceLookup>(
    documents: &mut [TopicDocument],
    home: &dyn Fn(&str) -> Option<&'h str>,
    sources: &SourceResolver<L>,
) -> bool {
    let mut changed = false;
    for document in documents.iter_mut() {
        if let Some(lines) = rewrite_document(document, home, sources) {
            *document = TopicDocument::from_lines(document.path(), lines);
            changed = true;
        }
    }
    changed
}

/// Which file holds each unit id.
pub(crate) fn homes(units: &[Unit]) -> FastMap<&str, &str> {
    units.iter().map(|u| (u.memory_id.as_str(), u.path.as_str())).collect()
}

/// The document's lines with canonical links, or `None` when nothing changes.
fn rewrite_document<'h, L: SourceLookup>(
    document: &TopicDocument,
    home: &dyn Fn(&str) -> Option<&'h str>,
    sources: &SourceResolver<L>,
) -> Option<Vec<String>> {
    let path = document.path();
    let mut replacements: Vec<(usize, String)> = Vec::new();
    for item in document.items() {
        match &item.kind {
            ItemKind::Definition(definition) => {
                let mut links: Vec<SourceLink> = Vec::new();
                for (n, link) in definition.links.iter().enumerate() {
                    let relative = match sources.is_canonical(path, &link.target) {
                        Ok(Some(false)) => match sources.resolve_with_link(path, &link.target) {
                            Ok(Some(resolved)) => sources.relative_link(path, &resolved.id).ok().flatten(),
                            _ => None,
                        },
                        _ => None,
                    };
                    match relative {
                        Some(target) if target != link.target => {
                            if links.is_empty() {
                                links.extend(definition.links.iter().take(n).cloned());
                            }
                            links.push(SourceLink { label: link.label.clone(), target });
                        }
                        _ if !links.is_empty() => links.push(link.clone()),
                        _ => {}
                    }
                }
                if !links.is_empty() {
                    replacements
                        .push((item.start, render_definition(&definition.id, definition.time.as_str(), &links)));
                }
            }
            ItemKind::Paragraph(_) => {
                for index in item.start..item.end {
                    let line = document.lines().get(index).map(String::as_str).unwrap_or_default();
                    if let Some(new) = rewrite_block_links(line, path, home) {
                        replacements.push((index, new));
                    }
                }
            }
            _ => {}
        }
    }
    if replacements.is_empty() {
        return None;
    }
    let mut lines = document.lines().to_vec();
    for (index, text) in replacements {
        if let Some(slot) = lines.get_mut(index) {
            *slot = text;
        }
    }
    Some(lines)
}

/// The line with each block link's path replaced by the path of the file holding its
/// target, or `None` when nothing changes.
fn rewrite_block_links<'h>(line: &str, path: &str, home: &dyn Fn(&str) -> Option<&'h str>) -> Option<String> {
    // Every block link holds `#^`; most lines have none.
    if !line.contains("#^") {
        return None;
    }
    let found = block_links(line);
    if found.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(line.len());
    let mut at = 0;
    for link in found {
        let Some(home) = home(link.target) else { continue };
        let current = line.get(link.path_start..link.path_end).unwrap_or_default();
        let wanted = quote_link_path(&relpath(home, dirname(path)));
        if current == wanted {
            continue;
        }
        out.push_str(line.get(at..link.path_start).unwrap_or_default());
        out.push_str(&wanted);
        at = link.path_end;
    }
    if at == 0 {
        return None;
    }
    out.push_str(line.get(at..).unwrap_or_default());
    Some(out)
}
