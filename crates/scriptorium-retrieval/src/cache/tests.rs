//! The persistent index on real temporary workspaces: a damaged, foreign, truncated or
//! other-version cache is rebuilt, never trusted; an incremental refresh equals a
//! rebuild from scratch (seeded differential generator of workspaces, edits and
//! queries); concurrent writers leave a whole cache that the next open refreshes.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, UNIX_EPOCH};

use super::*;
use crate::filter::Filters;
use crate::hit::Hit;
use crate::index::stored::StoredContent;
use crate::search::Bm25Options;

/// A fresh temporary workspace seeded with the repository's example workspace.
struct Workspace {
    root: PathBuf,
}

impl Workspace {
    fn new(name: &str) -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!("scriptorium-cache-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/workspace");
        copy_tree(&example, &root);
        let workspace = Workspace { root };
        for file in list_files(&workspace.root).expect("list") {
            age(&file.disk);
        }
        workspace
    }

    /// Write a file and give it an old, unique mtime, so its fingerprint is trusted
    /// (not racy) and differs from every earlier write's.
    fn write(&self, relative: &str, text: &str) {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
        age(&path);
    }

    fn remove(&self, relative: &str) {
        std::fs::remove_file(self.root.join(relative)).expect("remove");
    }

    fn cache(&self) -> PathBuf {
        self.root.join(CACHE_PATH)
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

fn age(path: &Path) {
    static TICK: AtomicU64 = AtomicU64::new(0);
    let tick = TICK.fetch_add(1, Ordering::Relaxed);
    let when = UNIX_EPOCH + Duration::from_secs(1_600_000_000) + Duration::from_millis(tick);
    std::fs::File::options().write(true).open(path).expect("open").set_modified(when).expect("set mtime");
}

fn open(root: &Path) -> (Index, OpenReport) {
    Index::open_with_report(root).expect("open")
}

fn all_hits(index: &Index, query: &str, filters: &Filters) -> Vec<Hit> {
    let options = Bm25Options { top_k: 50, rerank: true, filters: filters.clone() };
    index.search(query, &options).expect("search")
}

/// The cached index answers like a fresh build: same events (with trust) and hits.
fn assert_same(cached: &Index, root: &Path, queries: &[&str]) {
    let fresh = Index::from_workspace(root).expect("rebuild");
    let a: Vec<&MemoryEventRef> = cached.events().collect();
    let b: Vec<&MemoryEventRef> = fresh.events().collect();
    assert_eq!(a, b, "events differ");
    for query in queries {
        for filters in [Filters::default(), Filters { path_prefix: Some("sources".into()), ..Filters::default() }] {
            assert_eq!(all_hits(cached, query, &filters), all_hits(&fresh, query, &filters), "query {query:?}");
        }
    }
}

type MemoryEventRef = crate::event::MemoryEvent;

const QUERIES: [&str; 5] = ["tomatoes basil", "book club Ada", "raised bed water", "reading list December", "x"];

#[test]
fn first_open_builds_and_saves_second_reuses_everything() {
    let ws = Workspace::new("reuse");
    let (first, report) = open(&ws.root);
    assert_eq!(report.cache, CacheState::Missing);
    assert!(report.saved, "{report:?}");
    assert_eq!(report.read_files, 5);
    assert!(ws.cache().is_file());
    assert_same(&first, &ws.root, &QUERIES);
    let before = std::fs::read(ws.cache()).expect("cache");

    let (second, report) = open(&ws.root);
    assert_eq!(report.cache, CacheState::Loaded);
    assert_eq!((report.reused_files, report.read_files, report.removed_files), (5, 0, 0));
    assert!(!report.saved, "an unchanged workspace is not written");
    assert_eq!(std::fs::read(ws.cache()).expect("cache"), before);
    assert_same(&second, &ws.root, &QUERIES);
    // The reference's cache is never read or written.
    assert!(!ws.root.join(".scriptorium-bm25.json").exists());
}

#[test]
fn an_edited_topic_is_reread_alone_and_a_source_edit_rereads_topics() {
    let ws = Workspace::new("edit");
    open(&ws.root);
    let topic = "topics/garden/raised-bed.md";
    let text = std::fs::read_to_string(ws.root.join(topic)).expect("read");
    ws.write(topic, &text.replace("two litres", "three litres"));
    let (index, report) = open(&ws.root);
    assert_eq!((report.cache.clone(), report.read_files, report.reused_files), (CacheState::Loaded, 1, 4));
    assert!(report.saved);
    assert_eq!(
        all_hits(&index, "three litres", &Filters::default()).first().map(|h| h.event.path.as_str()),
        Some(topic)
    );
    assert_same(&index, &ws.root, &QUERIES);

    // Removing a cited source leaves the garden claims without refs, so they are no
    // longer events: only a re-read of every topic shows that.
    ws.remove("sources/openprogram/_v2/sess-garden.md");
    let (index, report) = open(&ws.root);
    assert_eq!((report.removed_files, report.read_files), (1, 2));
    assert_same(&index, &ws.root, &QUERIES);
    assert_eq!(index.events().filter(|e| e.path == topic).count(), 0);
}

/// Every kind of bad cache is ignored and replaced by a good one, never trusted.
#[test]
fn damaged_foreign_truncated_and_other_version_caches_are_rebuilt() {
    let ws = Workspace::new("damage");
    let (good, _) = open(&ws.root);
    let bytes = std::fs::read(ws.cache()).expect("cache");
    let payload = unframe(&bytes).expect("valid").to_vec();
    let mut flipped = bytes.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x40;
    let mut newer = bytes.clone();
    newer[8..12].copy_from_slice(&(CACHE_FORMAT_VERSION + 1).to_le_bytes());
    let mut older = bytes.clone();
    older[8..12].copy_from_slice(&(CACHE_OLDEST_SUPPORTED_VERSION - 1).to_le_bytes());
    // A well-framed payload that decodes to nonsense (a lying count) is still rejected.
    let lying = frame(&[0xff, 0xff, 0xff, 0x0f]);
    // A well-framed cache of a different workspace state: its fingerprints do not match.
    let mut other = Index::new();
    other.apply([FileChange::Upsert { path: "topics/ghost.md".into(), events: Vec::new() }]);
    let foreign_state = frame(&other.encode(&BTreeMap::new()));
    // The length of part 1 made longer than the payload, or one byte off.
    let prefix = HEADER_LEN..HEADER_LEN + codec::PART_PREFIX;
    let mut overlong = bytes.clone();
    overlong[prefix.clone()].copy_from_slice(&u64::MAX.to_le_bytes());
    let mut shifted = bytes.clone();
    let first_len = u64::from_le_bytes(bytes[prefix.clone()].try_into().expect("8 bytes"));
    shifted[prefix].copy_from_slice(&(first_len + 1).to_le_bytes());
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("header only", bytes.get(..HEADER_LEN).expect("header").to_vec()),
        ("overlong part", overlong),
        ("shifted parts", shifted),
        ("foreign", b"{\"version\": 10, \"files\": {}}".to_vec()),
        ("truncated", bytes.get(..bytes.len() / 2).expect("half").to_vec()),
        ("extended", [bytes.as_slice(), b"junk"].concat()),
        ("flipped", flipped),
        ("newer", newer),
        ("older", older),
        ("lying", lying),
    ];
    for (name, damaged) in cases {
        std::fs::write(ws.cache(), &damaged).expect("write");
        let (index, report) = open(&ws.root);
        assert!(matches!(report.cache, CacheState::Rejected(_)), "{name}: {report:?}");
        assert_eq!(report.read_files, 5, "{name}");
        assert!(report.saved, "{name}");
        assert_eq!(unframe(&std::fs::read(ws.cache()).expect("cache")).map(<[u8]>::len), Ok(payload.len()), "{name}");
        assert_same(&index, &ws.root, &QUERIES);
        assert_eq!(index.len(), good.len(), "{name}");
    }
    std::fs::write(ws.cache(), &foreign_state).expect("write");
    let (index, report) = open(&ws.root);
    assert_eq!((report.cache, report.removed_files, report.read_files), (CacheState::Loaded, 1, 5));
    assert_same(&index, &ws.root, &QUERIES);
}

