//! [`DerivedViews`]: the derive step the transaction runs inside the stage, so topics and
//! views install in one atomic step (decision "derived views timing").

use std::collections::BTreeMap;

use scriptorium_transaction::{Derive, DerivedFiles};

use crate::cache::ViewsCache;
use crate::core_render::{CORE_TOKEN_BUDGET, CoreReport};
use crate::error::Error;
use crate::migrate::migrate_root_core;
use crate::recent::RECENT_LIMIT;

/// The stable code of a derived view out of step with its topics (docs/error-codes.md):
/// a finding of `scriptorium check`, listed with [`Derived::drift`]; never an error.
pub const DRIFT_CODE: &str = "VIEWS_DRIFT";

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
    /// Build every derived view of `staged` from scratch (see [`Derive::derive`]): what a
    /// fresh [`ViewsCache`] builds. Besides the views it writes the render report
    /// `<runtime-dir>/core-report.json` when `topics/core.md` exists and removes it when
    /// not; a root `core.md` with no master is left alone unless that report shows it was
    /// rendered from one (spec 01 §7.1).
    ///
    /// # Errors
    /// [`ErrorCode::NotUtf8`](crate::ErrorCode::NotUtf8) for a topic or runtime file that
    /// is not UTF-8, [`ErrorCode::SourceUnreadable`](crate::ErrorCode::SourceUnreadable) when a citation's archive cannot be read.
    pub fn build(&self, staged: &BTreeMap<String, Vec<u8>>, runtime_dir: &str) -> Result<Derived, Error> {
        ViewsCache::new(*self).build(staged, runtime_dir)
    }
}

impl Derived {
    /// The workspace paths (`core.md`, `timeline/**`, `recent_events.jsonl`,
    /// `relations.json`) whose bytes in `current` differ from this build, sorted: the
    /// views a crash or a hand edit left out of step. Runtime-directory files are not
    /// views and are not listed.
    pub fn drift(&self, current: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
        self.files
            .iter()
            .filter(|(path, _)| !path.starts_with('.'))
            .filter(|(path, bytes)| current.get(*path) != bytes.as_ref())
            .map(|(path, _)| path.clone())
            .collect()
    }
}

impl Derive for DerivedViews {
    fn derive(
        &self,
        staged: &BTreeMap<String, Vec<u8>>,
        runtime_dir: &str,
    ) -> Result<DerivedFiles, scriptorium_transaction::Error> {
        self.build(staged, runtime_dir).map(|derived| derived.files).map_err(Error::into_transaction)
    }

    fn promote(&self, staged: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
        migrate_root_core(staged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::migrate::{ROOT_CORE, TOPIC_CORE};

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
        assert_eq!(derived.core_report.map(|r| r.left_out_ids().join(",")).as_deref(), Some("aaaa1111"));
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

    #[test]
    fn the_report_follows_the_master_and_a_rendered_root_core_goes_with_it() {
        let mut staged = BTreeMap::new();
        staged.insert(TOPIC_CORE.to_owned(), b"# Core\n".to_vec());
        let built = DerivedViews::default().build(&staged, ".nativemem").expect("views build");
        let report = built.files.get(".nativemem/core-report.json").cloned().flatten().expect("report written");
        assert_eq!(CoreReport::from_bytes(&report), built.core_report);

        // The master is deleted: the rendered core.md and the report go.
        for (path, bytes) in built.files {
            staged.insert(path, bytes.unwrap_or_default());
        }
        staged.remove(TOPIC_CORE);
        let gone = DerivedViews::default().build(&staged, ".nativemem").expect("views build");
        assert_eq!(gone.files.get(ROOT_CORE), Some(&None));
        assert_eq!(gone.files.get(".nativemem/core-report.json"), Some(&None));
        assert_eq!(gone.drift(&staged), [ROOT_CORE.to_owned()]);

        // Without a report, the root file is hand-written and stays.
        staged.remove(".nativemem/core-report.json");
        let kept = DerivedViews::default().build(&staged, ".nativemem").expect("views build");
        assert!(!kept.files.contains_key(ROOT_CORE));
        assert!(kept.drift(&staged).is_empty());
    }
}
