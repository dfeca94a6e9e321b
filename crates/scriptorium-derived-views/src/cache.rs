//! [`ViewsCache`]: the derived-view builder that remembers what it parsed and rendered, so
//! that a long-lived process (the backend, a benchmark) re-parses only the topic files
//! whose bytes changed since its last build and re-renders only the view pieces their
//! units touch ([`LiveViews`]). A fresh cache is a full rebuild, and
//! [`DerivedViews::build`] is exactly that, so incremental and full builds share one code
//! path. A full render returns every view; a patch returns only the views whose bytes
//! differ from the staged ones, which the [`Derive`] contract leaves as they stand, so
//! copying tens of megabytes of unchanged views is not paid on every edit. The stage with
//! either build installed must be the same byte for byte (the `incremental` property test
//! checks it, some installs skipped as after a transaction that failed).
//!
//! Units of a file depend on the file and on the source archives its citations resolve
//! against. Frames appended to a v2 archive (the committed frames scanning as before)
//! only add ids, so they can change the parse of a file that cites one of them or that
//! had a violation (an unresolved citation is one), and only those are parsed again;
//! any other change under `sources/` drops every cached topic. Either drops the citation
//! resolver. Duplicate ids across files are settled at merge time, the first file in
//! component-wise path order winning, as `parse_tree` does; while any id is duplicated,
//! or when `runtime.json` ranks blocks otherwise than the last build did (its ranks order
//! recent events), the views are rendered from every unit rather than patched.
//!
//! Finding the changed files means comparing every staged file with the cached bytes,
//! which is most of a one-topic build on a large workspace. Driven by the transaction
//! ([`Derive::derive_delta`] and [`Derive::installed`]), the cache compares only the
//! paths the stage changes: it knows it holds the workspace committed at a revision, and
//! a stage made from that same revision differs from it only there. An install beside
//! the transaction that it is told of ([`ViewsCache::moved`]) adds its paths to those
//! compared. A revision it does not know (a hand edit, another process's commit) means
//! comparing everything again.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ops::Bound;

use scriptorium_archive_format::{appended_source_ids, trusted_source_ids};
use scriptorium_topic_markdown::{ErrorCode as TopicCode, MemorySources, Mode, SourceResolver, Unit, parse_tree};
use scriptorium_transaction::{CORE_REPORT_FILE, Derive, DerivedFiles, RevisionMove, RuntimeState, StageDelta};

use crate::core_render::{CoreRender, render_core};
use crate::error::{Error, ErrorCode};
use crate::live::{LiveViews, TreePos};
use crate::migrate::{ROOT_CORE, TOPIC_CORE, migrate_root_core};
use crate::order::{append_ranks, assign_creation_order};
use crate::parsed::{ParsedFile, Topics};
use crate::timeline::{UnitEntries, unit_entries};
use crate::views::{Derived, DerivedViews};

/// A [`DerivedViews`] builder that reuses the parsed units of unchanged topic files
/// between builds. Interior mutability keeps it usable behind `&self`, as the
/// [`Derive`] trait requires; it is neither `Sync` (one writer at a time holds the lock)
/// nor `Send` (the citation resolver it keeps is not).
#[derive(Debug, Default)]
pub struct ViewsCache {
    options: DerivedViews,
    state: RefCell<State>,
}

/// What the last build parsed and reused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuildStats {
    /// Topic files parsed in the last build.
    pub topics_parsed: usize,
    /// Topic files whose cached units were reused.
    pub topics_reused: usize,
    /// Whether the last build patched the previous build's views with the changed files
    /// (rather than rendering them from every unit, as after a source change, a
    /// `runtime.json` written by someone else, or with a duplicate id).
    pub views_patched: bool,
}

