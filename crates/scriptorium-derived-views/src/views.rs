//! [`DerivedViews`]: the derive step the transaction runs inside the stage, so topics and
//! views install in one atomic step (decision "derived views timing").

use std::collections::{BTreeMap, BTreeSet};

use scriptorium_archive_format::trusted_source_ids;
use scriptorium_topic_markdown::{MemorySources, Mode, SourceResolver, Unit, parse_tree};
use scriptorium_transaction::{Derive, DerivedFiles, RuntimeState};

use crate::core_render::{CORE_TOKEN_BUDGET, CoreReport, render_core};
use crate::error::{Error, ErrorCode};
use crate::migrate::{ROOT_CORE, TOPIC_CORE, migrate_root_core};
use crate::order::assign_creation_order;
use crate::recent::{RECENT_LIMIT, render_recent};
use crate::relations::render_relations;
use crate::timeline::render_timeline;

/// The derived-view builder and its options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DerivedViews {
    /// The `core.md` token budget (spec: 2000).
    pub core_budget: usize,
    /// How many rows `recent_events.jsonl` keeps (spec: 50; 0 writes an empty file).
    pub recent_limit: usize,
}

impl Default for DerivedViews {
    fn default() -> Self {
        DerivedViews { core_budget: CORE_TOKEN_BUDGET, recent_limit: RECENT_LIMIT }
    }
}

/// Everything one derive produced: the files to write or remove and the core report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Derived {
    /// Workspace-relative path → new bytes, or `None` to remove.
    pub files: DerivedFiles,
    /// The `core.md` render report, when `topics/core.md` exists.
    pub core_report: Option<CoreReport>,
}

impl DerivedViews {
    /// Build every derived view of `staged` (see [`Derive::derive`]).
    ///
    /// # Errors
    /// [`ErrorCode::NotUtf8`] for a topic or runtime file that is not UTF-8,
    /// [`ErrorCode::SourceUnreadable`] when a citation's archive cannot be read.
    pub fn build(&self, staged: &BTreeMap<String, Vec<u8>>, runtime_dir: &str) -> Result<Derived, Error> {
        let topics: Vec<(&String, &Vec<u8>)> =
            staged.iter().filter(|(path, _)| path.starts_with("topics/") && path.ends_with(".md")).collect();
        for (path, bytes) in &topics {
            if std::str::from_utf8(bytes).is_err() {
                return Err(Error::new(ErrorCode::NotUtf8, path.as_str(), "topic file is not UTF-8"));
            }
        }
        let sources: MemorySources = staged
            .iter()
            .filter(|(path, _)| path.starts_with("sources/"))
            .map(|(p, b)| (p.clone(), b.clone()))
            .collect();
        let resolver = SourceResolver::new(sources);
        let (_, units, violations) = parse_tree(topics.iter().copied(), &resolver, Mode::Strict).into_parts();
        if let Some(read) =
            violations.iter().find(|v| v.code() == scriptorium_topic_markdown::ErrorCode::SourceReadFailed)
        {
            return Err(Error::new(ErrorCode::SourceUnreadable, read.file(), read.to_string()));
        }

        let mut files = DerivedFiles::new();
        let mut core_report = None;
        if let Some(core) = staged.get(TOPIC_CORE) {
            let text =
                std::str::from_utf8(core).map_err(|_| Error::new(ErrorCode::NotUtf8, TOPIC_CORE, "not UTF-8"))?;
            // A tree that does not parse has no reliable citations: nothing counts as pending.
            let pending = if violations.is_empty() { pending_core_blocks(staged, &units) } else { BTreeSet::new() };
            let render = render_core(text, &pending, self.core_budget);
            files.insert(ROOT_CORE.to_owned(), Some(render.text.into_bytes()));
            core_report = Some(render.report);
        }

        let runtime_path = format!("{runtime_dir}/runtime.json");
        let mut state = staged.get(&runtime_path).map(|bytes| RuntimeState::parse(bytes)).unwrap_or_default();
        assign_creation_order(&mut state, &units);

        // The timeline is deleted and recreated whole: every old file not rebuilt goes.
        let timeline = render_timeline(&units);
        for path in staged.keys().filter(|path| path.starts_with("timeline/") && !timeline.contains_key(*path)) {
            files.insert(path.clone(), None);
        }
        for (path, text) in timeline {
            files.insert(path, Some(text.into_bytes()));
        }
        let recent = render_recent(&units, |id| state.rank(id).unwrap_or(i64::MAX), self.recent_limit);
        files.insert("recent_events.jsonl".to_owned(), Some(recent.into_bytes()));
        files.insert("relations.json".to_owned(), Some(render_relations(&units).into_bytes()));
        files.insert(runtime_path, Some(state.to_bytes()));
        Ok(Derived { files, core_report })
    }
}

