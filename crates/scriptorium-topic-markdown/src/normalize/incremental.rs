//! Normalization of the changed files only ([`normalize_changed`]), with the result
//! [`normalize`](super::normalize) gives for the whole tree, restricted to those files.
//!
//! Every step of the pipeline works file by file once it has its context; the context
//! is what crosses files: the evidence ids in use (step 2), the block ids in use
//! (step 5), label renames in any line (step 6), duplicate and removed ids and dangling
//! links (step 8), and the home of each linked block (step 9). The [`CommittedIndex`]
//! keeps, per committed file, what those steps can see of it. The unchanged files are
//! normal, so the pipeline leaves them as they are unless the changed files reach into
//! them: a renamed label they mention, a moved block they link to, a block they link to
//! that is removed. In those cases, and whenever a step reports a violation (whose
//! order only the whole-tree run defines), [`normalize_changed`] gives up and the caller
//! runs the whole tree.
//!
//! Block ids minted in step 5 need no index: a line-final id of a normal file either is
//! committed (so in the baseline) or survived step 4 by a committed prefix before a `-`,
//! and a minted id (8 hex digits) holds no `-`.

use std::collections::{BTreeMap, BTreeSet};

use crate::definition::{parse_definition, split_items};
use crate::document::{ItemKind, TopicDocument};
use crate::hash::{FastMap, FastSet};
use crate::normalize::contract::topic_link_violations;
use crate::normalize::evidence::is_local_label;
use crate::normalize::{
    Baseline, NormalizeOptions, Normalized, Staged, block_ids, evidence, links, orphans, prune, relocation, rewrite,
};
use crate::paths::{component_cmp, is_topic_path};
use crate::source::{SourceLookup, SourceResolver};
use crate::syntax::{block_links, is_footnote_id_char};
use crate::text::strip;
use crate::tree::{Mode, parse_documents};
use crate::unit::Unit;

/// What the other files' normalization can see of one committed file (each list
/// sorted, without repeats).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Facts {
    unit_ids: Vec<String>,
    definition_ids: Vec<String>,
    relation_targets: Vec<String>,
    linked_ids: Vec<String>,
    local_labels: Vec<String>,
    cited_sources: Vec<String>,
}

/// How many committed files hold each id, for each kind of fact.
#[derive(Clone, Debug, Default)]
struct Counts {
    unit_ids: FastMap<String, usize>,
    definition_ids: FastMap<String, usize>,
    relation_targets: FastMap<String, usize>,
    linked_ids: FastMap<String, usize>,
    local_labels: FastMap<String, usize>,
    cited_sources: FastMap<String, usize>,
}

/// The committed topic tree as [`normalize_changed`] needs it: per file, the unit ids,
/// footnote definition ids, block link targets and local labels mentioned, which the
/// normalization of other files can see. Kept up to date file by file.
///
/// ```
/// use std::collections::BTreeMap;
///
/// use scriptorium_topic_markdown::{
///     Baseline, CommittedIndex, MemorySources, Mode, NormalizeOptions, SourceResolver, normalize_changed,
///     parse_tree,
/// };
///
/// let pets = "# Pets\n\nA cat.[^e-1] ^c0c0c0c0\n\n[^e-1]: Time: `2024-01-02`; Sources: [D1:1](D1:1)\n";
/// let d1 = "# D1\n\n<a id=\"d1-1\"></a>\n[2024] user: a cat [D1:1]\n\n<a id=\"d1-2\"></a>\n[2024] user: a dog [D1:2]\n";
/// let sources = SourceResolver::new(MemorySources::from_iter([("sources/D1.md", d1)]));
/// let (documents, units, _) = parse_tree([("topics/pets.md", pets)], &sources, Mode::Lenient).into_parts();
/// let mut index = CommittedIndex::new();
/// index.insert(&documents[0], &units);
/// let baseline = Baseline::from_units(units);
///
/// let note = "# Notes\n\nA dog.[^e1]\n\n[^e1]: Time: `2024-01-03`; Sources: [D1:2](D1:2)\n";
/// let changed = BTreeMap::from([("topics/notes.md".to_owned(), Some(note.as_bytes().to_vec()))]);
/// let options = NormalizeOptions::default();
/// let no_new_sources = Default::default();
/// let normalized =
///     normalize_changed(&index, &changed, &baseline, &sources, &no_new_sources, &options).expect("bounded");
/// assert_eq!(normalized.files.len(), 1, "only the changed file");
/// assert!(normalized.block_id_map.contains_key("topics/notes.md#0"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct CommittedIndex {
    files: BTreeMap<String, Facts>,
    counts: Counts,
}

impl CommittedIndex {
    /// An index of no file.
    pub fn new() -> Self {
        Self::default()
    }

    /// Record (or replace) the committed file `document` with its `units` (its lenient
    /// parse).
    pub fn insert(&mut self, document: &TopicDocument, units: &[Unit]) {
        let facts = facts(document, units);
        self.remove(document.path());
        self.count(&facts, true);
        self.files.insert(document.path().to_owned(), facts);
    }

