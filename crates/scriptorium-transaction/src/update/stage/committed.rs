//! [`CommittedCache`]: the committed topics, their lenient units and the [`Baseline`]
//! an update compares against, kept between the updates of one `Workspace` so that a
//! one-file edit re-reads and re-parses one file, not the whole tree.
//!
//! The cache is valid for one revision, computed under the write lock right after this
//! process installed: the revision hashes every byte of every memory file, so when the
//! next update (under the lock again) finds the same revision, nothing changed in
//! between, and what this process installed is exactly the changes it wrote. Any other
//! revision (a hand edit, another process, a recovered install) reloads everything.
//!
//! A file's lenient units depend on its bytes and on the source archives its citations
//! resolve against, and the baseline takes the first unit of each id in path order. So
//! an install that touches `sources/` re-parses every file, and the baseline is patched
//! in place only while no id occurs in two files; otherwise it is rebuilt from the
//! per-file units, in path order, exactly as a parse of the whole tree builds it.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use scriptorium_topic_markdown::{
    Baseline, CommittedIndex, Mode, NormalizeOptions, Normalized, SourceLookup, SourceResolver, TopicDocument, Unit,
    Violations, normalize, normalize_changed, parse_tree,
};

use crate::error::Error;
use crate::journal::Changes;
use crate::revision::{RUNTIME_STATE_FILE, is_internal_path};
use crate::update::stage::{committed_topics, differences};
use crate::vfs::Vfs;

/// The committed side of the next update.
///
/// Invariants: when `valid_at` is set, `topics` are the tree's `topics/**.md` at that
/// revision; `units` holds the lenient units of every path of `topics` not in `stale`
/// (nor everything, when `all_stale`); `baseline` is built from `units` once `stale` is
/// empty and `all_stale` false.
#[derive(Default)]
pub(crate) struct CommittedCache {
    valid_at: Option<String>,
    topics: BTreeMap<String, Vec<u8>>,
    units: BTreeMap<String, Vec<Unit>>,
    stale: BTreeSet<String>,
    /// Units of stale files as the installing normalization's strict parse gave them
    /// (the same units a lenient parse gives a valid file), so they need no re-parse.
    parsed: BTreeMap<String, Vec<Unit>>,
    all_stale: bool,
    baseline: Baseline,
    /// Units left out of `baseline` because an earlier file has their id.
    shadowed: usize,
    /// What incremental normalization needs of each file of `units`.
    index: CommittedIndex,
    /// Every committed file is its own normalization under `baseline` and the current
    /// sources: each is an output of the normalization this process installed, and no
    /// committed id or source archive changed since in a way that could undo that.
    normal: bool,
    /// The last refresh added the request's `known_ids_from` units to the baseline the
    /// update normalized against, so its output is not known normal under the next one.
    extended: bool,
    /// The committed `runtime.json` at `valid_at` has a creation order: parsing the file
    /// to learn that again costs more than the rest of a one-block update.
    ordered: bool,
    /// The write lock's stamp when the tree last matched `valid_at` under it: while the
    /// lock has that stamp no holder installed anything (see `Workspace::install`).
    stamp: Option<u64>,
}

impl std::fmt::Debug for CommittedCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A summary: the topics are the whole committed tree.
        f.debug_struct("CommittedCache")
            .field("valid_at", &self.valid_at)
            .field("topics", &self.topics.len())
            .field("normal", &self.normal)
            .finish_non_exhaustive()
    }
}

/// The view an update takes of the cache after [`CommittedCache::refresh`].
pub(crate) struct Committed<'c> {
    /// The committed topic files.
    pub(crate) topics: &'c BTreeMap<String, Vec<u8>>,
    /// The baseline, with the request's `known_ids_from` units when it has some.
    pub(crate) baseline: Cow<'c, Baseline>,
    /// The committed files' index, when they are all normal (see `normalize_stage`).
    pub(crate) normal_index: Option<&'c CommittedIndex>,
}

