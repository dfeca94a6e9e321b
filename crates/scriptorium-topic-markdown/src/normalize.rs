//! The normalization pipeline (spec 01 §6.9), one module per step, in the
//! reference's order: relocation repair, evidence ids, orphan rebinding, invented
//! block ids, new block ids, the per-file rewrite, pruning (after the decision-Q1
//! check), strict parse and contract checks, and the install-time link rewrite.

mod block_ids;
mod contract;
mod evidence;
mod incremental;
mod links;
mod orphans;
mod prune;
mod relocation;
mod rewrite;

use std::collections::{BTreeMap, BTreeSet};

use crate::document::{Item, TopicDocument, scan};
use crate::error::{Violation, Violations};
use crate::hash::{FastMap, FastSet};
use crate::paths::{component_cmp, is_topic_path};
use crate::source::{SourceLookup, SourceResolver};
use crate::text::{is_blank, rstrip};
use crate::tree::{Mode, parse_documents};
use crate::unit::Unit;

pub use self::incremental::{CommittedIndex, normalize_changed};
pub use self::links::rewrite_links;
pub use self::rewrite::unlocated_handle;

/// Which committed block ids may disappear in this normalization.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Removal {
    /// None: every committed id must still exist (as a block or a merge alias).
    #[default]
    Forbidden,
    /// Any (the reference's `allow_removed`; the transaction decides when).
    Allowed,
    /// Only these ids (an explicit delete).
    Only(BTreeSet<String>),
}

impl Removal {
    fn allows(&self, id: &str) -> bool {
        match self {
            Removal::Forbidden => false,
            Removal::Allowed => true,
            Removal::Only(ids) => ids.contains(id),
        }
    }
}

/// Options of [`normalize`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NormalizeOptions {
    /// Which committed ids may be removed.
    pub removal: Removal,
    /// Run the install-time pass too: canonical source links in every definition and
    /// current paths in every block link ([`rewrite_links`]).
    pub rewrite_links: bool,
}

impl Default for NormalizeOptions {
    fn default() -> Self {
        NormalizeOptions { removal: Removal::Forbidden, rewrite_links: true }
    }
}

impl NormalizeOptions {
    /// Options with the given removal policy and the link rewrite on.
    pub fn with_removal(removal: Removal) -> Self {
        NormalizeOptions { removal, ..Self::default() }
    }
}

/// The committed state normalization compares against: its unit ids and units.
#[derive(Clone, Debug, Default)]
pub struct Baseline {
    /// Unit id → unit: the keys are the committed ids (no second set of them, which on
    /// a tree of half a million blocks is tens of megabytes).
    units: FastMap<String, Unit>,
}

impl Baseline {
    /// Nothing committed yet.
    pub fn empty() -> Self {
        Self::default()
    }

    /// The committed units (usually the strict or lenient parse of the committed tree).
    pub fn from_units(units: impl IntoIterator<Item = Unit>) -> Self {
        let mut baseline = Baseline::default();
        for unit in units {
            baseline.units.insert(unit.memory_id.clone(), unit);
        }
        baseline
    }