    /// Forget the committed file at `path`.
    pub fn remove(&mut self, path: &str) {
        if let Some(old) = self.files.remove(path) {
            self.count(&old, false);
        }
    }

    /// Whether a file other than those in `except` names `source_id`: cites it from a
    /// unit, or names it in a definition line (fenced ones too).
    pub fn cited_outside(&self, source_id: &str, except: &BTreeSet<String>) -> bool {
        let total = self.counts.cited_sources.get(source_id).copied().unwrap_or(0);
        let inside = except
            .iter()
            .filter_map(|path| self.files.get(path))
            .filter(|facts| facts.cited_sources.binary_search_by(|x| x.as_str().cmp(source_id)).is_ok())
            .count();
        total > inside
    }

    fn count(&mut self, facts: &Facts, add: bool) {
        let pairs = [
            (&mut self.counts.unit_ids, &facts.unit_ids),
            (&mut self.counts.definition_ids, &facts.definition_ids),
            (&mut self.counts.relation_targets, &facts.relation_targets),
            (&mut self.counts.linked_ids, &facts.linked_ids),
            (&mut self.counts.local_labels, &facts.local_labels),
            (&mut self.counts.cited_sources, &facts.cited_sources),
        ];
        for (counts, ids) in pairs {
            for id in ids {
                if add {
                    *counts.entry(id.clone()).or_default() += 1;
                } else if let Some(n) = counts.get_mut(id.as_str()) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        counts.remove(id.as_str());
                    }
                }
            }
        }
    }

    /// Whether a file outside `changed` has `id` among the facts `pick` chooses.
    fn in_unchanged(
        &self,
        changed: &BTreeMap<String, Option<Vec<u8>>>,
        pick: fn(&Counts) -> &FastMap<String, usize>,
        list: fn(&Facts) -> &[String],
        id: &str,
    ) -> bool {
        let total = pick(&self.counts).get(id).copied().unwrap_or(0);
        let in_changed = changed
            .keys()
            .filter_map(|path| self.files.get(path))
            .filter(|facts| list(facts).binary_search_by(|x| x.as_str().cmp(id)).is_ok())
            .count();
        total > in_changed
    }
}

fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort_unstable();
    ids.dedup();
    ids
}

fn facts(document: &TopicDocument, units: &[Unit]) -> Facts {
    let mut linked = Vec::new();
    for (item, _) in document.paragraphs() {
        for line in document.lines().get(item.start..item.end).unwrap_or_default() {
            if line.contains("#^") {
                linked.extend(block_links(line).into_iter().map(|link| link.target.to_owned()));
            }
        }
    }
    // Every source a definition line names (fenced ones too, which the rewrite step
    // re-renders), and every source id a unit resolved to: what can link differently
    // once an archive gains frames.
    let mut cited: Vec<String> = units.iter().flat_map(|unit| unit.source_refs.iter().cloned()).collect();
    for (item, line) in document.items().iter().flat_map(|item| {
        document.lines().get(item.start..item.end).unwrap_or_default().iter().map(move |line| (item, line))
    }) {
        if !matches!(item.kind, ItemKind::Definition(_) | ItemKind::Fence) {
            continue;
        }
        if let Some(definition) = parse_definition(line) {
            cited.extend(definition.links.iter().map(|link| strip(&link.target).to_owned()));
            cited.extend(split_items(&definition.sources).map(str::to_owned));
        }
    }
    let mut local = Vec::new();
    for line in document.lines() {
        let mut rest = line.as_str();
        while let Some(at) = rest.find("[^") {
            rest = rest.get(at + 2..).unwrap_or_default();
            let label: String = rest.chars().take_while(|c| is_footnote_id_char(*c)).collect();
            if is_local_label(&label) {
                local.push(label);
            }
        }
    }
    Facts {
        unit_ids: sorted(units.iter().map(|unit| unit.memory_id.clone()).collect()),
        definition_ids: sorted(document.definitions().map(|(_, d)| d.id.clone()).collect()),
        relation_targets: sorted(units.iter().flat_map(|unit| unit.relation_targets.iter().cloned()).collect()),
        linked_ids: sorted(linked),
        local_labels: sorted(local),
        cited_sources: sorted(cited),
    }
}