#[test]
fn unwritable_runtime_dir_still_answers() {
    let ws = Workspace::new("unwritable");
    std::fs::write(ws.root.join(".scriptorium"), b"a file, not a folder").expect("write");
    let (index, report) = open(&ws.root);
    assert!(report.save_error.is_some(), "{report:?}");
    assert_same(&index, &ws.root, &QUERIES);
}

#[cfg(unix)]
#[test]
fn a_linked_cache_is_never_followed() {
    let ws = Workspace::new("link");
    open(&ws.root);
    let elsewhere = ws.root.join("elsewhere.bin");
    std::fs::rename(ws.cache(), &elsewhere).expect("move");
    std::os::unix::fs::symlink(&elsewhere, ws.cache()).expect("symlink");
    let (_, report) = open(&ws.root);
    assert_eq!(report.cache, CacheState::Rejected("not a regular file".into()));
}

/// Concurrent opens of a changing workspace: every cache file on disk is whole at every
/// moment, and after the dust settles one more open equals a rebuild.
#[test]
fn concurrent_writers_leave_a_whole_cache_that_is_refreshed() {
    let ws = Workspace::new("concurrent");
    open(&ws.root);
    std::thread::scope(|scope| {
        for worker in 0..4 {
            let ws = &ws;
            scope.spawn(move || {
                for round in 0..5 {
                    if worker == 0 {
                        let n = 10 + round;
                        let text = format!("# D{n}\n\n<a id=\"d{n}-1\"></a>\n[2024-01-02] user: round note [D{n}:1]\n");
                        ws.write(&format!("sources/D{n}.md"), &text);
                    }
                    let (_, report) = Index::open_with_report(&ws.root).expect("open");
                    assert!(!matches!(report.cache, CacheState::Rejected(_)), "{report:?}");
                    let bytes = std::fs::read(ws.cache()).expect("cache");
                    assert!(unframe(&bytes).is_ok(), "a reader saw a torn cache");
                }
            });
        }
    });
    let (index, _) = open(&ws.root);
    assert_same(&index, &ws.root, &["round note", "tomatoes"]);
    let rounds =
        all_hits(&index, "round", &Filters::default()).iter().filter(|h| h.event.content.contains("round")).count();
    assert_eq!(rounds, 5);
    let leftovers = std::fs::read_dir(ws.root.join(".scriptorium")).expect("dir").count();
    assert_eq!(leftovers, 1, "temporary files are renamed away");
}

