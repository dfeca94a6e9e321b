//! `normalize_changed` against the whole-tree `normalize`: on random normal trees and
//! random edits (new evidence, rewording, blocks moved between files, links to other
//! files' blocks, removed blocks, deleted and new files), whenever it gives a result,
//! that result is byte for byte the whole-tree one restricted to the changed files, the
//! unchanged files come out of the whole-tree run untouched, and errors are left to the
//! whole-tree run.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;

use super::*;
use crate::normalize::{Removal, normalize};
use crate::source::MemorySources;
use crate::tree::parse_tree;

const PATHS: [&str; 5] = ["topics/a.md", "topics/b.md", "topics/x/c.md", "topics/x-d.md", "topics/new.md"];
const WORDS: [&str; 4] = ["Craig likes tea", "Dave reviews code", "Ann moved to Oslo", "Bo plays chess"];

fn sources() -> SourceResolver<MemorySources> {
    sources_to(6)
}

/// `sources/D1.md` with the anchors of turns 1 to `last`.
fn sources_to(last: usize) -> SourceResolver<MemorySources> {
    let mut text = String::from("# D1\n\n");
    for turn in 1..=last {
        text.push_str(&format!("<a id=\"d1-{turn}\"></a>\n[2024] user: turn {turn} [D1:{turn}]\n\n"));
    }
    let mut files = MemorySources::new();
    files.insert("sources/D1.md", text);
    SourceResolver::new(files)
}

/// A paragraph citing a new local label, with its definition.
fn paragraph(word: usize, turn: usize, label: usize, day: usize) -> (String, String) {
    let word = WORDS.get(word).copied().unwrap_or("Fact");
    (
        format!("{word} ({label}).[^e{label}]"),
        format!("[^e{label}]: Time: `2024-01-0{day}`; Sources: [D1:{turn}](D1:{turn})"),
    )
}

/// A raw topic file: a heading, paragraphs, their definitions, maybe a fence that
/// mentions a local label.
fn raw_file(paragraphs: &[(usize, usize, usize)], fence: Option<usize>) -> String {
    let mut body = String::from("# Topic\n");
    let mut definitions = Vec::new();
    for (n, (word, turn, day)) in paragraphs.iter().enumerate() {
        let (text, definition) = paragraph(*word, *turn, n + 1, *day);
        body.push_str(&format!("\n{text}\n"));
        definitions.push(definition);
    }
    if let Some(label) = fence {
        body.push_str(&format!("\n```\nsee [^e{label}]\n```\n"));
    }
    for definition in definitions {
        body.push_str(&format!("\n{definition}\n"));
    }
    body
}

#[derive(Clone, Debug)]
enum Edit {
    Append { file: usize, word: usize, turn: usize, label: usize },
    Reword { file: usize, nth: usize },
    Move { from: usize, nth: usize, to: usize, copy: bool },
    Drop { file: usize, nth: usize },
    Delete { file: usize },
    Link { file: usize, nth: usize, target: usize, target_nth: usize, right_path: bool },
}

fn edit() -> impl Strategy<Value = Edit> {
    let f = 0..PATHS.len();
    prop_oneof![
        3 => (f.clone(), 0..4usize, 1..7usize, 1..9usize)
            .prop_map(|(file, word, turn, label)| Edit::Append { file, word, turn, label }),
        2 => (f.clone(), 0..3usize).prop_map(|(file, nth)| Edit::Reword { file, nth }),
        2 => (f.clone(), 0..3usize, f.clone(), proptest::bool::weighted(0.2))
            .prop_map(|(from, nth, to, copy)| Edit::Move { from, nth, to, copy }),
        2 => (f.clone(), 0..3usize).prop_map(|(file, nth)| Edit::Drop { file, nth }),
        1 => f.clone().prop_map(|file| Edit::Delete { file }),
        2 => (f.clone(), 0..3usize, f, 0..3usize, any::<bool>()).prop_map(|(file, nth, target, target_nth, right_path)| {
            Edit::Link { file, nth, target, target_nth, right_path }
        }),
    ]
}

