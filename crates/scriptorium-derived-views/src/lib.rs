//! The derived views of a Scriptorium workspace, rebuilt from the parsed topic units on
//! every successful install: `core.md` (the always-in-context block, under an o200k_base
//! token budget), `timeline/`, `recent_events.jsonl`, `relations.json`, and the block
//! creation order in `<runtime-dir>/runtime.json` (spec 01 §7–§8).
//!
//! Layer 4 of the Scriptorium workspace: it depends on `scriptorium-archive-format`
//! (the trusted-id set), `scriptorium-topic-markdown` (units) and
//! `scriptorium-transaction` (the [`Derive`](scriptorium_transaction::Derive) trait it
//! implements and `RuntimeState`), and is called by the transaction through that trait.
//!
//! # Building
//!
//! [`DerivedViews`] holds the options (budget, recent-row count) and implements the
//! transaction's [`Derive`](scriptorium_transaction::Derive) step; [`DerivedViews::build`]
//! is a full rebuild. [`ViewsCache`] does the same work but keeps the parsed units of
//! every topic file and the rendered view pieces between builds, so a long-lived process
//! re-parses only the files whose bytes changed and re-renders only the timeline files,
//! relations and recent rows their units touch (any change under `sources/` drops the
//! cache); it also implements `Derive`. A full build returns every view; a patched one
//! returns only the views whose bytes differ from the staged ones (the transaction leaves
//! a derived file not returned as it stands). [`Derived::drift`] lists the views on disk
//! that differ from a full build, which `scriptorium check` reports as [`DRIFT_CODE`].
//!
//! Each build with a `topics/core.md` writes its [`CoreReport`] (tokens used, budget,
//! rendered block ids, left-out block ids with a [`LeftOutReason`]) as
//! `<runtime-dir>/core-report.json` ([`CoreReport::to_bytes`], format
//! [`CORE_REPORT_FORMAT`]); without a master the report is removed, and so is a root
//! `core.md` that the committed report shows was rendered (spec 01 §7.1). A hand-written
//! root `core.md` with no report is left alone, or promoted by [`migrate_root_core`].
//!
//! # Architecture invariants
//!
//! - No I/O: the staged files come in as bytes, the derived files go out as bytes.
//! - Every view is byte-identical to the reference's (the transaction golden vectors'
//!   `after/` trees); `runtime.json` is written in our canonical form (decision Q8).
//! - The stage with an incremental build installed equals it with a full rebuild
//!   installed, byte for byte (property-tested).
//! - Token counting is o200k_base, special-token strings counted as plain text, and
//!   never fails (decision Q3); the encoder is built once, on first use.
//! - Pending `topics/core.md` blocks (a source outside the trusted-id set) never reach
//!   `core.md`.
//!
//! # Example
//!
//! ```
//! use std::collections::BTreeMap;
//! use scriptorium_derived_views::{CoreReport, DerivedViews, ViewsCache, count_o200k};
//!
//! assert_eq!(count_o200k("hello world"), 2);
//! let mut staged = BTreeMap::new();
//! staged.insert("topics/core.md".to_owned(), b"# Core\n".to_vec());
//! let derived = DerivedViews::default().build(&staged, ".scriptorium").expect("views build");
//! assert_eq!(derived.files["core.md"].as_deref(), Some(&b"# Core\n"[..]));
//! assert_eq!(derived.core_report.as_ref().map(|r| r.tokens_used), Some(2));
//!
//! // The report file the install keeps in the runtime directory reads back.
//! let stored = derived.files[".scriptorium/core-report.json"].as_deref().expect("report written");
//! assert_eq!(CoreReport::from_bytes(stored), derived.core_report);
//!
//! // Applied to the workspace, the views are in step: nothing drifts.
//! for (path, bytes) in derived.files.clone() {
//!     if let Some(bytes) = bytes { staged.insert(path, bytes); }
//! }
//! assert!(derived.drift(&staged).is_empty());
//!
//! // A cache kept across builds re-parses only what changed and returns only the views
//! // that differ from the stage: installed, they leave it as a full rebuild would.
//! let cache = ViewsCache::new(DerivedViews::default());
//! cache.build(&staged, ".scriptorium").expect("first build");
//! staged.insert("topics/core.md".to_owned(), b"# Core memory\n".to_vec());
//! let incremental = cache.build(&staged, ".scriptorium").expect("second build");
//! assert_eq!(cache.stats().topics_parsed, 1);
//! let full = DerivedViews::default().build(&staged, ".scriptorium").expect("full");
//! assert!(!incremental.files.contains_key("relations.json"), "relations.json did not change");
//! for (path, bytes) in &full.files {
//!     let now = incremental.files.get(path).cloned().unwrap_or_else(|| staged.get(path).cloned());
//!     assert_eq!(&now, bytes, "{path}");
//! }
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
// Staged files are untrusted input: no hidden panics outside tests.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing))]

mod cache;
mod core_render;
mod error;
mod json;
mod live;
mod migrate;
mod order;
mod parsed;
mod paths;
mod pyspace;
mod recent;
mod relations;
mod report;
mod timeline;
mod tokens;
mod views;

pub use crate::cache::{BuildStats, ViewsCache};
pub use crate::core_render::{CORE_TOKEN_BUDGET, CoreRender, CoreReport, LeftOut, LeftOutReason, render_core};
pub use crate::error::{Error, ErrorCode};
pub use crate::migrate::{ROOT_CORE, TOPIC_CORE, migrate_root_core};
pub use crate::order::assign_creation_order;
pub use crate::recent::{RECENT_LIMIT, recent_limit_from_config, render_recent};
pub use crate::relations::render_relations;
pub use crate::report::CORE_REPORT_FORMAT;
pub use crate::timeline::render_timeline;
pub use crate::tokens::{count_o200k, o200k_ids};
pub use crate::views::{DRIFT_CODE, Derived, DerivedViews};