#[derive(Debug, Default)]
struct State {
    topics: Topics,
    sources: HashMap<String, CachedSource>,
    /// Every frame id the staged sources trust, kept with them.
    trusted: HashSet<String>,
    core: Option<CachedCore>,
    /// The citation resolver over the staged sources, dropped when any of them changes.
    resolver: Option<SourceResolver<MemorySources>>,
    /// The views of the last build, kept when it succeeded with unique ids.
    views: Option<LiveViews>,
    /// The `runtime.json` bytes the last build wrote and the state they hold, so an
    /// unchanged file is not parsed again.
    runtime: Option<(Vec<u8>, RuntimeState)>,
    /// The timeline days the last build returned, which the stage may not hold yet.
    returned_days: HashSet<String>,
    /// Which staged files a build may take as cached without comparing their bytes.
    trust: Trust,
    stats: BuildStats,
}

/// What the cache knows about the next stage it is given, from the transaction's
/// [`StageDelta`]s and install reports (comparing 57 MB of unchanged topics is most of a
/// one-topic build).
#[derive(Debug, Default)]
enum Trust {
    /// Nothing: every file is compared.
    #[default]
    Nothing,
    /// The cache holds the stage of the last build, made from the workspace committed
    /// at `base` and differing from it at most at `changed`; it may not have installed.
    Staged { base: String, changed: BTreeSet<String> },
    /// The cache holds the workspace committed at this revision.
    Committed(String),
}

impl Trust {
    /// The paths to compare for a stage made from `base` differing at `changed`; `None`
    /// when every path must be compared.
    fn suspects(&self, base: &str, changed: &BTreeSet<String>) -> Option<BTreeSet<String>> {
        match self {
            Trust::Committed(revision) if revision == base => Some(changed.clone()),
            // The last stage may not have installed: its changes are suspect too.
            Trust::Staged { base: last, changed: last_changed } if last == base => {
                Some(changed.union(last_changed).cloned().collect())
            }
            _ => None,
        }
    }
}

#[derive(Debug)]
struct CachedSource {
    bytes: Vec<u8>,
    trusted: Vec<String>,
}

/// The last `core.md` render and what it was rendered from.
#[derive(Debug)]
struct CachedCore {
    text: Vec<u8>,
    pending: BTreeSet<String>,
    budget: usize,
    render: CoreRender,
}

impl ViewsCache {
    /// An empty cache building with `options`.
    pub fn new(options: DerivedViews) -> Self {
        ViewsCache { options, state: RefCell::new(State::default()) }
    }

    /// The options it builds with.
    pub fn options(&self) -> DerivedViews {
        self.options
    }

    /// What the last build parsed and reused.
    pub fn stats(&self) -> BuildStats {
        self.state.borrow().stats
    }

    /// Build the derived views of `staged` (see [`Derive::derive`]), re-parsing only
    /// the topic files that changed since the last build. When it patches the last
    /// build's views ([`BuildStats::views_patched`]) it returns only the files whose
    /// bytes differ from `staged` (and removals); otherwise every view.
    ///
    /// # Errors
    /// As [`DerivedViews::build`].
    pub fn build(&self, staged: &BTreeMap<String, Vec<u8>>, runtime_dir: &str) -> Result<Derived, Error> {
        let mut state = self.state.borrow_mut();
        state.trust = Trust::Nothing;
        self.build_trusting(&mut state, staged, runtime_dir, None)
    }

    /// [`build`](Self::build) for a stage made from the workspace committed at
    /// `base_revision` that differs from it at most at the `changed` paths. When this
    /// cache last built that same workspace (it was told with
    /// [`installed`](Self::installed)) or a stage made from it, only the changed paths'
    /// bytes are compared with what it holds; otherwise this is [`build`](Self::build).
    ///
    /// # Errors
    /// As [`DerivedViews::build`].
    pub fn build_delta(
        &self,
        staged: &BTreeMap<String, Vec<u8>>,
        runtime_dir: &str,
        base_revision: &str,
        changed: &BTreeSet<String>,
    ) -> Result<Derived, Error> {
        let mut state = self.state.borrow_mut();
        let suspects = std::mem::take(&mut state.trust).suspects(base_revision, changed);
        let built = self.build_trusting(&mut state, staged, runtime_dir, suspects.as_ref())?;
        state.trust = Trust::Staged { base: base_revision.to_owned(), changed: changed.clone() };
        Ok(built)
    }