/// A link with the right path, as the committed tree has them.
fn link() -> impl Strategy<Value = Edit> {
    let f = 0..PATHS.len() - 1;
    (f.clone(), 0..3usize, f, 0..3usize).prop_map(|(file, nth, target, target_nth)| Edit::Link {
        file,
        nth,
        target,
        target_nth,
        right_path: true,
    })
}

fn path(index: usize) -> String {
    PATHS.get(index).copied().unwrap_or("topics/a.md").to_owned()
}

/// Line indexes of the block lines (`… ^id`) of a normal file, with their ids.
fn blocks(text: &str) -> Vec<(usize, String)> {
    text.split('\n')
        .enumerate()
        .filter(|(_, line)| !line.starts_with("[^") && line.contains(" ^"))
        .filter_map(|(n, line)| line.rsplit_once(" ^").map(|(_, id)| (n, id.to_owned())))
        .collect()
}

fn lines(text: &str) -> Vec<String> {
    text.split('\n').map(str::to_owned).collect()
}

/// The definition line for the first citation of `line`, if the file has it.
fn definition_of(all: &[String], line: &str) -> Option<usize> {
    let at = line.find("[^")?;
    let rest = line.get(at + 2..)?;
    let id = rest.get(..rest.find(']')?)?;
    all.iter().position(|l| l.starts_with(&format!("[^{id}]:")))
}

fn apply(tree: &mut BTreeMap<String, Vec<u8>>, edit: &Edit) {
    let text = |tree: &BTreeMap<String, Vec<u8>>, p: &str| tree.get(p).map(|b| String::from_utf8_lossy(b).into_owned());
    match edit {
        Edit::Append { file, word, turn, label } => {
            let p = path(*file);
            let mut body = text(tree, &p).unwrap_or_else(|| "# New\n".to_owned());
            // Labels 1..9: the same labels the committed fences may mention.
            let (paragraph, definition) = paragraph(*word, *turn, *label, 3);
            body.push_str(&format!("\n{paragraph}\n\n{definition}\n"));
            tree.insert(p, body.into_bytes());
        }
        Edit::Reword { file, nth } => {
            let p = path(*file);
            let Some(body) = text(tree, &p) else { return };
            let Some((n, _)) = blocks(&body).get(*nth).cloned() else { return };
            let mut all = lines(&body);
            if let Some(line) = all.get_mut(n) {
                *line = format!("Reworded: {line}");
            }
            tree.insert(p, all.join("\n").into_bytes());
        }
        Edit::Move { from, nth, to, copy } => {
            let (source, target) = (path(*from), path(*to));
            let Some(body) = text(tree, &source) else { return };
            let Some((n, _)) = blocks(&body).get(*nth).cloned() else { return };
            let mut all = lines(&body);
            let line = all.get(n).cloned().unwrap_or_default();
            let definition = definition_of(&all, &line).and_then(|d| all.get(d).cloned());
            if !copy {
                all.retain(|l| *l != line && Some(l) != definition.as_ref());
                tree.insert(source, all.join("\n").into_bytes());
            }
            let mut moved = text(tree, &target).unwrap_or_else(|| "# Moved\n".to_owned());
            moved.push_str(&format!("\n{line}\n"));
            if let Some(definition) = definition {
                moved.push_str(&format!("\n{definition}\n"));
            }
            tree.insert(target, moved.into_bytes());
        }
        Edit::Drop { file, nth } => {
            let p = path(*file);
            let Some(body) = text(tree, &p) else { return };
            let Some((n, _)) = blocks(&body).get(*nth).cloned() else { return };
            let mut all = lines(&body);
            let line = all.get(n).cloned().unwrap_or_default();
            let definition = definition_of(&all, &line).and_then(|d| all.get(d).cloned());
            all.retain(|l| *l != line && Some(l) != definition.as_ref());
            tree.insert(p, all.join("\n").into_bytes());
        }
        Edit::Delete { file } => {
            tree.remove(&path(*file));
        }
        Edit::Link { file, nth, target, target_nth, right_path } => {
            let (p, t) = (path(*file), path(*target));
            let (Some(body), Some(other)) = (text(tree, &p), text(tree, &t)) else { return };
            let Some((n, _)) = blocks(&body).get(*nth).cloned() else { return };
            let Some((_, id)) = blocks(&other).get(*target_nth).cloned() else { return };
            let href = if *right_path {
                crate::paths::quote_link_path(&crate::paths::relpath(&t, crate::paths::dirname(&p)))
            } else {
                "elsewhere.md".to_owned()
            };
            let mut all = lines(&body);
            if let Some(line) = all.get_mut(n) {
                *line = format!("See [that]({href}#^{id}). {line}");
            }
            tree.insert(p, all.join("\n").into_bytes());
        }
    }
}

