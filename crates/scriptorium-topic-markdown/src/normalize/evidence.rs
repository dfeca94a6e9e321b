//! Step 2, evidence ids: every local footnote label (`e<digits>`,
//! `new-evidence-<x>`) gets `e-` + 10 hex of
//! `sha256("evidence|" + WHEN + "|" + SEED + "|" + k)`, the smallest `k` giving an
//! unused id. One mapping per label across all files: the first definition wins.

use std::collections::BTreeMap;

use crate::document::ItemKind;
use crate::hash::FastSet;
use crate::normalize::Staged;
use crate::text::sha256_hex_prefix;

/// Local label → minted id.
#[derive(Clone, Debug, Default)]
pub(crate) struct EvidenceIds {
    map: BTreeMap<String, String>,
}

impl EvidenceIds {
    pub(crate) fn get(&self, label: &str) -> Option<&str> {
        self.map.get(label).map(String::as_str)
    }

    /// The local labels that get ids, in label order.
    pub(crate) fn labels(&self) -> impl Iterator<Item = &String> {
        self.map.keys()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub(crate) fn into_map(self) -> BTreeMap<String, String> {
        self.map
    }
}

/// Whether a footnote id is a label the runtime replaces: `e\d+` or
/// `new-evidence-[A-Za-z0-9-]+`.
pub(crate) fn is_local_label(id: &str) -> bool {
    let digits = id.strip_prefix('e').is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    let placeholder = id
        .strip_prefix("new-evidence-")
        .is_some_and(|rest| !rest.is_empty() && rest.chars().all(crate::syntax::is_block_id_char));
    digits || placeholder
}

/// Mint ids for every local label defined in `files` (sorted), in file and line order.
/// `also_used` tells ids defined in files of the tree that are not in `files` (the
/// unchanged files of an incremental normalization; none for a whole tree).
pub(crate) fn mint(files: &[Staged], also_used: &dyn Fn(&str) -> bool) -> EvidenceIds {
    let definitions = || {
        files.iter().flat_map(Staged::items).filter_map(|item| match &item.kind {
            ItemKind::Definition(definition) => Some(definition),
            _ => None,
        })
    };
    // The set of ids in use is only needed once there is a label to mint for.
    let mut used: Option<FastSet<String>> = None;
    let mut ids = EvidenceIds::default();
    for definition in definitions() {
        if !is_local_label(&definition.id) || ids.map.contains_key(&definition.id) {
            continue;
        }
        let used = used
            .get_or_insert_with(|| definitions().filter(|d| !is_local_label(&d.id)).map(|d| d.id.clone()).collect());
        let seed = definition.seed_items().join("|");
        let when = definition.time.as_str();
        let id = (0u64..)
            .map(|k| format!("e-{}", sha256_hex_prefix(&format!("evidence|{when}|{seed}|{k}"), 10)))
            .find(|id| !used.contains(id) && !also_used(id))
            .unwrap_or_default();
        used.insert(id.clone());
        ids.map.insert(definition.id.clone(), id);
    }
    ids
}