impl CommittedCache {
    /// Bring the cache to the tree at `revision` (the current one, under the lock):
    /// reuse what is valid for it, re-read or re-parse the rest. `known` are the
    /// request's `known_ids_from` files: their units join the baseline where the
    /// committed tree lacks the id. `known_normal` says, when the cache must reload the
    /// tree, whether an earlier process found this revision normal (see
    /// [`Self::settle`]): a normal tree is normalized incrementally from a cold start too.
    pub(crate) fn refresh<'c, V: Vfs + ?Sized, L: SourceLookup>(
        &'c mut self,
        vfs: &V,
        revision: &str,
        sources: &SourceResolver<L>,
        known: &BTreeMap<String, Vec<u8>>,
        known_normal: impl FnOnce() -> bool,
    ) -> Result<Committed<'c>, Error> {
        if self.valid_at.as_deref() != Some(revision) {
            *self = CommittedCache { topics: committed_topics(vfs)?, all_stale: true, ..CommittedCache::default() };
            self.valid_at = Some(revision.to_owned());
            self.parse_stale(sources);
            // Normal form is a property of the bytes the revision hashes (topics and
            // sources), so another process's finding holds; with an id in two files the
            // warm path would not call the tree normal either.
            self.normal = self.shadowed == 0 && known_normal();
        }
        self.parse_stale(sources);
        let mut baseline = Cow::Borrowed(&self.baseline);
        let mut earlier = parse_tree(known, sources, Mode::Lenient).into_parts().1.into_iter().peekable();
        self.extended = earlier.peek().is_some();
        if self.extended {
            let extended = baseline.to_mut();
            for unit in earlier.filter(|unit| !self.baseline.contains(&unit.memory_id)) {
                // Among themselves the earlier units' last one of an id wins, as
                // `Baseline::from_units` does.
                extended.remove(&unit.memory_id);
                extended.insert(unit);
            }
        }
        let normal_index = (self.normal && matches!(baseline, Cow::Borrowed(_))).then_some(&self.index);
        Ok(Committed { topics: &self.topics, baseline, normal_index })
    }

    /// Forget the tree: called before an install, which changes it.
    pub(crate) fn invalidate(&mut self) {
        self.valid_at = None;
    }

    /// The revision the cache holds the tree at, if any.
    pub(crate) fn valid_at(&self) -> Option<&str> {
        self.valid_at.as_deref()
    }

    /// The committed topic files the cache holds (the tree at [`Self::valid_at`]).
    pub(crate) fn topics(&self) -> &BTreeMap<String, Vec<u8>> {
        &self.topics
    }

    /// Record that the tree is at [`Self::valid_at`] while the write lock has `stamp`.
    pub(crate) fn vouch(&mut self, stamp: u64) {
        self.stamp = Some(stamp);
    }

    /// Whether the cache is valid and was last vouched for under a lock with `stamp`.
    pub(crate) fn vouched(&self, stamp: u64) -> bool {
        self.valid_at.is_some() && self.stamp == Some(stamp)
    }

    /// Record a successful install that wrote no topic file and at most appended frames
    /// to source archives (`appended`: their source ids, when there were any), after
    /// which the tree has `revision`. `runtime_state`: whether the `runtime.json` it
    /// wrote has a creation order, when it wrote one.
    ///
    /// Contract: the cache was valid for the tree the install started from. The rule for
    /// appended frames is [`Self::installed`]'s: they can change only the units of a file
    /// that names one of their ids, or of any file when the tree was not known normal.
    pub(crate) fn installed_beside(
        &mut self,
        revision: String,
        appended: Option<&BTreeSet<String>>,
        runtime_state: Option<bool>,
    ) {
        if let Some(appended) = appended {
            // Stale files are not in the index yet, so it cannot speak for them.
            let none = BTreeSet::new();
            if !self.normal || !self.stale.is_empty() || appended.iter().any(|id| self.index.cited_outside(id, &none)) {
                self.all_stale = true;
                self.normal = false;
            }
        }
        if let Some(ordered) = runtime_state {
            self.ordered = ordered;
        }
        if self.all_stale {
            self.parsed.clear();
        }
        self.valid_at = Some(revision);
    }

    /// Whether the committed `runtime.json` of the tree at `revision` is known to have a
    /// creation order (see [`Self::set_creation_order_known`]).
    pub(crate) fn creation_order_known(&self, revision: &str) -> bool {
        self.ordered && self.valid_at.as_deref() == Some(revision)
    }

    /// Record whether the committed `runtime.json` the current update started from has a
    /// creation order; [`Self::installed`] forgets it when the install rewrites that file.
    pub(crate) fn set_creation_order_known(&mut self, ordered: bool) {
        self.ordered = ordered;
    }

    /// Record a successful install of `changes`, after which the tree has `revision`.
    ///
    /// Contract: [`Self::refresh`] ran earlier in the same update, under the same write
    /// lock, so the cached topics are the tree the changes were installed over.
    /// `normalized` is the normalized topic tree the changes were made from: a topic
    /// file installed with other bytes (a promotion) is not known to be normal.
    /// `new_sources` are the source ids of the frames the changes append to archives.
    pub(crate) fn installed(
        &mut self,
        changes: &Changes,
        revision: String,
        normalized: &Normalized,
        new_sources: &BTreeSet<String>,
    ) {
        let was_normal = self.normal;
        self.normal = !self.extended;
        if changes.keys().any(|path| is_internal_path(path) && path.ends_with(RUNTIME_STATE_FILE)) {
            self.ordered = false;
        }
        if changes.keys().any(|path| path.starts_with("sources/")) {
            // Every citation of a normal file resolves, and appended frames resolve
            // nothing new for it; only where an id it names now lives may change.
            let topics: BTreeSet<String> = changes.keys().filter(|path| path.starts_with("topics/")).cloned().collect();
            if !was_normal || new_sources.iter().any(|id| self.index.cited_outside(id, &topics)) {
                self.all_stale = true;
                self.normal = false;
            }
        }
        for (path, bytes) in changes {
            if !(path.starts_with("topics/") && path.ends_with(".md")) {
                continue;
            }
            if bytes.as_ref().is_some_and(|bytes| normalized.files.get(path) != Some(bytes)) {
                self.normal = false;
            } else if bytes.is_some() {
                self.parsed.insert(path.clone(), Vec::new());
            }
            match bytes {
                Some(bytes) => self.topics.insert(path.clone(), bytes.clone()),
                None => self.topics.remove(path),
            };
            self.stale.insert(path.clone());
        }
        for unit in &normalized.units {
            if let Some(units) = self.parsed.get_mut(&unit.path) {
                units.push(unit.clone());
            }
        }
        if self.all_stale {
            self.parsed.clear();
        }
        self.valid_at = Some(revision);
    }

    /// Bring the cache to the tree just installed (what the next refresh would do at its
    /// start) and say whether that tree is known normal, so a later process can take it
    /// as such. `sources` are the archives as installed. Nothing is settled when the
    /// install makes every file stale (a source change): that is a whole re-parse.
    pub(crate) fn settle<L: SourceLookup>(&mut self, sources: &SourceResolver<L>) -> bool {
        if self.valid_at.is_none() || self.all_stale || self.extended {
            return false;
        }
        self.parse_stale(sources);
        self.normal
    }

    /// Re-parse what is stale and bring the baseline up to date.
    fn parse_stale<L: SourceLookup>(&mut self, sources: &SourceResolver<L>) {
        if self.all_stale {
            self.index = CommittedIndex::new();
            self.units = BTreeMap::new();
            for (path, bytes) in &self.topics {
                let units = lenient_units(path, bytes, sources, &mut self.index);
                self.units.insert(path.clone(), units);
            }
            self.all_stale = false;
            self.stale.clear();
            self.parsed.clear();
            self.rebuild_baseline();
            return;
        }
        if self.stale.is_empty() {
            return;
        }
        let stale = std::mem::take(&mut self.stale);
        let mut old = Vec::new();
        for path in &stale {
            self.index.remove(path);
            let known = self.parsed.remove(path);
            let fresh = self.topics.get(path).map(|bytes| match known {
                Some(units) => installed_units(path, bytes, units, sources, &mut self.index),
                None => lenient_units(path, bytes, sources, &mut self.index),
            });
            let previous = match fresh {
                Some(units) => self.units.insert(path.clone(), units),
                None => self.units.remove(path),
            };
            old.extend(previous.into_iter().flatten());
        }
        if self.shadowed > 0 {
            self.rebuild_baseline();
            return;
        }
        // No id is in two files: the baseline is the union of the per-file units, and
        // only the stale files' part of it changes.
        for unit in &old {
            self.baseline.remove(&unit.memory_id);
        }
        let added = stale.iter().filter_map(|path| self.units.get(path)).flatten();
        for unit in added {
            if !self.baseline.insert(unit.clone()) {
                // An id now in two files: which one wins depends on path order.
                self.rebuild_baseline();
                return;
            }
        }
        // A committed id that is gone may end a line of an unchanged file (in a fence,
        // say) that normalization would now strip: those files are normal no longer.
        if old.iter().any(|unit| !self.baseline.contains(&unit.memory_id)) {
            self.normal = false;
        }
    }

    /// The baseline from every file's units in component-wise path order, first unit
    /// of an id winning (what a lenient parse of the whole tree gives).
    fn rebuild_baseline(&mut self) {
        self.normal = false;
        let mut paths: Vec<&String> = self.units.keys().collect();
        paths.sort_by(|a, b| a.split('/').cmp(b.split('/')));
        self.baseline = Baseline::empty();
        self.shadowed = 0;
        for unit in paths.into_iter().filter_map(|path| self.units.get(path)).flatten() {
            if !self.baseline.insert(unit.clone()) {
                self.shadowed += 1;
            }
        }
    }
}

