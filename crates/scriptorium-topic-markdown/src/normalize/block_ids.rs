//! Steps 4 and 5: drop invented block ids, then mint ids for cited paragraphs.
//!
//! Step 4 deletes every line-final `[ \t]*\^ID` whose id was never committed (the
//! runtime assigns ids). Like the reference, a committed id followed by `-…` survives,
//! because its check is `\b`-based. Unlike the reference, which removes one id per
//! line, it repeats until the final id is a committed one, and it also strips ids that
//! end an inner line of a paragraph (left by joining two paragraphs): they are no
//! block's id, and keeping them would make a second normalization strip them, breaking
//! idempotence. Step 5 gives each paragraph that cites evidence
//! (not only `mem_` records) and has no final `^id` the id
//! `sha256("block|" + FILE_BASENAME + "|" + BODY + "|" + k)[:8]`, `BODY` being the
//! paragraph's lines joined by spaces and whitespace-collapsed.

use std::collections::BTreeMap;

use crate::document::ItemKind;
use crate::hash::{FastMap, FastSet};
use crate::normalize::{Baseline, Staged};
use crate::paths::basename;
use crate::syntax::{citations, has_spaced_final_id, line_final_id};
use crate::text::{collapse_whitespace, sha256_hex_prefix};

/// Whether a line-final id survives step 4.
fn survives(id: &str, baseline: &Baseline) -> bool {
    baseline.contains(id)
        || id.match_indices('-').any(|(at, _)| id.get(..at).is_some_and(|prefix| baseline.contains(prefix)))
}

pub(crate) fn drop_invented(files: &mut [Staged], baseline: &Baseline) {
    for file in files.iter_mut() {
        let inner: Vec<usize> = file
            .items()
            .iter()
            .filter(|item| matches!(item.kind, ItemKind::Paragraph(_)))
            .flat_map(|item| item.start..item.end.saturating_sub(1))
            .collect();
        let mut replacements = Vec::new();
        for (index, line) in file.lines().iter().enumerate() {
            let inside = inner.binary_search(&index).is_ok();
            let mut text = line.as_str();
            while let Some((cut, id)) = line_final_id(text) {
                if !inside && survives(id, baseline) {
                    break;
                }
                text = text.get(..cut).unwrap_or_default();
            }
            if text.len() != line.len() {
                replacements.push((index, text.to_owned()));
            }
        }
        file.replace_lines(replacements);
    }
}

/// The ids minted in step 5.
#[derive(Clone, Debug, Default)]
pub(crate) struct NewIds {
    /// `"<path>#<n>"` → id.
    pub(crate) map: BTreeMap<String, String>,
    /// Per file: (index of the paragraph's last line, id).
    pub(crate) by_file: FastMap<String, Vec<(usize, String)>>,
}

pub(crate) fn mint(files: &[Staged], baseline: &Baseline) -> NewIds {
    // Paragraphs that need an id, with their collapsed body; usually none.
    let mut wanted: Vec<(&Staged, usize, String)> = Vec::new();
    for file in files {
        for item in file.items() {
            if !matches!(item.kind, ItemKind::Paragraph(_)) {
                continue;
            }
            let Some(lines) = file.lines().get(item.start..item.end) else { continue };
            if lines.last().is_none_or(|last| has_spaced_final_id(last)) {
                continue;
            }
            let body = collapse_whitespace(&lines.join(" "));
            if !body.contains("[^") {
                continue;
            }
            let cited = citations(&body);
            if cited.iter().all(|c| c.id.starts_with("mem_")) {
                continue;
            }
            wanted.push((file, item.end - 1, body));
        }
    }
    let mut minted = NewIds::default();
    if wanted.is_empty() {
        return minted;
    }
    let mut used: FastSet<String> = baseline.id_iter().map(str::to_owned).collect();
    for file in files {
        used.extend(file.lines().iter().filter_map(|line| line_final_id(line)).map(|(_, id)| id.to_owned()));
    }
    let mut counts: FastMap<&str, usize> = FastMap::default();
    for (file, last_line, body) in wanted {
        let name = basename(&file.path);
        let id = (0u64..)
            .map(|k| sha256_hex_prefix(&format!("block|{name}|{body}|{k}"), 8))
            .find(|id| !used.contains(id))
            .unwrap_or_default();
        used.insert(id.clone());
        let count = counts.entry(file.path.as_str()).or_default();
        minted.map.insert(format!("{}#{count}", file.path), id.clone());
        *count += 1;
        minted.by_file.entry(file.path.clone()).or_default().push((last_line, id));
    }
    minted
}