impl Derive for DerivedViews {
    fn derive(
        &self,
        staged: &BTreeMap<String, Vec<u8>>,
        runtime_dir: &str,
    ) -> Result<DerivedFiles, scriptorium_transaction::Error> {
        self.build(staged, runtime_dir).map(|derived| derived.files).map_err(|error| {
            let code = match error.code() {
                ErrorCode::NotUtf8 => scriptorium_transaction::ErrorCode::InvalidTopicFormat,
                ErrorCode::SourceUnreadable => scriptorium_transaction::ErrorCode::Io,
            };
            scriptorium_transaction::Error::new(code, error.to_string())
                .with_path(error.path())
                .with_detail("views_code", error.code().as_str())
        })
    }

    fn promote(&self, staged: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
        migrate_root_core(staged)
    }
}

/// Block ids of `topics/core.md` citing a source outside the trusted-id set (§3.6),
/// which is built from every staged source file.
fn pending_core_blocks(staged: &BTreeMap<String, Vec<u8>>, units: &[Unit]) -> BTreeSet<String> {
    let trusted: BTreeSet<String> = staged
        .iter()
        .filter(|(path, _)| path.starts_with("sources/"))
        .flat_map(|(path, bytes)| trusted_source_ids(path, &String::from_utf8_lossy(bytes)))
        .collect();
    units
        .iter()
        .filter(|unit| unit.path == TOPIC_CORE && !unit.source_refs.iter().all(|id| trusted.contains(id)))
        .map(|unit| unit.memory_id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GROUP: &str = "sources/telegram/_v2/group-100.md";

    fn staged_core(topic_core: &str) -> BTreeMap<String, Vec<u8>> {
        let group =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/_resources/tx-base").join(GROUP);
        let mut staged = BTreeMap::new();
        staged.insert(GROUP.to_owned(), std::fs::read(group).expect("vector source"));
        staged.insert(TOPIC_CORE.to_owned(), topic_core.as_bytes().to_vec());
        staged
    }

    #[test]
    fn a_block_citing_a_pending_source_stays_out_of_core() {
        let topic = "# Core\n\nCraig quits.[^e-1] ^aaaa1111\n\n\
            [^e-1]: Time: `2024-03-19`; Sources: [telegram/group-100/g1](../sources/telegram/_v2/group-100.md#source-c5abce8940d6277f)\n\n\
            The sensor uses an ESP32.[^e-2] ^bbbb2222\n\n\
            [^e-2]: Time: `2024-03-20`; Sources: [telegram/group-100/g2](../sources/telegram/_v2/group-100.md#source-11a05d4db2cef8b8)\n";
        let derived = DerivedViews::default().build(&staged_core(topic), ".scriptorium").expect("views build");
        let core = derived.files.get(ROOT_CORE).cloned().flatten().expect("core.md written");
        let core = String::from_utf8(core).expect("UTF-8");
        assert!(!core.contains("Craig quits"), "{core}");
        assert!(core.contains(
            "ESP32.[^e-2] ^bbbb2222\n\n[^e-2]: Time: `2024-03-20`; Sources: [telegram/group-100/g2](sources/"
        ));
        assert_eq!(derived.core_report.map(|r| r.left_out), Some(vec!["aaaa1111".to_owned()]));
    }

    #[test]
    fn no_topic_core_renders_no_core_and_old_timeline_files_go() {
        let mut staged = BTreeMap::new();
        staged.insert("core.md".to_owned(), b"hand written\n".to_vec());
        staged.insert("timeline/1999.md".to_owned(), b"# 1999\n".to_vec());
        let derived = DerivedViews::default().build(&staged, ".scriptorium").expect("views build");
        assert!(!derived.files.contains_key(ROOT_CORE));
        assert_eq!(derived.files.get("timeline/1999.md"), Some(&None));
        assert_eq!(derived.files.get("recent_events.jsonl"), Some(&Some(Vec::new())));
        assert_eq!(
            derived.files.get("relations.json").cloned().flatten().as_deref(),
            Some(&b"{\"backlinks\": {}, \"outbound\": {}}\n"[..])
        );
    }

    #[test]
    fn derive_reports_a_non_utf8_topic_with_its_views_code() {
        let mut staged = BTreeMap::new();
        staged.insert("topics/bad.md".to_owned(), vec![0xff, 0xfe]);
        let error = DerivedViews::default().derive(&staged, ".scriptorium").expect_err("not UTF-8");
        assert_eq!(error.code(), scriptorium_transaction::ErrorCode::InvalidTopicFormat);
        assert_eq!(error.details().get("views_code").and_then(|v| v.as_str()), Some("VIEWS_NOT_UTF8"));
    }
}