    /// Record that the stage of the last [`build_delta`](Self::build_delta) was
    /// installed and the workspace is now at `revision`.
    pub fn installed(&self, revision: &str) {
        let mut state = self.state.borrow_mut();
        if matches!(state.trust, Trust::Staged { .. }) {
            state.trust = Trust::Committed(revision.to_owned());
        }
    }

    /// Record an install made beside the transaction (a raw
    /// [`Workspace::install`](scriptorium_transaction::Workspace::install)) that moved
    /// the workspace as `moved` says, writing at most `paths`: a stage made from the new
    /// revision is compared at those paths too.
    pub fn moved<'p>(&self, moved: &RevisionMove, paths: impl IntoIterator<Item = &'p str>) {
        let mut state = self.state.borrow_mut();
        state.trust = match std::mem::take(&mut state.trust) {
            Trust::Committed(revision) if revision == moved.from => {
                Trust::Staged { base: moved.to.clone(), changed: paths.into_iter().map(str::to_owned).collect() }
            }
            Trust::Staged { base, mut changed } if base == moved.from => {
                changed.extend(paths.into_iter().map(str::to_owned));
                Trust::Staged { base: moved.to.clone(), changed }
            }
            _ => Trust::Nothing,
        };
    }

    /// One build; `suspects`, when given, are the only staged paths whose bytes may
    /// differ from the cached ones (a path the cache does not hold is always read).
    fn build_trusting(
        &self,
        state: &mut State,
        staged: &BTreeMap<String, Vec<u8>>,
        runtime_dir: &str,
        suspects: Option<&BTreeSet<String>>,
    ) -> Result<Derived, Error> {
        let suspect = |path: &String| suspects.is_none_or(|set| set.contains(path));
        // The last build's views, put back only when this build completes.
        let views = state.views.take();
        let sources = refresh_sources(&mut state.sources, staged, suspect);
        // Files whose units the appended frames may change (see the module comment).
        let mut reparse: HashSet<String> = HashSet::new();
        match &sources {
            Sources::Same => {}
            Sources::Appended(ids) => {
                reparse = state
                    .topics
                    .files()
                    .iter()
                    .filter(|(_, file)| {
                        file.violations > 0
                            || file.units.iter().flat_map(|unit| &unit.source_refs).any(|id| ids.contains(id))
                    })
                    .map(|(path, _)| path.clone())
                    .collect();
            }
            Sources::Other => state.topics = Topics::default(),
        }
        let sources_changed = !matches!(sources, Sources::Same);
        if sources_changed {
            state.trusted = state.sources.values().flat_map(|s| s.trusted.iter().cloned()).collect();
        }
        // The resolver keeps what it scanned of each archive, so it lives as long as they
        // stay the same; it is made on the first parse that needs it.
        let mut resolver = state.resolver.take().filter(|_| !sources_changed);
        let mut stats = BuildStats::default();
        let mut not_utf8 = Vec::new();
        // Each topic file added, changed or removed, with its units before the change.
        let mut changed: Vec<(String, Option<ParsedFile>)> = Vec::new();
        let mut live = 0;
        let topics: Vec<(&String, &Vec<u8>)> =
            under(staged, "topics/").filter(|(path, _)| path.ends_with(".md")).collect();
        // Both maps are in path order: one walk through them, no lookups, and `==` on
        // byte slices compares lengths before any byte.
        let mut cached = state.topics.files().iter().peekable();
        let same: Vec<bool> = topics
            .iter()
            .map(|(path, bytes)| {
                while cached.next_if(|(old, _)| old.as_str() < path.as_str()).is_some() {}
                cached.next_if(|(old, _)| old == path).is_some_and(|(_, file)| {
                    (!suspect(path) || file.bytes == **bytes) && !reparse.contains(path.as_str())
                })
            })
            .collect();
        for ((path, bytes), same) in topics.into_iter().zip(same) {
            live += 1;
            if same {
                stats.topics_reused += 1;
                continue;
            }
            stats.topics_parsed += 1;
            // Only changed files are checked: a cached one parsed, so it is UTF-8.
            if std::str::from_utf8(bytes).is_err() {
                not_utf8.push(path.as_str());
                continue;
            }
            let resolver = resolver.get_or_insert_with(|| {
                SourceResolver::new(
                    under(staged, "sources/").map(|(path, bytes)| (path.clone(), bytes.clone())).collect(),
                )
            });
            let (_, units, violations) =
                parse_tree([(path.as_str(), bytes.as_slice())], &*resolver, Mode::Strict).into_parts();
            if let Some(read) = violations.iter().find(|v| v.code() == TopicCode::SourceReadFailed) {
                state.topics.remove(path);
                return Err(Error::new(ErrorCode::SourceUnreadable, read.file(), read.to_string()));
            }
            let timeline = units.iter().map(unit_entries).collect();
            let parsed = ParsedFile { bytes: bytes.clone(), units, timeline, violations: violations.len() };
            changed.push((path.clone(), state.topics.insert(path.clone(), parsed)));
        }
        // Every staged file is cached after a build that succeeds, so a count that differs
        // means some cached file is no longer staged.
        if state.topics.files().len() != live {
            let gone: Vec<String> =
                state.topics.files().keys().filter(|path| !staged.contains_key(*path)).cloned().collect();
            for path in gone {
                let old = state.topics.remove(&path);
                changed.push((path, old));
            }
        }
        state.stats = stats;
        state.resolver = resolver;
        // The first such file in path order, as a whole-tree check would name it.
        if let Some(path) = not_utf8.into_iter().min() {
            return Err(Error::new(ErrorCode::NotUtf8, path, "topic file is not UTF-8"));
        }

        // Whether the whole tree parses without a violation (a duplicate id is one).
        let valid = state.topics.violations() == 0 && state.topics.duplicates() == 0;
        let runtime_path = format!("{runtime_dir}/runtime.json");
        let committed = staged.get(&runtime_path);
        // `ranks`: the committed ranks are those the last views were built with;
        // `unchanged`: the committed bytes are what this build would write for them.
        let (mut runtime, ranks, unchanged) = match state.runtime.take() {
            Some((bytes, runtime)) if Some(&bytes) == committed => (runtime, true, Some(bytes)),
            // Written by someone else (the writer runtime's counters): the views still
            // hold when the ranks do, and the bytes when they are the canonical ones.
            Some((_, last)) if views.is_some() => {
                let runtime = committed.map(|bytes| RuntimeState::parse(bytes)).unwrap_or_default();
                let ranks = runtime.same_creation_order(&last);
                let unchanged = committed.filter(|bytes| ranks && runtime.to_bytes() == **bytes).cloned();
                (runtime, ranks, unchanged)
            }
            _ => (committed.map(|bytes| RuntimeState::parse(bytes)).unwrap_or_default(), false, None),
        };
        // The last views are patched only when they were built from the same sources (or
        // ones with frames appended, whose files are parsed again) and ranks; with a
        // duplicate id, which copy counts depends on the whole tree.
        let delta = views.filter(|_| !matches!(sources, Sources::Other) && ranks && state.topics.duplicates() == 0);
        state.stats.views_patched = delta.is_some();
        // A patch returns only the files whose bytes differ from the staged ones; a full
        // render returns every view.
        let all = delta.is_none();
        let (mut views, runtime_bytes) = match delta {
            Some(views) => {
                let (views, ranked) = patch(views, &changed, state.topics.files(), &mut runtime);
                // Serializing every rank again is the slow part of adding a block; with no
                // new rank the file stays as written.
                let bytes = match unchanged {
                    Some(bytes) if ranked.is_empty() => bytes,
                    Some(bytes) => append_ranks(&bytes, &ranked).unwrap_or_else(|| runtime.to_bytes()),
                    None => runtime.to_bytes(),
                };
                (views, bytes)
            }
            None => match full(state.topics.files(), &mut runtime) {
                (views, 0) => (views, unchanged.unwrap_or_else(|| runtime.to_bytes())),
                (views, _) => (views, runtime.to_bytes()),
            },
        };

        let mut files = DerivedFiles::new();
        let report_path = format!("{runtime_dir}/{CORE_REPORT_FILE}");
        let mut core_report = None;
        if let Some(core) = staged.get(TOPIC_CORE) {
            // A tree that does not parse has no reliable citations: nothing counts as pending.
            let core_units = state.topics.files().get(TOPIC_CORE).map_or(&[][..], |file| file.units.as_slice());
            let pending = if valid { pending_core_blocks(&state.trusted, core_units) } else { BTreeSet::new() };
            let render = render_cached(&mut state.core, core, pending, self.options.core_budget)?;
            put(&mut files, staged, all, ROOT_CORE, render.text.as_bytes());
            put(&mut files, staged, all, &report_path, &render.report.to_bytes());
            core_report = Some(render.report.clone());
        } else {
            // §7.1: a root core.md rendered from a master that is gone goes with it; the
            // committed report shows it was rendered. A hand-written one (no report) stays.
            if staged.contains_key(&report_path) && staged.contains_key(ROOT_CORE) {
                files.insert(ROOT_CORE.to_owned(), None);
            }
            files.insert(report_path, None);
        }

        // The timeline is deleted and recreated whole: every old file not rebuilt goes.
        for (path, _) in under(staged, "timeline/").filter(|(path, _)| !views.has_timeline_file(path)) {
            files.insert(path.clone(), None);
        }
        // A day neither rendered again nor returned by the last build was checked equal to
        // the stage then, and only an install changes derived files; a day the last build
        // returned is checked again, in case that transaction did not install it.
        let last_returned = std::mem::take(&mut state.returned_days);
        for (path, bytes, rendered) in views.timeline() {
            let check = all || rendered || last_returned.contains(path.as_str());
            // A length check is nearly free and catches most hand edits of a day.
            if (check || staged.get(path).map(Vec::len) != Some(bytes.len()))
                && put(&mut files, staged, all, path, bytes)
            {
                state.returned_days.insert(path.clone());
            }
        }
        let parsed = state.topics.files();
        let recent = views
            .recent(self.options.recent_limit, |pos| parsed.get(&pos.path).and_then(|file| file.units.get(pos.index)));
        put(&mut files, staged, all, "recent_events.jsonl", recent.as_bytes());
        put(&mut files, staged, all, "relations.json", views.relations().as_bytes());
        put(&mut files, staged, all, &runtime_path, &runtime_bytes);
        state.runtime = Some((runtime_bytes, runtime));
        if state.topics.duplicates() == 0 {
            state.views = Some(views);
        }
        Ok(Derived { files, core_report })
    }
}