type Tree = BTreeMap<String, Vec<u8>>;

/// A normal committed tree from raw files and links between their blocks, with its
/// baseline and index; `None` when it does not normalize or the result is not normal.
fn committed(
    raw: &Tree,
    links: &[Edit],
    resolver: &SourceResolver<MemorySources>,
) -> Option<(Tree, Baseline, CommittedIndex)> {
    let first = normalize(raw, &Baseline::empty(), resolver, &NormalizeOptions::default()).ok()?.files;
    let mut linked = first.clone();
    for link in links {
        apply(&mut linked, link);
    }
    let units = parse_tree(&first, resolver, Mode::Lenient).into_parts().1;
    let tree = normalize(&linked, &Baseline::from_units(units), resolver, &NormalizeOptions::default()).ok()?.files;
    let (documents, units, _) = parse_tree(&tree, resolver, Mode::Lenient).into_parts();
    let baseline = Baseline::from_units(units.iter().cloned());
    let again = normalize(&tree, &baseline, resolver, &NormalizeOptions::default()).ok()?.files;
    if again != tree {
        return None;
    }
    let mut index = CommittedIndex::new();
    for document in &documents {
        let own: Vec<Unit> = units.iter().filter(|u| u.path == document.path()).cloned().collect();
        index.insert(document, &own);
    }
    Some((tree, baseline, index))
}

fn without_order(units: impl IntoIterator<Item = Unit>) -> Vec<Unit> {
    units.into_iter().map(|unit| Unit { created_order: 0, ..unit }).collect()
}

static BOUNDED: AtomicUsize = AtomicUsize::new(0);
static CASES: AtomicUsize = AtomicUsize::new(0);

/// Raw files: (path index, paragraphs as (word, turn, day), label a fence mentions).
type RawFiles = Vec<(usize, Vec<(usize, usize, usize)>, Option<usize>)>;

fn raw_tree() -> impl Strategy<Value = RawFiles> {
    let paragraphs = proptest::collection::vec((0..4usize, 1..7usize, 1..4usize), 1..4);
    proptest::collection::vec((0..4usize, paragraphs, proptest::option::weighted(0.2, 1..9usize)), 1..5)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn changed_only_equals_the_whole_tree(
        raw in raw_tree(),
        links in proptest::collection::vec(link(), 0..4),
        edits in proptest::collection::vec(edit(), 1..4),
        allow_removal in any::<bool>(),
    ) {
        let resolver = sources();
        let raw: Tree = raw.iter().map(|(f, p, fence)| (path(*f), raw_file(p, *fence).into_bytes())).collect();
        let Some((tree, baseline, index)) = committed(&raw, &links, &resolver) else { return Ok(()) };
        let mut staged = tree.clone();
        for edit in &edits {
            apply(&mut staged, edit);
        }
        let mut changed: BTreeMap<String, Option<Vec<u8>>> = BTreeMap::new();
        for (p, bytes) in &staged {
            if tree.get(p) != Some(bytes) {
                changed.insert(p.clone(), Some(bytes.clone()));
            }
        }
        for p in tree.keys().filter(|p| !staged.contains_key(*p)) {
            changed.insert(p.clone(), None);
        }
        let removal = if allow_removal { Removal::Allowed } else { Removal::Forbidden };
        let options = NormalizeOptions::with_removal(removal);
        let whole = normalize(&staged, &baseline, &resolver, &options);
        CASES.fetch_add(1, Ordering::Relaxed);
        let Some(part) = normalize_changed(&index, &changed, &baseline, &resolver, &BTreeSet::new(), &options) else { return Ok(()) };
        BOUNDED.fetch_add(1, Ordering::Relaxed);
        let whole = whole.map_err(|v| TestCaseError::fail(format!("whole tree rejected: {v:?}")))?;
        for p in changed.keys() {
            prop_assert_eq!(whole.files.get(p), part.files.get(p), "{}", p);
        }
        for (p, bytes) in tree.iter().filter(|(p, _)| !changed.contains_key(*p)) {
            prop_assert_eq!(whole.files.get(p), Some(bytes), "unchanged {} was changed", p);
        }
        prop_assert_eq!(&whole.pruned, &part.pruned);
        prop_assert_eq!(&whole.block_id_map, &part.block_id_map);
        prop_assert_eq!(&whole.evidence_id_map, &part.evidence_id_map);
        let expected = without_order(whole.units.iter().filter(|u| changed.contains_key(&u.path)).cloned());
        prop_assert_eq!(expected, without_order(part.units));
    }
}