impl crate::workspace::Workspace {
    /// This workspace's [`CommittedCache`], locked. A cache poisoned by a panic in the
    /// middle of a refresh may be half updated: it is emptied, so the next update
    /// reloads everything.
    pub(crate) fn committed_cache(&self) -> std::sync::MutexGuard<'_, CommittedCache> {
        self.committed_cache.lock().unwrap_or_else(|poisoned| {
            let mut cache = poisoned.into_inner();
            *cache = CommittedCache::default();
            cache
        })
    }
}

/// The lenient units of one committed file, recorded in `index` too.
fn lenient_units<L: SourceLookup>(
    path: &str,
    bytes: &[u8],
    sources: &SourceResolver<L>,
    index: &mut CommittedIndex,
) -> Vec<Unit> {
    let (documents, units, _) = parse_tree([(path, bytes)], sources, Mode::Lenient).into_parts();
    for document in &documents {
        index.insert(document, &units);
    }
    units
}

/// The units of a file this process installed, as its normalization parsed them,
/// recorded in `index` too (a lenient parse when the file does not even split).
fn installed_units<L: SourceLookup>(
    path: &str,
    bytes: &[u8],
    units: Vec<Unit>,
    sources: &SourceResolver<L>,
    index: &mut CommittedIndex,
) -> Vec<Unit> {
    match TopicDocument::parse(path, bytes) {
        Ok(document) => {
            index.insert(&document, &units);
            units
        }
        Err(_) => lenient_units(path, bytes, sources, index),
    }
}