/// The staged files whose paths start with `prefix`, which ends in `/`.
fn under<'s>(staged: &'s BTreeMap<String, Vec<u8>>, prefix: &str) -> impl Iterator<Item = (&'s String, &'s Vec<u8>)> {
    // `0` follows `/` in byte order: the range holds exactly the paths under `prefix`.
    let end = format!("{}0", prefix.trim_end_matches('/'));
    staged.range::<str, _>((Bound::Included(prefix), Bound::Excluded(end.as_str())))
}

/// Component-wise path order, as `parse_tree` orders files (`a/z.md` before `a.md`).
fn tree_order(a: &&String, b: &&String) -> std::cmp::Ordering {
    a.split('/').cmp(b.split('/'))
}

/// The views of every parsed file from scratch, ranks given to new ids in parse order;
/// returns them and how many ranks it gave.
fn full(parsed: &BTreeMap<String, ParsedFile>, runtime: &mut RuntimeState) -> (LiveViews, usize) {
    let mut paths: Vec<&String> = parsed.keys().collect();
    paths.sort_by(tree_order);
    let merged = merge(&paths, parsed);
    let units: Vec<&Unit> = merged.iter().map(|(_, unit, _)| *unit).collect();
    let given = assign_creation_order(runtime, &units);
    let mut views = LiveViews::default();
    for (pos, unit, entries) in merged {
        views.add(pos, entries, rank(runtime, unit));
        views.add_relations(unit);
    }
    (views, given)
}

