//! Step 3, orphan rebinding: a local-label citation with no definition in its file is
//! paired, in order, with the next definitions after its paragraph that no paragraph
//! cites, and renamed to them within the paragraph.

use crate::document::ItemKind;
use crate::hash::FastSet;
use crate::normalize::Staged;
use crate::normalize::evidence::is_local_label;

pub(crate) fn rebind(files: &mut [Staged]) {
    for file in files.iter_mut() {
        let items = file.items();
        // Most files cite no local label at all: nothing to rebind.
        let cites_local = items.iter().any(|item| match &item.kind {
            ItemKind::Paragraph(p) => p.cited().any(is_local_label),
            _ => false,
        });
        if !cites_local {
            continue;
        }
        let defined: FastSet<&str> = items
            .iter()
            .filter_map(|item| match &item.kind {
                ItemKind::Definition(d) => Some(d.id.as_str()),
                _ => None,
            })
            .collect();
        let cited: FastSet<&str> = items
            .iter()
            .filter_map(|item| match &item.kind {
                ItemKind::Paragraph(p) => Some(p.cited()),
                _ => None,
            })
            .flatten()
            .collect();
        let mut taken: FastSet<&str> = FastSet::default();
        let mut renames: Vec<(usize, usize, String, String)> = Vec::new();
        for item in items {
            let ItemKind::Paragraph(paragraph) = &item.kind else { continue };
            let mut orphans: Vec<&str> = Vec::new();
            for id in paragraph.cited() {
                if is_local_label(id) && !defined.contains(id) && !orphans.contains(&id) {
                    orphans.push(id);
                }
            }
            if orphans.is_empty() {
                continue;
            }
            let pool: Vec<&str> = items
                .iter()
                .filter(|other| other.start >= item.end)
                .filter_map(|other| match &other.kind {
                    ItemKind::Definition(d) if !cited.contains(d.id.as_str()) && !taken.contains(d.id.as_str()) => {
                        Some(d.id.as_str())
                    }
                    _ => None,
                })
                .collect();
            for (orphan, definition) in orphans.into_iter().zip(pool) {
                taken.insert(definition);
                renames.push((item.start, item.end, format!("[^{orphan}]"), format!("[^{definition}]")));
            }
        }
        let mut replacements: Vec<(usize, String)> = Vec::new();
        for (start, end, from, to) in renames {
            for index in start..end {
                let current = replacements
                    .iter()
                    .rev()
                    .find(|(at, _)| *at == index)
                    .map(|(_, text)| text.as_str())
                    .or_else(|| file.lines().get(index).map(String::as_str))
                    .unwrap_or_default();
                if current.contains(&from) {
                    let text = current.replace(&from, &to);
                    replacements.push((index, text));
                }
            }
        }
        file.replace_lines(replacements);
    }
}
