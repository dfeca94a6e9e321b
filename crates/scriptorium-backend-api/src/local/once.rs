//! Recall for a process that lives for one call (a prompt hook): the persistent index is
//! opened (loaded, refreshed by fingerprints, saved when it changed) and asked once. No
//! workspace handle and no session store are opened, so a write pass that holds the write
//! lock for a model call never delays it, and nothing is created on disk but the index cache.

use std::path::Path;

use scriptorium_retrieval::Index;

use super::recall::recall_in;
use crate::config::{BackendKind, MemoryConfig, RetrievalMethod};
use crate::fence::fence;
use crate::tier::{Capability, Tier, allows};

/// Automatic recall for `query` from the workspace at `root`, fenced once, as
/// [`MemoryBackend::search`](crate::MemoryBackend::search) of a [`LocalBackend`](crate::LocalBackend)
/// answers it; `""` for a blank query, a tier without `memory.read`, memory off, a workspace
/// that does not exist or any error.
///
/// The index is not freed: it is meant for a process that exits right after, and the
/// operating system takes the memory back at once, where freeing its many small
/// allocations one by one cost about a quarter of a prompt hook's time (issue 18).
pub fn recall_once(root: &Path, query: &str, tier: Option<Tier>, config: &MemoryConfig) -> String {
    if query.trim().is_empty()
        || !allows(tier, Capability::MemoryRead)
        || config.backend == BackendKind::None
        || config.retrieval_method == RetrievalMethod::Agent
        || !root.is_dir()
    {
        return String::new();
    }
    let Ok(index) = Index::open(root) else { return String::new() };
    let recalled = fence(&recall_in(&index, query, config));
    std::mem::forget(index);
    recalled
}