/// Normalize the `staged` topic tree: only the files that differ from the committed
/// ones when the committed tree is known normal, else (or when that cannot be bounded)
/// the whole tree. Either way the result is what [`normalize`] of the whole tree gives.
/// `sources` shows the archives with this update's frames appended, whose source ids
/// are `new_sources`.
pub(crate) fn normalize_stage<L: SourceLookup>(
    committed: &Committed<'_>,
    mut staged: BTreeMap<String, Vec<u8>>,
    sources: &SourceResolver<L>,
    new_sources: &BTreeSet<String>,
    options: &NormalizeOptions,
) -> Result<Normalized, Violations> {
    if let Some(index) = committed.normal_index {
        let changed: BTreeMap<String, Option<Vec<u8>>> = differences(&staged, committed.topics)
            .into_iter()
            .map(|(path, bytes)| (path.clone(), bytes.cloned()))
            .collect();
        if let Some(mut normalized) =
            normalize_changed(index, &changed, &committed.baseline, sources, new_sources, options)
        {
            for path in changed.keys() {
                match normalized.files.remove(path) {
                    Some(bytes) => staged.insert(path.clone(), bytes),
                    None => staged.remove(path),
                };
            }
            normalized.files = staged;
            return Ok(normalized);
        }
    }
    normalize(&staged, &committed.baseline, sources, options)
}

#[cfg(test)]
mod tests;
