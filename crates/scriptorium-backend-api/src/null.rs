//! The null backend of `memory.backend = none` (spec 02 §1.2): every hook at its default
//! except `reorganize`, which says `disabled`; it touches no file, so the workspace is
//! never created.

use crate::backend::MemoryBackend;
use crate::error::{Error, ErrorCode};
use crate::types::{ReorganizeReport, ReorganizeStatus};

/// The message of every `MEMORY_DISABLED` refusal (spec 02 §1.2).
pub const DISABLED_MESSAGE: &str = "memory is disabled by memory.backend=none";

/// The disabled backend.
#[derive(Clone, Copy, Debug, Default)]
pub struct NullBackend;

impl NullBackend {
    /// The `MEMORY_DISABLED` error a surface (CLI verb, HTTP route, tool) answers with
    /// before it would create the workspace.
    pub fn disabled_error() -> Error {
        Error::new(ErrorCode::MemoryDisabled, DISABLED_MESSAGE)
    }
}

impl MemoryBackend for NullBackend {
    fn name(&self) -> &str {
        "none"
    }

    fn reorganize(&self, _model: Option<&str>) -> ReorganizeReport {
        ReorganizeReport::status(ReorganizeStatus::Disabled)
    }
}
