//! Step 3, orphan rebinding: a local-label citation with no definition in its file is
//! paired, in order, with the next definitions after its paragraph that no paragraph
//! cites, and renamed to them within the paragraph.

use std::collections::HashSet;

use crate::document::ItemKind;
use crate::normalize::Staged;
use crate::normalize::evidence::is_local_label;

pub(crate) fn rebind(files: &mut [Staged]) {
    for file in files.iter_mut() {
        let items = file.items();
        let defined: HashSet<&str> = items
            .iter()
            .filter_map(|item| match &item.kind {
                ItemKind::Definition(d) => Some(d.id.as_str()),
                _ => None,
            })
            .collect();
        let cited: HashSet<&str> = items
            .iter()
            .filter_map(|item| match &item.kind {
                ItemKind::Paragraph(p) => Some(p.cited()),
                _ => None,
            })
            .flatten()
            .collect();
        let mut taken: HashSet<&str> = HashSet::new();
        let mut renames: Vec<(usize, usize, String, String)> = Vec::new();
        for item in &items {
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
        for (start, end, from, to) in renames {
            for line in file.lines.iter_mut().take(end).skip(start) {
                if line.contains(&from) {
                    *line = line.replace(&from, &to);
                }
            }
        }
    }
}