/// Normalize only the `changed` files (path → new bytes, `None` for a deletion) of a
/// committed tree described by `index`, giving what [`normalize`](super::normalize) of
/// the whole staged tree gives, restricted to those files: `files` holds the changed
/// files that remain, `units` their units (`created_order` counts within them only).
///
/// Returns `None` when the result cannot be bounded to the changed files, or would be a
/// rejection: run [`normalize`](super::normalize) on the whole tree then. A file may be
/// given as changed with its committed bytes: it is then normalized like the others.
///
/// Preconditions, which the caller keeps: `index` holds every committed file; every
/// committed file is normal under `baseline` and the committed sources (it is its own
/// normalization); `baseline` holds exactly the units of the committed tree;
/// `sources` shows the committed archives with frames appended for the source ids
/// `new_sources` at most.
pub fn normalize_changed<L: SourceLookup>(
    index: &CommittedIndex,
    changed: &BTreeMap<String, Option<Vec<u8>>>,
    baseline: &Baseline,
    sources: &SourceResolver<L>,
    new_sources: &BTreeSet<String>,
    options: &NormalizeOptions,
) -> Option<Normalized> {
    // One file per committed id, and nothing in the baseline the index lacks.
    if baseline.len() != index.counts.unit_ids.len() || index.counts.unit_ids.values().any(|n| *n > 1) {
        return None;
    }
    let unchanged_has = |pick, list, id: &str| index.in_unchanged(changed, pick, list, id);
    let unchanged_unit = |id: &str| unchanged_has(|c: &Counts| &c.unit_ids, |f: &Facts| &f.unit_ids, id);
    // A new frame can move where an id cited before lives (from a legacy archive to
    // its v2 one), and with it the canonical link to it.
    if new_sources.iter().any(|id| unchanged_has(|c: &Counts| &c.cited_sources, |f: &Facts| &f.cited_sources, id)) {
        return None;
    }

    let mut files = Vec::new();
    for (path, bytes) in changed {
        let Some(bytes) = bytes else { continue };
        if !is_topic_path(path) {
            return None;
        }
        files.push(Staged::from_document(TopicDocument::parse(path, bytes).ok()?));
    }
    files.sort_by(|a, b| component_cmp(&a.path, &b.path));

    relocation::repair(&mut files, baseline, sources);
    let defined_elsewhere = |id: &str| unchanged_has(|c: &Counts| &c.definition_ids, |f: &Facts| &f.definition_ids, id);
    let evidence_id_map = evidence::mint(&files, &defined_elsewhere);
    let renamed: Vec<&String> = evidence_id_map.labels().collect();
    if renamed.iter().any(|label| unchanged_has(|c: &Counts| &c.local_labels, |f: &Facts| &f.local_labels, label)) {
        return None;
    }
    orphans::rebind(&mut files);
    block_ids::drop_invented(&mut files, baseline);
    let new_ids = block_ids::mint(&files, baseline);
    rewrite::rewrite(&mut files, &evidence_id_map, &new_ids, sources);
    if !rewrite::unlinked_handles(&files, sources).is_empty() {
        return None;
    }
    let (pruned, violations) = prune::prune(&mut files);
    if !violations.is_empty() {
        return None;
    }

    let documents: Vec<TopicDocument> = files.into_iter().map(Staged::into_document).collect();
    let (mut documents, mut units, violations) = parse_documents(documents, sources, Mode::Strict).into_parts();
    if !violations.is_empty() || units.iter().any(|unit| unchanged_unit(&unit.memory_id)) {
        return None;
    }

    // Step 8 on the changed files; the unchanged ones keep their units and content.
    let present: FastSet<&str> = units.iter().map(|unit| unit.memory_id.as_str()).collect();
    let mut removed: BTreeSet<&str> = BTreeSet::new();
    for facts in changed.keys().filter_map(|path| index.files.get(path)) {
        removed.extend(facts.unit_ids.iter().map(String::as_str).filter(|id| !present.contains(id)));
    }
    removed.retain(|id| !unchanged_unit(id));
    if removed.iter().any(|id| !options.removal.allows(id)) {
        return None;
    }
    let linked_from_unchanged =
        |id: &str| unchanged_has(|c: &Counts| &c.relation_targets, |f: &Facts| &f.relation_targets, id);
    if removed.iter().any(|id| linked_from_unchanged(id)) {
        return None;
    }
    for unit in &units {
        let changed_content = baseline.unit(&unit.memory_id).is_none_or(|old| old.content != unit.content);
        if changed_content && !topic_link_violations(unit).is_empty() {
            return None;
        }
        if unit.relation_targets.iter().any(|t| !present.contains(t.as_str()) && !unchanged_unit(t)) {
            return None;
        }
    }

    if options.rewrite_links {
        // A block that changed files moves the links to it, in unchanged files too.
        let moved = |unit: &Unit| baseline.unit(&unit.memory_id).is_none_or(|old| old.path != unit.path);
        let links_to = |id: &str| unchanged_has(|c: &Counts| &c.linked_ids, |f: &Facts| &f.linked_ids, id);
        if units.iter().any(|unit| moved(unit) && links_to(&unit.memory_id)) {
            return None;
        }
        let homes = links::homes(&units);
        let home = |id: &str| match homes.get(id) {
            Some(path) => Some(*path),
            None if unchanged_unit(id) => baseline.unit(id).map(|unit| unit.path.as_str()),
            None => None,
        };
        if links::rewrite_documents(&mut documents, &home, sources) {
            let (again, reparsed, after) = parse_documents(documents, sources, Mode::Strict).into_parts();
            if !after.is_empty() {
                return None;
            }
            documents = again;
            units = reparsed;
        }
    }
    let files = documents.iter().map(|d| (d.path().to_owned(), d.render())).collect();
    Some(Normalized { files, pruned, block_id_map: new_ids.map, evidence_id_map: evidence_id_map.into_map(), units })
}

#[cfg(test)]
mod tests;