#[test]
fn most_random_edits_stay_bounded() {
    // Run after the property test in the same process when both are selected; alone,
    // it runs its own cases.
    changed_only_equals_the_whole_tree();
    let (bounded, cases) = (BOUNDED.load(Ordering::Relaxed), CASES.load(Ordering::Relaxed));
    assert!(cases > 100 && bounded * 3 > cases, "{bounded} of {cases} cases bounded");
}

#[test]
fn evidence_ids_defined_only_in_unchanged_files_are_not_minted_again() {
    let resolver = sources();
    let raw: Tree = [("topics/a.md".to_owned(), raw_file(&[(0, 1, 1)], None).into_bytes())].into();
    let (tree, baseline, index) = committed(&raw, &[], &resolver).expect("a normal tree");
    // The same evidence cited from a new file: its label's first candidate id is taken.
    let changed = BTreeMap::from([("topics/b.md".to_owned(), Some(raw_file(&[(1, 1, 1)], None).into_bytes()))]);
    let mut staged = tree.clone();
    staged.insert("topics/b.md".to_owned(), raw_file(&[(1, 1, 1)], None).into_bytes());
    let options = NormalizeOptions::default();
    let whole = normalize(&staged, &baseline, &resolver, &options).expect("valid");
    let part = normalize_changed(&index, &changed, &baseline, &resolver, &BTreeSet::new(), &options).expect("bounded");
    assert_eq!(whole.files.get("topics/b.md"), part.files.get("topics/b.md"));
    assert_eq!(whole.evidence_id_map, part.evidence_id_map);
    let committed_id = String::from_utf8_lossy(tree.get("topics/a.md").expect("a"))
        .contains(whole.evidence_id_map.get("e1").map(String::as_str).unwrap_or("none"));
    assert!(!committed_id, "the committed id is not reused");
}

#[test]
fn a_new_frame_an_unchanged_file_cites_is_not_bounded() {
    // `D1:7` has no anchor yet: the committed link stays the `#d1-7` fragment link it was
    // written as (a plain handle naming no anchor is refused at normalization).
    let before = sources();
    let written = raw_file(&[(0, 7, 1)], None).replace("](D1:7)", "](notes.md#d1-7)");
    let raw: Tree = [("topics/a.md".to_owned(), written.into_bytes())].into();
    let (tree, baseline, index) = committed(&raw, &[], &before).expect("a normal tree");
    let after = sources_to(7);
    let mut staged = tree.clone();
    staged.insert("topics/b.md".to_owned(), raw_file(&[(1, 2, 1)], None).into_bytes());
    let changed = BTreeMap::from([("topics/b.md".to_owned(), staged.get("topics/b.md").cloned())]);
    let options = NormalizeOptions::default();
    let whole = normalize(&staged, &baseline, &after, &options).expect("valid");
    assert_ne!(whole.files.get("topics/a.md"), tree.get("topics/a.md"), "the unchanged file now links the frame");
    let new_sources = BTreeSet::from(["D1:7".to_owned()]);
    assert!(normalize_changed(&index, &changed, &baseline, &after, &new_sources, &options).is_none());
    // Given as changed, the file is normalized with the others, as the whole tree does.
    let mut with_a = changed.clone();
    with_a.insert("topics/a.md".to_owned(), tree.get("topics/a.md").cloned());
    let part = normalize_changed(&index, &with_a, &baseline, &after, &new_sources, &options).expect("bounded");
    assert_eq!(whole.files.get("topics/a.md"), part.files.get("topics/a.md"));
}
