//! Step 9's link rewrite (the install-time pass): every definition link that
//! resolves gets the canonical relative path of its source, and every block link gets
//! the current relative path of the file holding its target.

use std::collections::{BTreeMap, HashMap};

use crate::definition::{SourceLink, render_definition};
use crate::document::{ItemKind, render_lines, scan};
use crate::paths::{dirname, quote_link_path, relpath};
use crate::source::{SourceLookup, SourceResolver};
use crate::syntax::block_links;
use crate::text::split_lines;
use crate::unit::Unit;

/// Rewrite source and block links in `files` (workspace-relative path → bytes) in
/// place, given the tree's `units`. Returns whether any file changed. Files that are
/// not UTF-8 are left alone.
pub fn rewrite_links<L: SourceLookup>(
    files: &mut BTreeMap<String, Vec<u8>>,
    units: &[Unit],
    sources: &SourceResolver<L>,
) -> bool {
    let homes: HashMap<&str, &str> = units.iter().map(|u| (u.memory_id.as_str(), u.path.as_str())).collect();
    let mut changed = false;
    for (path, bytes) in files.iter_mut() {
        let Ok(text) = std::str::from_utf8(bytes) else { continue };
        let mut lines: Vec<String> = split_lines(text).into_iter().map(str::to_owned).collect();
        let mut touched = false;
        for item in scan(&lines) {
            match item.kind {
                ItemKind::Definition(definition) => {
                    let links: Vec<SourceLink> = definition
                        .links
                        .iter()
                        .map(|link| {
                            let relative = sources
                                .resolve_target(path, &link.target)
                                .ok()
                                .flatten()
                                .and_then(|id| sources.relative_link(path, &id).ok().flatten());
                            match relative {
                                Some(target) => SourceLink { label: link.label.clone(), target },
                                None => link.clone(),
                            }
                        })
                        .collect();
                    if links != definition.links
                        && let Some(line) = lines.get_mut(item.start)
                    {
                        *line = render_definition(&definition.id, definition.time.as_str(), &links);
                        touched = true;
                    }
                }
                ItemKind::Paragraph(_) => {
                    for line in lines.iter_mut().take(item.end).skip(item.start) {
                        if let Some(new) = rewrite_block_links(line, path, &homes) {
                            *line = new;
                            touched = true;
                        }
                    }
                }
                _ => {}
            }
        }
        if touched {
            let rendered = render_lines(&lines).into_bytes();
            if rendered != *bytes {
                *bytes = rendered;
                changed = true;
            }
        }
    }
    changed
}

/// The line with each block link's path replaced by the path of the file holding its
/// target, or `None` when nothing changes.
fn rewrite_block_links(line: &str, path: &str, homes: &HashMap<&str, &str>) -> Option<String> {
    let found = block_links(line);
    if found.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(line.len());
    let mut at = 0;
    for link in found {
        let Some(home) = homes.get(link.target) else { continue };
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