    /// Add a committed unit unless its id is already taken (the first unit of an id
    /// wins, as in a parse); returns whether it was added. With [`Baseline::remove`],
    /// this lets a caller keep one baseline up to date as files change, instead of
    /// rebuilding it from every unit.
    ///
    /// ```
    /// use scriptorium_topic_markdown::{Baseline, MemorySources, Mode, SourceResolver, parse_tree};
    ///
    /// let topic = "# Pets\n\nA cat.[^e-1] ^c0c0c0c0\n\n[^e-1]: Time: `2024-01-02`; Sources: [D1:1](D1:1)\n";
    /// let sources = SourceResolver::new(MemorySources::new());
    /// let units = parse_tree([("topics/pets.md", topic)], &sources, Mode::Lenient).into_parts().1;
    /// let mut baseline = Baseline::empty();
    /// for unit in units.iter().cloned() {
    ///     assert!(baseline.insert(unit));
    /// }
    /// assert!(!baseline.insert(units[0].clone()), "the id is taken");
    /// assert_eq!(baseline.remove("c0c0c0c0").map(|unit| unit.path), Some("topics/pets.md".to_owned()));
    /// assert!(!baseline.contains("c0c0c0c0"));
    /// ```
    pub fn insert(&mut self, unit: Unit) -> bool {
        match self.units.entry(unit.memory_id.clone()) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(unit);
                true
            }
        }
    }

    /// Every committed unit, in no particular order.
    pub fn units(&self) -> impl Iterator<Item = &Unit> {
        self.units.values()
    }

    /// Remove the committed unit with this id, returning it.
    pub fn remove(&mut self, id: &str) -> Option<Unit> {
        self.units.remove(id)
    }

    /// How many committed ids there are.
    pub fn len(&self) -> usize {
        self.units.len()
    }

    /// Whether nothing is committed.
    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// Whether `id` is a committed unit id.
    pub fn contains(&self, id: &str) -> bool {
        self.units.contains_key(id)
    }

    /// The committed unit with this id.
    pub fn unit(&self, id: &str) -> Option<&Unit> {
        self.units.get(id)
    }

    /// Every committed id, in no particular order.
    pub(crate) fn id_iter(&self) -> impl Iterator<Item = &str> {
        self.units.keys().map(String::as_str)
    }

    /// Every committed id, sorted.
    pub fn ids(&self) -> BTreeSet<&str> {
        self.units.keys().map(String::as_str).collect()
    }
}

/// What normalization produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Normalized {
    /// The whole normalized topic tree (workspace-relative path → bytes), pruned
    /// files left out.
    pub files: BTreeMap<String, Vec<u8>>,
    /// Staged files that pruning deleted (heading-only or blank topics).
    pub pruned: Vec<String>,
    /// New block ids: `"<path>#<n>"` (n-th newly identified paragraph of the file) → id.
    pub block_id_map: BTreeMap<String, String>,
    /// Local footnote labels (`e<digits>`, `new-evidence-…`) → minted `e-` ids.
    pub evidence_id_map: BTreeMap<String, String>,
    /// The strict parse of the result.
    pub units: Vec<Unit>,
}

/// One staged file while the pipeline runs: its lines and their items, kept in step.
///
/// Invariant: `items == scan(&lines)`; every step that edits lines goes through
/// [`Staged::set_lines`], which rescans only when something changed, so a tree that is
/// already normal is scanned once.
#[derive(Clone, Debug)]
pub(crate) struct Staged {
    pub(crate) path: String,
    lines: Vec<String>,
    items: Vec<Item>,
}

impl Staged {
    fn from_document(document: TopicDocument) -> Self {
        let (path, lines, items) = document.into_parts();
        Staged { path, lines, items }
    }

    pub(crate) fn lines(&self) -> &[String] {
        &self.lines
    }

    pub(crate) fn items(&self) -> &[Item] {
        &self.items
    }

    /// Replace the lines (rescanning when they differ).
    pub(crate) fn set_lines(&mut self, lines: Vec<String>) {
        if lines != self.lines {
            self.items = scan(&lines);
            self.lines = lines;
        }
    }

    /// Apply `(line index, new text)` replacements.
    pub(crate) fn replace_lines(&mut self, replacements: Vec<(usize, String)>) {
        if replacements.is_empty() {
            return;
        }
        let mut lines = self.lines.clone();
        for (index, text) in replacements {
            if let Some(slot) = lines.get_mut(index) {
                *slot = text;
            }
        }
        self.set_lines(lines);
    }

    fn into_document(self) -> TopicDocument {
        TopicDocument::from_parts(&self.path, self.lines, self.items)
    }
}

