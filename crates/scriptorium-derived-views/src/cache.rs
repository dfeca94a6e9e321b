//! [`ViewsCache`]: the derived-view builder that remembers what it parsed, so that a
//! long-lived process (the backend, a benchmark) re-parses only the topic files whose
//! bytes changed since its last build. A fresh cache is a full rebuild, and
//! [`DerivedViews::build`] is exactly that, so incremental and full builds share one code
//! path and must agree byte for byte (the `incremental` property test checks it).
//!
//! Units of a file depend on the file and on the source archives its citations resolve
//! against; any change under `sources/` therefore drops every cached topic (as the
//! retrieval cache does). Duplicate ids across files are settled at merge time, the
//! first file in component-wise path order winning, as `parse_tree` does.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use scriptorium_archive_format::trusted_source_ids;
use scriptorium_topic_markdown::{ErrorCode as TopicCode, Mode, SourceLookup, SourceResolver, Unit, parse_tree};
use scriptorium_transaction::{CORE_REPORT_FILE, Derive, DerivedFiles, RuntimeState};

use crate::core_render::{CoreRender, render_core};
use crate::error::{Error, ErrorCode};
use crate::migrate::{ROOT_CORE, TOPIC_CORE, migrate_root_core};
use crate::order::assign_creation_order;
use crate::recent::render_recent;
use crate::relations::render_relations;
use crate::timeline::{UnitEntries, assemble, unit_entries};
use crate::views::{Derived, DerivedViews};

/// A [`DerivedViews`] builder that reuses the parsed units of unchanged topic files
/// between builds. Interior mutability keeps it usable behind `&self`, as the
/// [`Derive`] trait requires; it is not `Sync` (one writer at a time holds the lock).
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
}

#[derive(Debug, Default)]
struct State {
    topics: HashMap<String, ParsedFile>,
    sources: HashMap<String, CachedSource>,
    core: Option<CachedCore>,
    /// The `runtime.json` bytes the last build wrote and the state they hold, so an
    /// unchanged file is not parsed again.
    runtime: Option<(Vec<u8>, RuntimeState)>,
    stats: BuildStats,
}

/// One topic file parsed on its own, strictly, with the timeline entries of each unit.
#[derive(Debug)]
struct ParsedFile {
    bytes: Vec<u8>,
    units: Vec<Unit>,
    timeline: Vec<UnitEntries>,
    violations: usize,
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

/// The staged source archives, read one at a time by the resolver (never copied whole).
struct StagedSources<'a>(&'a BTreeMap<String, Vec<u8>>);

