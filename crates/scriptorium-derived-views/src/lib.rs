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
//! # Architecture invariants
//!
//! - No I/O: the staged files come in as bytes, the derived files go out as bytes.
//! - Every view is byte-identical to the reference's (the transaction golden vectors'
//!   `after/` trees); `runtime.json` is written in our canonical form (decision Q8).
//! - Token counting is o200k_base, special-token strings counted as plain text, and
//!   never fails (decision Q3); the encoder is built once, on first use.
//! - Pending `topics/core.md` blocks (a source outside the trusted-id set) never reach
//!   `core.md`.
//!
//! # Example
//!
//! ```
//! use std::collections::BTreeMap;
//! use scriptorium_derived_views::{DerivedViews, count_o200k};
//!
//! assert_eq!(count_o200k("hello world"), 2);
//! let mut staged = BTreeMap::new();
//! staged.insert("topics/core.md".to_owned(), b"# Core\n".to_vec());
//! let derived = DerivedViews::default().build(&staged, ".scriptorium").expect("views build");
//! assert_eq!(derived.files["core.md"].as_deref(), Some(&b"# Core\n"[..]));
//! assert_eq!(derived.core_report.map(|r| r.tokens_used), Some(2));
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
// Staged files are untrusted input: no hidden panics outside tests.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing))]

mod core_render;
mod error;
mod json;
mod migrate;
mod order;
mod paths;
mod pyspace;
mod recent;
mod relations;
mod timeline;
mod tokens;
mod views;

pub use crate::core_render::{CORE_TOKEN_BUDGET, CoreRender, CoreReport, render_core};
pub use crate::error::{Error, ErrorCode};
pub use crate::migrate::{ROOT_CORE, TOPIC_CORE, migrate_root_core};
pub use crate::order::assign_creation_order;
pub use crate::recent::{RECENT_LIMIT, recent_limit_from_config, render_recent};
pub use crate::relations::render_relations;
pub use crate::timeline::render_timeline;
pub use crate::tokens::{count_o200k, o200k_ids};
pub use crate::views::{Derived, DerivedViews};