/// SplitMix64, for the seeded differential test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const WORDS: [&str; 14] =
    ["tomato", "basil", "book", "club", "Ada", "reading", "list", "water", "sun", "bed", "host", "table", "夏天", "ß"];

fn sentence(rng: &mut Rng) -> String {
    (0..1 + rng.below(8)).map(|_| rng.pick(&WORDS)).collect::<Vec<_>>().join(" ")
}

/// A benchmark-style source `sources/D<n>.md` with `lines` records.
fn source_text(rng: &mut Rng, n: usize, lines: usize) -> String {
    let mut text = format!("# D{n}\n\n");
    for line in 1..=lines {
        let day = 1 + rng.below(28);
        text.push_str(&format!(
            "<a id=\"d{n}-{line}\"></a>\n[2024-01-{day:02}] user: {} [D{n}:{line}]\n\n",
            sentence(rng)
        ));
    }
    text
}

/// A topic citing benchmark records (some of which may not exist).
fn topic_text(rng: &mut Rng, n: usize) -> String {
    let mut text = format!("# Topic {n}\n\n## {}\n\n", rng.pick(&WORDS));
    let mut notes = String::new();
    for block in 0..1 + rng.below(3) {
        let (d, m) = (rng.below(6), 1 + rng.below(3));
        text.push_str(&format!("{}.[^e-{block}] ^{n:04x}{block:04x}\n\n", sentence(rng)));
        notes
            .push_str(&format!("[^e-{block}]: Time: `2024-01-0{}`; Sources: [D{d}:{m}](D{d}:{m})\n", 1 + rng.below(9)));
    }
    text + &notes
}