/// Normalize a staged topic tree (every topic file, workspace-relative path → bytes)
/// against the committed `baseline`. Returns every violation when the result would
/// not be a valid tree.
pub fn normalize<'f, L, I, P, B>(
    staged: I,
    baseline: &Baseline,
    sources: &SourceResolver<L>,
    options: &NormalizeOptions,
) -> Result<Normalized, Violations>
where
    L: SourceLookup,
    I: IntoIterator<Item = (&'f P, &'f B)>,
    P: AsRef<str> + ?Sized + 'f,
    B: AsRef<[u8]> + ?Sized + 'f,
{
    let mut violations = Vec::new();
    let mut files = Vec::new();
    for (path, bytes) in staged {
        let path = path.as_ref();
        if !is_topic_path(path) {
            let detail = format!("not a topic path: {path}");
            violations.push(Violation::new(crate::error::ErrorCode::InvalidPath, path, None, detail));
            continue;
        }
        match TopicDocument::parse(path, bytes.as_ref()) {
            Ok(document) => files.push(Staged::from_document(document)),
            Err(violation) => violations.push(violation),
        }
    }
    if !violations.is_empty() {
        return Err(Violations::new(violations));
    }
    files.sort_by(|a, b| component_cmp(&a.path, &b.path));

    relocation::repair(&mut files, baseline, sources);
    let evidence_id_map = evidence::mint(&files, &|_| false);
    orphans::rebind(&mut files);
    block_ids::drop_invented(&mut files, baseline);
    let new_ids = block_ids::mint(&files, baseline);
    rewrite::rewrite(&mut files, &evidence_id_map, &new_ids, sources);
    let mut violations = rewrite::unlinked_handles(&files, sources);
    let (pruned, prune_violations) = prune::prune(&mut files);
    violations.extend(prune_violations);

    let documents: Vec<TopicDocument> = files.into_iter().map(Staged::into_document).collect();
    let tree = parse_documents(documents, sources, Mode::Strict);
    let q1: FastSet<(crate::error::ErrorCode, String, String)> =
        violations.iter().map(|v| (v.code(), v.file().to_owned(), v.detail().to_owned())).collect();
    let (mut documents, mut units, parse_violations) = tree.into_parts();
    violations.extend(
        parse_violations.into_iter().filter(|v| !q1.contains(&(v.code(), v.file().to_owned(), v.detail().to_owned()))),
    );
    violations.extend(contract::check(&units, baseline, &options.removal));
    if !violations.is_empty() {
        return Err(Violations::new(violations));
    }

    let homes = links::homes(&units);
    let home = |id: &str| homes.get(id).copied();
    if options.rewrite_links && links::rewrite_documents(&mut documents, &home, sources) {
        let (again, reparsed, after) = parse_documents(documents, sources, Mode::Strict).into_parts();
        if !after.is_empty() {
            return Err(Violations::new(after));
        }
        documents = again;
        units = reparsed;
    }
    let files = documents.iter().map(|d| (d.path().to_owned(), d.render())).collect();
    let block_id_map = new_ids.map;
    Ok(Normalized { files, pruned, block_id_map, evidence_id_map: evidence_id_map.into_map(), units })
}

/// Whether [`finish`] would change `lines`.
pub(crate) fn needs_finish(lines: &[String]) -> bool {
    lines.last().is_some_and(|last| last.is_empty() || rstrip(last).len() != last.len())
}

/// `"\n".join(lines).rstrip() + "\n"` as lines again: trailing blank lines go and the
/// last line is right-stripped (lines hold no line breaks, so this is the same).
pub(crate) fn finish(mut lines: Vec<String>) -> Vec<String> {
    while lines.last().is_some_and(|line| is_blank(line)) {
        lines.pop();
    }
    if let Some(last) = lines.last_mut() {
        let keep = rstrip(last).len();
        last.truncate(keep);
    }
    lines
}

#[cfg(test)]
mod tests;
