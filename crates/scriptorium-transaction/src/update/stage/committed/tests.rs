//! The cached committed side equals a fresh read and lenient parse of the whole tree
//! after any sequence of installs, including ids that move between files or occur in
//! two files at once (where path order decides which unit the baseline keeps).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proptest::prelude::*;
use scriptorium_topic_markdown::{
    Baseline, MemorySources, Mode, NormalizeOptions, Normalized, SourceResolver, Unit, normalize, parse_tree,
};

use super::*;
use crate::revision::{RUNTIME_DIR, revision};
use crate::test_support::{TempDir, write_tree};
use crate::vfs::RealVfs;

/// Block ids drawn from a small pool, so that files often share one.
const IDS: [&str; 5] = ["aaaa0001", "aaaa0002", "aaaa0003", "bbbb0001", "bbbb0002"];
const PATHS: [&str; 5] = ["topics/a.md", "topics/a/b.md", "topics/a-c.md", "topics/z.md", "topics/notes.txt"];

/// A topic file with one cited paragraph per `(id, word)`.
fn topic(paragraphs: &[(usize, usize)]) -> Vec<u8> {
    let mut text = String::from("# Topic\n");
    for (n, (id, word)) in paragraphs.iter().enumerate() {
        let id = IDS.get(*id).copied().unwrap_or("cccc0001");
        text.push_str(&format!("\nFact {word} {n}.[^e-{n}] ^{id}\n"));
    }
    for n in 0..paragraphs.len() {
        text.push_str(&format!("\n[^e-{n}]: Time: `2024-01-02`; Sources: [D1:{n}](D1:{n})\n"));
    }
    text.into_bytes()
}

fn comparable(baseline: &Baseline) -> BTreeMap<String, Unit> {
    baseline
        .ids()
        .into_iter()
        .filter_map(|id| baseline.unit(id))
        .map(|unit| (unit.memory_id.clone(), Unit { created_order: 0, ..unit.clone() }))
        .collect()
}

/// What the update computed before the cache: read everything, parse everything.
fn from_scratch(root: &Path) -> (BTreeMap<String, Vec<u8>>, BTreeMap<String, Unit>) {
    let vfs = RealVfs::new(root);
    let topics = committed_topics(&vfs).expect("read topics");
    let sources = SourceResolver::new(MemorySources::new());
    let baseline = Baseline::from_units(parse_tree(&topics, &sources, Mode::Lenient).into_parts().1);
    (topics, comparable(&baseline))
}

fn check(cache: &mut CommittedCache, root: &Path) -> Result<(), TestCaseError> {
    let vfs = RealVfs::new(root);
    let current = revision(&vfs, RUNTIME_DIR).expect("revision");
    let sources = SourceResolver::new(MemorySources::new());
    let committed = cache.refresh(&vfs, &current, &sources, &BTreeMap::new(), || false).expect("refresh");
    let (topics, baseline) = from_scratch(root);
    prop_assert_eq!(committed.topics, &topics);
    prop_assert_eq!(comparable(&committed.baseline), baseline);
    Ok(())
}

/// Changes that no normalization made (as by hand, or a promotion).
fn not_normalized() -> Normalized {
    Normalized {
        files: BTreeMap::new(),
        pruned: Vec::new(),
        block_id_map: BTreeMap::new(),
        evidence_id_map: BTreeMap::new(),
        units: Vec::new(),
    }
}

/// One install: each path gets new content (`Some`) or is deleted (`None`).
type Install = Vec<(usize, Option<Vec<(usize, usize)>>)>;

fn install() -> impl Strategy<Value = Install> {
    let paragraphs = proptest::collection::vec((0..IDS.len() + 1, 0..3usize), 0..4);
    proptest::collection::vec((0..PATHS.len(), proptest::option::weighted(0.8, paragraphs)), 1..4)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn installs_keep_the_cache_equal_to_a_fresh_parse(installs in proptest::collection::vec(install(), 1..8)) {
        let temp = TempDir::new("committed-prop");
        write_tree(temp.path(), &[("topics/a.md", &topic(&[(0, 0), (1, 1)])), ("topics/z.md", &topic(&[(3, 2)]))]);
        let mut cache = CommittedCache::default();
        check(&mut cache, temp.path())?;
        for install in &installs {
            let mut changes = Changes::new();
            for (index, content) in install {
                let path = PATHS.get(*index).copied().unwrap_or("topics/a.md");
                let full = temp.path().join(path);
                match content {
                    Some(paragraphs) => {
                        let bytes = topic(paragraphs);
                        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
                        std::fs::write(&full, &bytes).expect("write");
                        changes.insert(path.to_owned(), Some(bytes));
                    }
                    None => {
                        let _ = std::fs::remove_file(&full);
                        changes.insert(path.to_owned(), None);
                    }
                }
            }
            cache.invalidate();
            let after = revision(&RealVfs::new(temp.path()), RUNTIME_DIR).expect("revision");
            cache.installed(&changes, after, &not_normalized(), &BTreeSet::new());
            check(&mut cache, temp.path())?;
        }
    }
}