/// The differential property: after random edits (add, rewrite, delete, touch without
/// change, edits to the example's v2 archive), the incrementally refreshed index equals
/// the index rebuilt from scratch, for random queries with and without filters.
#[test]
fn incremental_refresh_equals_rebuild_on_seeded_workspaces() {
    for seed in 0..6u64 {
        let ws = Workspace::new(&format!("diff{seed}"));
        let mut rng = Rng(seed);
        for round in 0..6 {
            for _ in 0..1 + rng.below(4) {
                let n = rng.below(6);
                match rng.below(6) {
                    0 | 1 => {
                        let lines = 1 + rng.below(4);
                        ws.write(&format!("sources/D{n}.md"), &source_text(&mut rng, n, lines));
                    }
                    2 | 3 => ws.write(&format!("topics/t/{n}.md"), &topic_text(&mut rng, n)),
                    4 => {
                        let path =
                            if rng.below(2) == 0 { format!("sources/D{n}.md") } else { format!("topics/t/{n}.md") };
                        if ws.root.join(&path).exists() {
                            ws.remove(&path);
                        }
                    }
                    _ => {
                        let v2 = "sources/openprogram/_v2/sess-garden.md";
                        let text = std::fs::read_to_string(ws.root.join(v2)).expect("read");
                        ws.write(v2, &text.replacen("sun", rng.pick(&WORDS), 1));
                    }
                }
            }
            let (index, report) = open(&ws.root);
            assert_eq!(report.cache == CacheState::Loaded, round > 0, "seed {seed} round {round}: {report:?}");
            let queries: Vec<String> = (0..8).map(|_| sentence(&mut rng)).collect();
            let queries: Vec<&str> = queries.iter().map(String::as_str).collect();
            assert_same(&index, &ws.root, &queries);
            let speaker = Filters { speaker: Some("user".into()), ..Filters::default() };
            let window = Filters { date_from: Some("2024-01-10".into()), ..Filters::default() };
            let fresh = Index::from_workspace(&ws.root).expect("rebuild");
            for filters in [speaker, window] {
                for query in &queries {
                    assert_eq!(all_hits(&index, query, &filters), all_hits(&fresh, query, &filters), "seed {seed}");
                }
            }
        }
    }
}

/// A long-lived index refreshes in memory and writes the cache only when asked.
#[test]
fn refresh_in_process_then_save() {
    let ws = Workspace::new("refresh");
    let (mut index, _) = open(&ws.root);
    let before = std::fs::read(ws.cache()).expect("cache");
    let topic = "topics/people/book-club.md";
    let text = std::fs::read_to_string(ws.root.join(topic)).expect("read");
    ws.write(topic, &text.replace("one question", "one riddle"));
    let report = index.refresh(&ws.root).expect("refresh");
    assert_eq!((report.read_files, report.reused_files, report.saved), (1, 4, false));
    assert_eq!(std::fs::read(ws.cache()).expect("cache"), before, "refresh alone never writes");
    assert_same(&index, &ws.root, &["riddle", "question"]);
    let unchanged = index.refresh(&ws.root).expect("refresh");
    assert_eq!(unchanged.read_files, 0);
    index.save(&ws.root).expect("save");
    let (_, report) = open(&ws.root);
    assert_eq!((report.read_files, report.saved), (0, false), "the saved cache is current");
}

/// How many live events have their content on disk rather than in the index.
fn contents_on_disk(index: &Index) -> usize {
    (index.files().values())
        .flat_map(|file| index.live_slots(*file))
        .filter(|(_, entry)| matches!(entry.event.stored_content(), StoredContent::OnDisk { .. }))
        .count()
}