/// The last build's `views` with the `changed` files' old units taken out and their new
/// ones put in (all out before any in, so an id moving between files is handled); ranks
/// go to new ids in parse order, which only changed files can hold; returns the views and
/// the ids it ranked with their ranks.
fn patch(
    mut views: LiveViews,
    changed: &[(String, Option<ParsedFile>)],
    parsed: &BTreeMap<String, ParsedFile>,
    runtime: &mut RuntimeState,
) -> (LiveViews, Vec<(String, i64)>) {
    // A file whose ids and links are as they were leaves relations.json as it was.
    let same_links = |path: &String, old: &ParsedFile| parsed.get(path).is_some_and(|new| links(old) == links(new));
    for (path, old) in changed {
        let Some(old) = old else { continue };
        for (index, (unit, entries)) in old.units.iter().zip(&old.timeline).enumerate() {
            views.remove(TreePos { path: path.clone(), index }, entries, rank(runtime, unit));
        }
        if !same_links(path, old) {
            old.units.iter().for_each(|unit| views.remove_relations(unit));
        }
    }
    let mut paths: Vec<&String> =
        changed.iter().map(|(path, _)| path).filter(|path| parsed.contains_key(*path)).collect();
    paths.sort_by(tree_order);
    let units: Vec<&Unit> = paths.iter().filter_map(|path| parsed.get(*path)).flat_map(|file| &file.units).collect();
    let fresh: Vec<&Unit> = units.iter().copied().filter(|unit| runtime.rank(&unit.memory_id).is_none()).collect();
    assign_creation_order(runtime, &fresh);
    let ranked = fresh.iter().map(|unit| (unit.memory_id.clone(), rank(runtime, unit))).collect();
    for (path, old) in changed {
        let Some(file) = parsed.get(path) else { continue };
        for (index, (unit, entries)) in file.units.iter().zip(&file.timeline).enumerate() {
            views.add(TreePos { path: path.clone(), index }, entries, rank(runtime, unit));
        }
        if !old.as_ref().is_some_and(|old| same_links(path, old)) {
            file.units.iter().for_each(|unit| views.add_relations(unit));
        }
    }
    (views, ranked)
}