#[test]
fn a_change_the_cache_did_not_install_reloads_everything() -> Result<(), TestCaseError> {
    let temp = TempDir::new("committed-hand-edit");
    write_tree(temp.path(), &[("topics/a.md", &topic(&[(0, 0)]))]);
    let mut cache = CommittedCache::default();
    check(&mut cache, temp.path())?;
    // A hand edit: the revision differs from the one the cache is valid at.
    write_tree(temp.path(), &[("topics/a.md", &topic(&[(1, 0)])), ("topics/b.md", &topic(&[(0, 1)]))]);
    check(&mut cache, temp.path())?;
    // An install the cache was told about, but a failed one (no `installed`): reload.
    cache.invalidate();
    check(&mut cache, temp.path())
}

#[test]
fn known_ids_extend_the_baseline_without_changing_the_cache() {
    let temp = TempDir::new("committed-known");
    write_tree(temp.path(), &[("topics/a.md", &topic(&[(0, 0)]))]);
    let vfs = RealVfs::new(temp.path());
    let current = revision(&vfs, RUNTIME_DIR).expect("revision");
    let sources = SourceResolver::new(MemorySources::new());
    let known = BTreeMap::from([("topics/old.md".to_owned(), topic(&[(0, 2), (4, 1)]))]);
    let mut cache = CommittedCache::default();
    let committed = cache.refresh(&vfs, &current, &sources, &known, || false).expect("refresh");
    assert_eq!(committed.baseline.ids().into_iter().collect::<Vec<_>>(), ["aaaa0001", "bbbb0002"]);
    assert_eq!(committed.baseline.unit("aaaa0001").map(|unit| unit.path.as_str()), Some("topics/a.md"));
    let committed = cache.refresh(&vfs, &current, &sources, &BTreeMap::new(), || false).expect("refresh");
    assert_eq!(committed.baseline.len(), 1);
}

/// A raw paragraph citing new evidence under the local label `e<n>`.
fn raw_paragraph(text: &str, n: usize) -> String {
    format!("\n{text}.[^e{n}]\n\n[^e{n}]: Time: `2024-02-0{n}`; Sources: [D1:{n}](D1:{n})\n")
}

#[test]
fn the_stage_normalizes_like_the_whole_tree_and_goes_incremental_once_normal() {
    let temp = TempDir::new("committed-stage");
    let a = format!("# A\n{}", raw_paragraph("Craig likes tea", 1));
    let b = format!("# B\n{}", raw_paragraph("Dave reviews code", 2));
    write_tree(temp.path(), &[("topics/a.md", a.as_bytes()), ("topics/b.md", b.as_bytes())]);
    let vfs = RealVfs::new(temp.path());
    // Plain handles must name archived turns: the normalizer refuses dangling ones.
    let d1: String = (1..10).map(|n| format!("<a id=\"d1-{n}\"></a>\n[2024] user: turn {n} [D1:{n}]\n\n")).collect();
    let sources = SourceResolver::new(MemorySources::from_iter([("sources/D1.md", format!("# D1\n\n{d1}"))]));
    let options = NormalizeOptions::default();
    let mut cache = CommittedCache::default();
    let edits: [(&str, &str); 4] = [
        ("topics/a.md", ""),
        ("topics/a.md", "Craig also likes coffee"),
        ("topics/c/new.md", "Ann moved to Oslo"),
        ("topics/b.md", "Dave plays chess"),
    ];
    for (round, (path, text)) in edits.iter().enumerate() {
        let current = revision(&vfs, RUNTIME_DIR).expect("revision");
        let committed = cache.refresh(&vfs, &current, &sources, &BTreeMap::new(), || false).expect("refresh");
        assert_eq!(committed.normal_index.is_some(), round > 0, "round {round}");
        assert_eq!(comparable(&committed.baseline), from_scratch(temp.path()).1, "round {round}");
        let mut staged = committed.topics.clone();
        if !text.is_empty() {
            let mut body = staged.get(*path).cloned().unwrap_or_else(|| b"# New\n".to_vec());
            body.extend_from_slice(raw_paragraph(text, round + 2).as_bytes());
            staged.insert((*path).to_owned(), body);
        }
        let whole = normalize(&staged, &committed.baseline, &sources, &options).expect("whole tree");
        if let Some(index) = committed.normal_index {
            let changed: BTreeMap<String, Option<Vec<u8>>> = staged
                .iter()
                .filter(|(p, bytes)| committed.topics.get(*p) != Some(*bytes))
                .map(|(p, bytes)| (p.clone(), Some(bytes.clone())))
                .collect();
            let part = scriptorium_topic_markdown::normalize_changed(
                index,
                &changed,
                &committed.baseline,
                &sources,
                &BTreeSet::new(),
                &options,
            );
            assert!(part.is_some(), "round {round}: the edit stays within its file");
        }
        let stage = normalize_stage(&committed, staged, &sources, &BTreeSet::new(), &options).expect("stage");
        assert_eq!(stage.files, whole.files, "round {round}");
        assert_eq!((&stage.block_id_map, &stage.evidence_id_map), (&whole.block_id_map, &whole.evidence_id_map));
        let mut changes = Changes::new();
        for (path, bytes) in &stage.files {
            if committed.topics.get(path) != Some(bytes) {
                changes.insert(path.clone(), Some(bytes.clone()));
            }
        }
        write_tree(
            temp.path(),
            &changes.iter().map(|(p, b)| (p.as_str(), b.as_deref().unwrap_or_default())).collect::<Vec<_>>(),
        );
        cache.invalidate();
        cache.installed(&changes, revision(&vfs, RUNTIME_DIR).expect("revision"), &stage, &BTreeSet::new());
    }
}