/// Source records are read back from their files, not held; topic claims (composed
/// text) are held. A cached index answers with the same text either way.
#[test]
fn source_contents_stay_on_disk_and_read_back_identically() {
    let ws = Workspace::new("on-disk");
    let (built, _) = open(&ws.root);
    let sources = built.paths().filter(|path| path.starts_with("sources/")).flat_map(|p| built.events_in(p)).count();
    assert!(sources > 0);
    assert_eq!(contents_on_disk(&built), sources, "every source record is a byte range of its file");
    let (loaded, report) = open(&ws.root);
    assert_eq!(report.cache, CacheState::Loaded);
    assert_eq!(contents_on_disk(&loaded), sources);
    assert_same(&loaded, &ws.root, &QUERIES);
}

/// A file rewritten after the index read it (and not refreshed since) never lends its
/// new bytes to an indexed event: reading the content back fails instead, and a refresh
/// brings the index up to date. Bytes appended after an event leave it readable.
#[test]
fn a_file_changed_behind_the_index_fails_to_read_back_never_misreads() {
    let ws = Workspace::new("behind");
    let (mut index, _) = open(&ws.root);
    let path = "sources/openprogram/_v2/sess-garden.md";
    let slots = |index: &Index| -> Vec<u32> {
        index.files().get(path).map(|file| index.live_slots(*file).map(|(slot, _)| slot).collect()).unwrap_or_default()
    };
    let original = std::fs::read_to_string(ws.root.join(path)).expect("read");
    let first = *slots(&index).first().expect("events");
    let content = index.slot(first).expect("slot").to_event().content;
    assert!(!content.is_empty());

    // Appending leaves every indexed byte range in place.
    std::fs::write(ws.root.join(path), format!("{original}\n")).expect("append");
    assert_eq!(index.slot(first).expect("slot").try_to_event().expect("readable").content, content);

    // The same length, other letters: the checksum tells.
    let swapped = original.replacen("hours of sun", "hours of SUN", 1);
    assert_ne!(swapped, original);
    std::fs::write(ws.root.join(path), &swapped).expect("rewrite");
    let err = index.slot(first).expect("slot").try_to_event().expect_err("changed behind the index");
    assert_eq!(err.code(), ErrorCode::ReadFailed);
    assert!(err.message().contains("refresh"), "{}", err.message());
    assert_eq!(index.slot(first).expect("slot").to_event().content, "", "never another text");
    // A search whose hits include that record fails the same way.
    let hits = index.search("hours of sun", &crate::Bm25Options::default());
    assert_eq!(hits.map(|hits| hits.len()).map_err(|e| e.code()), Err(ErrorCode::ReadFailed));
    // Gone altogether.
    ws.remove(path);
    assert!(index.slot(first).expect("slot").try_to_event().is_err());

    ws.write(path, &swapped);
    index.refresh(&ws.root).expect("refresh");
    let fresh = slots(&index);
    let upper = index.slot(*fresh.first().expect("events")).expect("slot").try_to_event().expect("readable");
    assert_eq!(upper.content, content.replacen("hours of sun", "hours of SUN", 1));
    assert_same(&index, &ws.root, &["SUN", "tomatoes"]);
}

/// Compaction (freed slots outnumber live ones) renumbers the index without re-reading
/// events: contents on disk stay there and read back the same.
#[test]
fn compaction_keeps_contents_on_disk() {
    let ws = Workspace::new("compact");
    let mut rng = Rng(7);
    let big = "sources/D9.md";
    ws.write(big, &source_text(&mut rng, 9, 1500));
    let (mut index, _) = open(&ws.root);
    let (before, slots) = (contents_on_disk(&index), index.slot_count());
    assert!(before >= 1500);
    // Rewriting the big file frees its 1500 slots, more than stay live: a rebuild.
    ws.write(big, &source_text(&mut rng, 9, 1400));
    index.refresh(&ws.root).expect("refresh");
    assert_eq!(index.slot_count(), slots - 100, "compacted: no freed slot left");
    assert_eq!(contents_on_disk(&index), before - 100);
    assert_same(&index, &ws.root, &QUERIES);
    assert_same(&index, &ws.root, &["raised bed", "user"]);
}
