//! Migrating a hand-written root `core.md` into `topics/core.md` (spec 01 §7.3).

use std::collections::BTreeMap;

use scriptorium_topic_markdown::{MemorySources, Mode, SourceResolver, parse_tree};
use scriptorium_transaction::{CORE_REPORT_FILE, LEGACY_RUNTIME_DIR, RUNTIME_DIR};

use crate::paths::{retarget_links, root_to_topics};

/// The master the root `core.md` becomes.
pub const TOPIC_CORE: &str = "topics/core.md";
/// The rendered, always-in-context file.
pub const ROOT_CORE: &str = "core.md";

/// The files to write when the stage has a root `core.md` but no `topics/core.md`:
/// `topics/core.md` = the root text with its links moved from the root to `topics/`,
/// not normalized. Empty when there is nothing to migrate (also when a committed
/// `core-report.json` shows the root file was rendered, not hand-written), or when the whole topic tree
/// with the new file does not parse strictly: the root file then stays as it is (it
/// survives renders, having no master).
pub fn migrate_root_core(staged: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    // A core report in the runtime directory means the root file was rendered from a
    // master that this edit deletes: it is not hand-written, and must not come back.
    let rendered = staged.keys().any(|path| {
        [RUNTIME_DIR, LEGACY_RUNTIME_DIR]
            .iter()
            .any(|dir| path.strip_prefix(dir).and_then(|p| p.strip_prefix('/')) == Some(CORE_REPORT_FILE))
    });
    if rendered || staged.contains_key(TOPIC_CORE) {
        return out;
    }
    let Some(root) = staged.get(ROOT_CORE).and_then(|bytes| std::str::from_utf8(bytes).ok()) else {
        return out;
    };
    let promoted = retarget_links(root, root_to_topics).into_bytes();
    let sources: MemorySources =
        staged.iter().filter(|(path, _)| path.starts_with("sources/")).map(|(p, b)| (p.clone(), b.clone())).collect();
    let mut topics: BTreeMap<&str, &[u8]> = staged
        .iter()
        .filter(|(path, _)| path.starts_with("topics/") && path.ends_with(".md"))
        .map(|(p, b)| (p.as_str(), b.as_slice()))
        .collect();
    topics.insert(TOPIC_CORE, &promoted);
    let resolver = SourceResolver::new(sources);
    if parse_tree(topics.iter().map(|(p, b)| (*p, *b)), &resolver, Mode::Strict).check().is_ok() {
        out.insert(TOPIC_CORE.to_owned(), promoted);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const VECTOR: &str = "../../tests/vectors/transaction/core-render/after";
    const SOURCE: &str = "sources/openprogram/_v2/sess-7f2a.md";

    fn stage(files: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
        files.iter().map(|(p, b)| ((*p).to_owned(), b.as_bytes().to_vec())).collect()
    }

    fn vector_file(path: &str) -> String {
        let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(VECTOR).join(path);
        std::fs::read_to_string(full).expect("vector file")
    }

    #[test]
    fn a_parseable_root_core_becomes_the_master_with_links_moved() {
        // The rendered core.md of a vector is a hand-written root core with root links.
        let root = vector_file(ROOT_CORE);
        let staged = stage(&[(ROOT_CORE, &root), (SOURCE, &vector_file(SOURCE))]);
        let out = migrate_root_core(&staged);
        let promoted = out.get(TOPIC_CORE).map(|b| String::from_utf8_lossy(b).into_owned());
        assert_eq!(promoted, Some(root.replace("](sources/", "](../sources/")));
    }

    #[test]
    fn nothing_to_migrate_or_unparseable_leaves_the_root_alone() {
        assert!(migrate_root_core(&stage(&[(ROOT_CORE, "just prose, no block id\n")])).is_empty());
        assert!(migrate_root_core(&stage(&[(TOPIC_CORE, "# Core\n"), (ROOT_CORE, "# Core\n")])).is_empty());
        assert!(migrate_root_core(&stage(&[])).is_empty());
        let rendered = vector_file(ROOT_CORE);
        let staged =
            stage(&[(ROOT_CORE, &rendered), (SOURCE, &vector_file(SOURCE)), (".scriptorium/core-report.json", "{}")]);
        assert!(migrate_root_core(&staged).is_empty());
    }
}