impl SourceLookup for StagedSources<'_> {
    fn read_source(&self, path: &str) -> std::io::Result<Option<Vec<u8>>> {
        Ok(self.0.get(path).filter(|_| path.starts_with("sources/")).cloned())
    }
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

    /// Build every derived view of `staged` (see [`Derive::derive`]), re-parsing only
    /// the topic files that changed since the last build.
    ///
    /// # Errors
    /// As [`DerivedViews::build`].
    pub fn build(&self, staged: &BTreeMap<String, Vec<u8>>, runtime_dir: &str) -> Result<Derived, Error> {
        let mut state = self.state.borrow_mut();
        let mut topics: Vec<(&String, &Vec<u8>)> =
            staged.iter().filter(|(path, _)| path.starts_with("topics/") && path.ends_with(".md")).collect();
        // `parse_tree` orders files component by component (`a/z.md` before `a.md`).
        topics.sort_by(|(a, _), (b, _)| a.split('/').cmp(b.split('/')));

        if refresh_sources(&mut state.sources, staged) {
            state.topics.clear();
        }
        let live: HashSet<&str> = topics.iter().map(|(path, _)| path.as_str()).collect();
        state.topics.retain(|path, _| live.contains(path.as_str()));
        let resolver = SourceResolver::new(StagedSources(staged));
        let mut stats = BuildStats::default();
        let mut not_utf8 = Vec::new();
        for (path, bytes) in &topics {
            if state.topics.get(path.as_str()).is_some_and(|cached| cached.bytes == **bytes) {
                stats.topics_reused += 1;
                continue;
            }
            stats.topics_parsed += 1;
            // Only changed files are checked: a cached one parsed, so it is UTF-8.
            if std::str::from_utf8(bytes).is_err() {
                not_utf8.push(path.as_str());
                continue;
            }
            let (_, units, violations) =
                parse_tree([(path.as_str(), bytes.as_slice())], &resolver, Mode::Strict).into_parts();
            if let Some(read) = violations.iter().find(|v| v.code() == TopicCode::SourceReadFailed) {
                state.topics.remove(path.as_str());
                return Err(Error::new(ErrorCode::SourceUnreadable, read.file(), read.to_string()));
            }
            let timeline = units.iter().map(unit_entries).collect();
            let parsed = ParsedFile { bytes: bytes.to_vec(), units, timeline, violations: violations.len() };
            state.topics.insert((*path).clone(), parsed);
        }
        state.stats = stats;
        // The first such file in path order, as a whole-tree check would name it.
        if let Some(path) = not_utf8.into_iter().min() {
            return Err(Error::new(ErrorCode::NotUtf8, path, "topic file is not UTF-8"));
        }

        let state = &mut *state;
        let (units, entries, valid) = merge(&topics, &state.topics);
        let mut files = DerivedFiles::new();
        let report_path = format!("{runtime_dir}/{CORE_REPORT_FILE}");
        let mut core_report = None;
        if let Some(core) = staged.get(TOPIC_CORE) {
            // A tree that does not parse has no reliable citations: nothing counts as pending.
            let pending = if valid { pending_core_blocks(&state.sources, &units) } else { BTreeSet::new() };
            let render = render_cached(&mut state.core, core, pending, self.options.core_budget)?;
            files.insert(ROOT_CORE.to_owned(), Some(render.text.clone().into_bytes()));
            files.insert(report_path, Some(render.report.to_bytes()));
            core_report = Some(render.report.clone());
        } else {
            // §7.1: a root core.md rendered from a master that is gone goes with it; the
            // committed report shows it was rendered. A hand-written one (no report) stays.
            if staged.contains_key(&report_path) && staged.contains_key(ROOT_CORE) {
                files.insert(ROOT_CORE.to_owned(), None);
            }
            files.insert(report_path, None);
        }

        let runtime_path = format!("{runtime_dir}/runtime.json");
        let committed = staged.get(&runtime_path);
        let (mut runtime, unchanged) = match state.runtime.take() {
            Some((bytes, runtime)) if Some(&bytes) == committed => (runtime, Some(bytes)),
            _ => (committed.map(|bytes| RuntimeState::parse(bytes)).unwrap_or_default(), None),
        };
        let given = assign_creation_order(&mut runtime, &units);
        let runtime_bytes = match unchanged {
            Some(bytes) if given == 0 => bytes,
            _ => runtime.to_bytes(),
        };

        // The timeline is deleted and recreated whole: every old file not rebuilt goes.
        let timeline = assemble(entries.into_iter().flatten().map(|(path, entry)| (path.as_str(), entry)));
        for path in staged.keys().filter(|path| path.starts_with("timeline/") && !timeline.contains_key(*path)) {
            files.insert(path.clone(), None);
        }
        for (path, text) in timeline {
            files.insert(path, Some(text.into_bytes()));
        }
        let recent = render_recent(&units, |id| runtime.rank(id).unwrap_or(i64::MAX), self.options.recent_limit);
        files.insert("recent_events.jsonl".to_owned(), Some(recent.into_bytes()));
        files.insert("relations.json".to_owned(), Some(render_relations(&units).into_bytes()));
        files.insert(runtime_path, Some(runtime_bytes.clone()));
        state.runtime = Some((runtime_bytes, runtime));
        Ok(Derived { files, core_report })
    }
}

/// Bring the source cache in step with `staged`; whether any archive was added,
/// removed or changed.
fn refresh_sources(cache: &mut HashMap<String, CachedSource>, staged: &BTreeMap<String, Vec<u8>>) -> bool {
    let mut changed = false;
    let mut live = 0;
    for (path, bytes) in staged.iter().filter(|(path, _)| path.starts_with("sources/")) {
        live += 1;
        if cache.get(path).is_some_and(|cached| cached.bytes == *bytes) {
            continue;
        }
        changed = true;
        let trusted = trusted_source_ids(path, &String::from_utf8_lossy(bytes)).into_iter().collect();
        cache.insert(path.clone(), CachedSource { bytes: bytes.clone(), trusted });
    }
    if cache.len() != live {
        changed = true;
        cache.retain(|path, _| staged.contains_key(path));
    }
    changed
}

/// The units of every file in order and their timeline entries, a later duplicate of
/// an id dropped (as in `parse_tree`), and whether the whole tree parsed without a
/// violation.
fn merge<'c>(
    topics: &[(&String, &Vec<u8>)],
    parsed: &'c HashMap<String, ParsedFile>,
) -> (Vec<&'c Unit>, Vec<&'c UnitEntries>, bool) {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut units = Vec::new();
    let mut entries = Vec::new();
    let mut valid = true;
    for (path, _) in topics {
        let Some(file) = parsed.get(path.as_str()) else { continue };
        valid &= file.violations == 0;
        for (unit, timeline) in file.units.iter().zip(&file.timeline) {
            if seen.insert(unit.memory_id.as_str()) {
                units.push(unit);
                entries.push(timeline);
            } else {
                valid = false;
            }
        }
    }
    (units, entries, valid)
}

/// Block ids of `topics/core.md` citing a source outside the trusted-id set (§3.6),
/// which is built from every staged source file.
fn pending_core_blocks(sources: &HashMap<String, CachedSource>, units: &[&Unit]) -> BTreeSet<String> {
    let trusted: HashSet<&str> = sources.values().flat_map(|s| s.trusted.iter().map(String::as_str)).collect();
    units
        .iter()
        .filter(|unit| unit.path == TOPIC_CORE && !unit.source_refs.iter().all(|id| trusted.contains(id.as_str())))
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

    fn promote(&self, staged: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
        migrate_root_core(staged)
    }
}
