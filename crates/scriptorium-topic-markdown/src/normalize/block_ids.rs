//! Steps 4 and 5: drop invented block ids, then mint ids for cited paragraphs.
//!
//! Step 4 deletes every line-final `[ \t]*\^ID` whose id was never committed (the
//! runtime assigns ids). Like the reference, a committed id followed by `-…` survives,
//! because its check is `\b`-based. Step 5 gives each paragraph that cites evidence
//! (not only `mem_` records) and has no final `^id` the id
//! `sha256("block|" + FILE_BASENAME + "|" + BODY + "|" + k)[:8]`, `BODY` being the
//! paragraph's lines joined by spaces and whitespace-collapsed.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::document::ItemKind;
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
        for line in file.lines.iter_mut() {
            if let Some((cut, id)) = line_final_id(line)
                && !survives(id, baseline)
            {
                line.truncate(cut);
            }
        }
    }
}

/// The ids minted in step 5.
#[derive(Clone, Debug, Default)]
pub(crate) struct NewIds {
    /// `"<path>#<n>"` → id.
    pub(crate) map: BTreeMap<String, String>,
    /// Per file: (index of the paragraph's last line, id).
    pub(crate) by_file: HashMap<String, Vec<(usize, String)>>,
}

pub(crate) fn mint(files: &[Staged], baseline: &Baseline) -> NewIds {
    let mut used: HashSet<String> = baseline.ids().into_iter().map(str::to_owned).collect();
    for file in files {
        used.extend(file.lines.iter().filter_map(|line| line_final_id(line)).map(|(_, id)| id.to_owned()));
    }
    let mut minted = NewIds::default();
    for file in files {
        let name = basename(&file.path);
        let mut count = 0;
        for item in file.items() {
            if !matches!(item.kind, ItemKind::Paragraph(_)) {
                continue;
            }
            let Some(lines) = file.lines.get(item.start..item.end) else { continue };
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
            let id = (0u64..)
                .map(|k| sha256_hex_prefix(&format!("block|{name}|{body}|{k}"), 8))
                .find(|id| !used.contains(id))
                .unwrap_or_default();
            used.insert(id.clone());
            minted.map.insert(format!("{}#{count}", file.path), id.clone());
            minted.by_file.entry(file.path.clone()).or_default().push((item.end - 1, id));
            count += 1;
        }
    }
    minted
}