/// The ids and link targets of a file's units, in order.
fn links(file: &ParsedFile) -> Vec<(&String, &Vec<String>)> {
    file.units.iter().map(|unit| (&unit.memory_id, &unit.relation_targets)).collect()
}

/// The creation rank of `unit` (every unit has one once ranks are given).
fn rank(runtime: &RuntimeState, unit: &Unit) -> i64 {
    runtime.rank(&unit.memory_id).unwrap_or(i64::MAX)
}

/// How the staged sources differ from the cached ones.
enum Sources {
    /// Not at all.
    Same,
    /// Only by frames appended to v2 archives, with these source ids.
    Appended(HashSet<String>),
    /// Otherwise: an archive rewritten or removed, or a file that is not a v2 archive.
    Other,
}

/// Bring the source cache in step with `staged` and say how it changed.
fn refresh_sources(
    cache: &mut HashMap<String, CachedSource>,
    staged: &BTreeMap<String, Vec<u8>>,
    suspect: impl Fn(&String) -> bool,
) -> Sources {
    let mut change = Sources::Same;
    let mut live = 0;
    for (path, bytes) in staged.iter().filter(|(path, _)| path.starts_with("sources/")) {
        live += 1;
        let old = cache.get(path).map(|cached| cached.bytes.as_slice());
        if old.is_some_and(|old| !suspect(path) || old == bytes.as_slice()) {
            continue;
        }
        change = match (change, appended_source_ids(path, old.unwrap_or_default(), bytes)) {
            (Sources::Other, _) | (_, None) => Sources::Other,
            (Sources::Same, Some(ids)) => Sources::Appended(ids.into_iter().collect()),
            (Sources::Appended(mut all), Some(ids)) => {
                all.extend(ids);
                Sources::Appended(all)
            }
        };
        let trusted = trusted_source_ids(path, &String::from_utf8_lossy(bytes)).into_iter().collect();
        cache.insert(path.clone(), CachedSource { bytes: bytes.clone(), trusted });
    }
    if cache.len() != live {
        change = Sources::Other;
        cache.retain(|path, _| staged.contains_key(path));
    }
    change
}

