//! Step 7, pruning (spec 01 §6.8) preceded by the decision-Q1 check.
//!
//! The reference silently drops uncited prose in record-free sections and files.
//! Here every paragraph must be a record (a block, or cite a definition of its file),
//! and nothing but blank lines and headings may be pruned: anything else that pruning
//! would drop is reported instead of deleted. Heading-only and blank topics are still
//! removed.

use crate::document::{Item, ItemKind};
use crate::error::{ErrorCode, Violation};
use crate::hash::FastSet;
use crate::normalize::{Staged, finish, needs_finish};
use crate::paths::topic_relative;

/// Prune every file; returns the paths of deleted files and the Q1 violations.
pub(crate) fn prune(files: &mut Vec<Staged>) -> (Vec<String>, Vec<Violation>) {
    let mut deleted = Vec::new();
    let mut violations = Vec::new();
    files.retain_mut(|file| {
        let keep = prune_file(file, &mut violations);
        if !keep {
            deleted.push(file.path.clone());
        }
        keep
    });
    (deleted, violations)
}

/// Prune one file in place; `false` when the file must be deleted.
fn prune_file(file: &mut Staged, violations: &mut Vec<Violation>) -> bool {
    let items = file.items();
    let path = file.path.as_str();
    let defined: FastSet<&str> = items
        .iter()
        .filter_map(|item| match &item.kind {
            ItemKind::Definition(d) => Some(d.id.as_str()),
            _ => None,
        })
        .collect();
    let mut records: Vec<&Item> = Vec::new();
    for item in items {
        let ItemKind::Paragraph(paragraph) = &item.kind else { continue };
        if !paragraph.ids.is_empty() || paragraph.cited().any(|id| defined.contains(id)) {
            records.push(item);
        } else {
            let code = if paragraph.claims.is_empty() { ErrorCode::UncitedText } else { ErrorCode::MissingBlockId };
            let detail = format!("memory block ID required: {}", topic_relative(path));
            violations.push(Violation::new(code, path, Some(item.line_number()), detail));
        }
    }
    let referenced: FastSet<&str> = records
        .iter()
        .filter_map(|item| match &item.kind {
            ItemKind::Paragraph(p) => Some(p.cited()),
            _ => None,
        })
        .flatten()
        .collect();
    // Every prefix of a record's heading path: a section is active when its path is
    // one. A set, not a scan of the records per heading, which is quadratic in a file
    // of a hundred thousand sections.
    let mut record_prefixes: FastSet<&[String]> = FastSet::default();
    let mut last: Option<&[String]> = None;
    for item in &records {
        let ItemKind::Paragraph(p) = &item.kind else { continue };
        let headings = p.headings.as_slice();
        // Neighbouring paragraphs mostly share their section.
        if last == Some(headings) {
            continue;
        }
        last = Some(headings);
        for end in 1..=headings.len() {
            if let Some(prefix) = headings.get(..end) {
                record_prefixes.insert(prefix);
            }
        }
    }

    // A file without records is deleted whole; otherwise a line survives while its
    // section (or an enclosing one) holds a record.
    let has_records = !records.is_empty();
    let mut active = true;
    let mut stack: Vec<String> = Vec::new();
    let mut kept: Vec<std::ops::Range<usize>> = Vec::new();
    for item in items {
        let keep = match &item.kind {
            ItemKind::Heading { level, text } => {
                stack.truncate(level - 1);
                stack.push(text.clone());
                active = record_prefixes.contains(stack.as_slice());
                active
            }
            ItemKind::Definition(d) => has_records && (active || referenced.contains(d.id.as_str())),
            _ => has_records && active,
        };
        if keep {
            kept.push(item.start..item.end);
            continue;
        }
        let line = Some(item.line_number());
        match &item.kind {
            ItemKind::Definition(d) => {
                let detail = format!("unused footnote definition: {}", d.id);
                violations.push(Violation::new(ErrorCode::UnusedFootnote, path, line, detail));
            }
            ItemKind::Fence | ItemKind::Markup => {
                let detail = format!("uncited text would be removed: {}", topic_relative(path));
                violations.push(Violation::new(ErrorCode::UncitedText, path, line, detail));
            }
            // Blank lines and headings may go; paragraphs were reported above.
            _ => {}
        }
    }
    if !has_records {
        return false;
    }
    let all_kept = kept.iter().map(ExactSizeIterator::len).sum::<usize>() == file.lines().len();
    if !all_kept || needs_finish(file.lines()) {
        let lines: Vec<String> =
            kept.into_iter().flat_map(|range| file.lines().get(range).unwrap_or_default().to_vec()).collect();
        file.set_lines(finish(lines));
    }
    true
}
