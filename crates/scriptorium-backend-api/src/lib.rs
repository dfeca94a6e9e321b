//! Scriptorium's backend contract: the [`MemoryBackend`] hooks an agent runtime calls
//! (spec 02 §1), the shipped [`LocalBackend`] over the layers below, the [`NullBackend`] of
//! `memory.backend = none`, the [`Resolver`] that picks one, fencing done once
//! ([`fence`], [`sanitize_context`]), trust tiers ([`Tier`]), the `memory.*`
//! configuration ([`config`]) and the public error codes ([`ErrorCode`]).
//!
//! This is the API boundary of the workspace (tier 1 of docs/stability.md): its types are
//! plain data, and every lower-layer error code maps to exactly one contract code.
//!
//! ```
//! use scriptorium_backend_api::{MemoryBackend, Resolver, Tier, config};
//!
//! let dir = std::env::temp_dir().join(format!("scriptorium-doc-{}", std::process::id()));
//! let (settings, warnings) = config::parse("memory.backend = \"none\"\n");
//! assert!(warnings.is_empty());
//! let resolver = Resolver::new(settings, dir.join("memory"), None);
//! let backend = resolver.backend();
//! assert_eq!(backend.name(), "none");
//! assert_eq!(backend.search("tea", "s1", Some(Tier::Owner)), "");
//! assert!(!dir.join("memory").exists(), "a disabled backend never creates the workspace");
//!
//! let fenced = scriptorium_backend_api::fence("Ada likes tea.");
//! assert!(fenced.starts_with("<memory-context>\n"));
//! assert_eq!(scriptorium_backend_api::sanitize_context(&fenced), "");
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing))]

mod backend;
pub mod config;
mod error;
mod fence;
pub mod inspect;
mod local;
mod null;
pub mod paths;
mod resolver;
mod tier;
pub mod tools;
mod types;

/// The library layers below the contract, re-exported so that a front end (the
/// `scriptorium` binary and its servers) depends on this crate alone, as ripgrep's `grep`
/// crate re-exports its parts. Tier 2 (docs/stability.md): each follows its own crate's
/// semver, not the contract of this crate; prefer the contract types where they suffice.
pub mod layers {
    /// Source archives: the v2 byte format, its scanner and writer, legacy records.
    pub use scriptorium_archive_format as archive_format;
    /// Derived views: `core.md` and its render report, the timeline, recent events, relations.
    pub use scriptorium_derived_views as derived_views;
    /// Retrieval: the BM25 index, its persistent cache, search and grep.
    pub use scriptorium_retrieval as retrieval;
    /// Topic files: the strict parser, units, citations and their violations.
    pub use scriptorium_topic_markdown as topic_markdown;
    /// The write transaction: listing, validation, install, history, the write lock.
    pub use scriptorium_transaction as transaction;
    /// The writer runtime: the session store, write passes, backfill, reorganize, promote.
    pub use scriptorium_writer_runtime as writer_runtime;
}

pub use crate::backend::MemoryBackend;
pub use crate::error::{
    Error, ErrorCode, from_model_config_code, from_retrieval_code, from_transaction_code, from_views_code,
    from_writer_code,
};
pub use crate::fence::{FENCE_CLOSE, FENCE_OPEN, SYSTEM_NOTE, contains_fence_tag, fence, sanitize_context};
pub use crate::local::{HandEdit, LocalBackend, NO_WATCH_ENV, recall_once};
pub use crate::null::{DISABLED_MESSAGE, NullBackend};
pub use crate::resolver::Resolver;
pub use crate::tier::{Capability, Tier, allows};
pub use crate::tools::{Caller, TOOLS, ToolSpec};
pub use crate::types::{
    Content, MemoryWriteFailureCode, Message, ReorganizeReport, ReorganizeStatus, SessionFailure, Timestamp,
    WriteFailure,
};