/// The units of every file in `paths` order with their places and timeline entries, a
/// later duplicate of an id dropped (as in `parse_tree`).
fn merge<'c>(paths: &[&String], parsed: &'c BTreeMap<String, ParsedFile>) -> Vec<(TreePos, &'c Unit, &'c UnitEntries)> {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut merged = Vec::new();
    for path in paths {
        let Some(file) = parsed.get(path.as_str()) else { continue };
        for (index, (unit, entries)) in file.units.iter().zip(&file.timeline).enumerate() {
            if seen.insert(unit.memory_id.as_str()) {
                merged.push((TreePos { path: (*path).clone(), index }, unit, entries));
            }
        }
    }
    merged
}

/// Put `bytes` at `path` in `files`, unless only changes are wanted (`all` false) and the
/// staged file already holds them: the transaction leaves a derived file not returned as
/// it stands. Whether it put them.
fn put(files: &mut DerivedFiles, staged: &BTreeMap<String, Vec<u8>>, all: bool, path: &str, bytes: &[u8]) -> bool {
    let wanted = all || staged.get(path).is_none_or(|staged| staged.as_slice() != bytes);
    if wanted {
        files.insert(path.to_owned(), Some(bytes.to_vec()));
    }
    wanted
}

/// Block ids of `topics/core.md` (its `units`) citing a source outside the trusted-id
/// set (§3.6), which is built from every staged source file.
fn pending_core_blocks(trusted: &HashSet<String>, units: &[Unit]) -> BTreeSet<String> {
    units
        .iter()
        .filter(|unit| !unit.source_refs.iter().all(|id| trusted.contains(id.as_str())))
        .map(|unit| unit.memory_id.clone())
        .collect()
}

/// Render `core.md`, or reuse the last render when its inputs are the same.
fn render_cached<'c>(
    cache: &'c mut Option<CachedCore>,
    core: &[u8],
    pending: BTreeSet<String>,
    budget: usize,
) -> Result<&'c CoreRender, Error> {
    let cached = match cache.take() {
        Some(last) if last.text == core && last.pending == pending && last.budget == budget => last,
        _ => {
            let text =
                std::str::from_utf8(core).map_err(|_| Error::new(ErrorCode::NotUtf8, TOPIC_CORE, "not UTF-8"))?;
            let render = render_core(text, &pending, budget);
            CachedCore { text: core.to_vec(), pending, budget, render }
        }
    };
    Ok(&cache.insert(cached).render)
}

impl Derive for ViewsCache {
    fn derive(
        &self,
        staged: &BTreeMap<String, Vec<u8>>,
        runtime_dir: &str,
    ) -> Result<DerivedFiles, scriptorium_transaction::Error> {
        self.build(staged, runtime_dir).map(|derived| derived.files).map_err(|error| error.into_transaction())
    }

    fn derive_delta(
        &self,
        staged: &BTreeMap<String, Vec<u8>>,
        runtime_dir: &str,
        delta: &StageDelta<'_>,
    ) -> Result<DerivedFiles, scriptorium_transaction::Error> {
        self.build_delta(staged, runtime_dir, delta.base_revision(), delta.changed())
            .map(|derived| derived.files)
            .map_err(|error| error.into_transaction())
    }

    fn installed(&self, revision: &str) {
        ViewsCache::installed(self, revision);
    }

    fn promote(&self, staged: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
        migrate_root_core(staged)
    }
}
