//! Step 1, relocation repair: a committed block moved into another file (for example
//! with a shell `mv`) keeps its sources even though its definitions' relative links
//! now point nowhere. Such definitions are re-linked to the committed source ids.

use crate::definition::{Definition, SourceLink, render_definition};
use crate::document::ItemKind;
use crate::hash::FastMap;
use crate::normalize::{Baseline, Staged};
use crate::source::{SourceLookup, SourceResolver};

/// Re-link the definitions of relocated blocks whose links no longer resolve and whose
/// link count equals the committed annotation's source count (labels kept; the
/// targets become plain source ids, which the rewrite step turns into links).
pub(crate) fn repair<L: SourceLookup>(files: &mut [Staged], baseline: &Baseline, sources: &SourceResolver<L>) {
    for file in files.iter_mut() {
        let items = file.items();
        let mut definitions: FastMap<&str, (usize, &Definition)> = FastMap::default();
        for item in items {
            if let ItemKind::Definition(definition) = &item.kind {
                definitions.entry(definition.id.as_str()).or_insert((item.start, definition));
            }
        }
        let mut replacements: Vec<(usize, String)> = Vec::new();
        for item in items {
            let ItemKind::Paragraph(paragraph) = &item.kind else { continue };
            for id in &paragraph.ids {
                let Some(old) = baseline.unit(id) else { continue };
                if old.path == file.path {
                    continue;
                }
                for citation in paragraph.cited() {
                    let Some(&(line, definition)) = definitions.get(citation) else { continue };
                    let Some(annotation) = old.evidence.iter().find(|e| e.citation_id == citation) else { continue };
                    if definition.links.len() != annotation.source_refs.len()
                        || replacements.iter().any(|r| r.0 == line)
                    {
                        continue;
                    }
                    let broken = definition
                        .links
                        .iter()
                        .any(|link| !matches!(sources.resolve_target(&file.path, &link.target), Ok(Some(_))));
                    if !broken {
                        continue;
                    }
                    let links: Vec<SourceLink> = definition
                        .links
                        .iter()
                        .zip(&annotation.source_refs)
                        .map(|(link, id)| SourceLink { label: link.label.clone(), target: id.clone() })
                        .collect();
                    replacements.push((line, render_definition(&definition.id, definition.time.as_str(), &links)));
                }
            }
        }
        file.replace_lines(replacements);
    }
}
