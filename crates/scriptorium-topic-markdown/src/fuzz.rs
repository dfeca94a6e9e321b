//! Invariants of the topic parser and normalizer, checked on arbitrary bytes by the
//! fuzz target, the corpus replay test and the property tests.
//!
//! Every function here panics when an invariant breaks; that is its purpose.

use std::collections::BTreeMap;

use crate::document::TopicDocument;
use crate::error::ErrorCode;
use crate::normalize::{Baseline, NormalizeOptions, Removal, normalize};
use crate::source::{MemorySources, SourceResolver};
use crate::tree::{Mode, parse_tree};

/// The source archives the fuzz checks resolve citations against: a benchmark file
/// `sources/D1.md` (turns 1 and 2) and a v2 archive holding `openprogram/t/m1`.
pub fn fixture_sources() -> MemorySources {
    let mut sources = MemorySources::new();
    sources.insert(
        "sources/D1.md",
        "# D1\n\n<a id=\"d1-1\"></a>\n[2024-01-02] user: hi [D1:1]\n\n<a id=\"d1-2\"></a>\n[2024-01-02] user: yo [D1:2]\n",
    );
    let anchor = scriptorium_archive_format::source_anchor("openprogram/t/m1");
    sources.insert(
        "sources/openprogram/_v2/t.md",
        format!(
            "{}\n\n<a id=\"{anchor}\"></a>\n<!-- source-id:openprogram/t/m1 -->\n<!-- record-lines:1 -->\n\
             [2024-03-15] user: hello\n",
            scriptorium_archive_format::FORMAT_MARKER
        ),
    );
    sources
}

/// Split fuzz bytes into a small topic tree: NUL bytes separate up to four files,
/// placed at fixed paths in two directories.
pub fn tree_from_bytes(data: &[u8]) -> BTreeMap<String, Vec<u8>> {
    const PATHS: [&str; 4] = ["topics/a.md", "topics/people/b.md", "topics/a/c.md", "topics/z.md"];
    PATHS.iter().zip(data.split(|&b| b == 0)).map(|(path, bytes)| ((*path).to_owned(), bytes.to_vec())).collect()
}

/// Check every invariant on one input (see [`check_tree`]); the fuzz target's body.
pub fn check_topic_bytes(data: &[u8]) {
    check_tree(&tree_from_bytes(data));
}

/// Check the invariants on a topic tree:
/// 1. documents round-trip: `parse(render(d)) == d`;
/// 2. parsing the tree never panics, and every violation has a known code, the
///    lenient parse reporting no more than the strict one;
/// 3. normalization either fails with known codes or yields a tree that parses
///    strictly, renders to its own bytes, and normalizes to itself once committed.
pub fn check_tree(files: &BTreeMap<String, Vec<u8>>) {
    let sources = SourceResolver::new(fixture_sources());
    for (path, bytes) in files {
        if let Ok(document) = TopicDocument::parse(path, bytes) {
            let again = TopicDocument::parse(path, &document.render()).expect("rendered documents are UTF-8");
            assert_eq!(again, document, "parse(render(d)) != d for {path}");
        }
    }
    let strict = parse_tree(files, &sources, Mode::Strict);
    let lenient = parse_tree(files, &sources, Mode::Lenient);
    for violation in strict.violations().iter().chain(lenient.violations()) {
        assert!(ErrorCode::ALL.contains(&violation.code()), "unknown code {violation}");
    }
    for violation in lenient.violations() {
        assert!(strict.violations().contains(violation), "lenient-only violation {violation}");
    }
    let options = NormalizeOptions::with_removal(Removal::Allowed);
    let Ok(first) = normalize(files, &Baseline::empty(), &sources, &options) else { return };
    check_normal_form(&first.files, &sources);
    let committed = Baseline::from_units(first.units.clone());
    let second = normalize(&first.files, &committed, &sources, &NormalizeOptions::default())
        .expect("a normalized tree normalizes again");
    assert_eq!(text_of(&second.files), text_of(&first.files), "normalize is not idempotent");
    assert!(second.block_id_map.is_empty() && second.evidence_id_map.is_empty(), "second pass minted ids");
}

/// The tree as text, so that a failing comparison is readable.
fn text_of(files: &BTreeMap<String, Vec<u8>>) -> BTreeMap<&str, String> {
    files.iter().map(|(path, bytes)| (path.as_str(), String::from_utf8_lossy(bytes).into_owned())).collect()
}

/// A normalized tree: strictly valid, and every file renders back to its bytes.
fn check_normal_form(files: &BTreeMap<String, Vec<u8>>, sources: &SourceResolver<MemorySources>) {
    let parsed = parse_tree(files, sources, Mode::Strict);
    assert!(parsed.violations().is_empty(), "normalized tree is invalid: {:?}", parsed.violations());
    for document in parsed.documents() {
        let bytes = files.get(document.path()).expect("document comes from the tree");
        assert_eq!(&document.render(), bytes, "render(parse(b)) != b for normalized {}", document.path());
    }
}
