//! Owner edits from the page (spec 02 §8.4's "staged hand edit", restore and the
//! `validate` dry run): through the warm backend's own `LocalBackend::hand_edit`, so its
//! workspace and views caches stay valid after the edit.

use scriptorium_backend_api::layers::transaction::UpdateResult;
use scriptorium_backend_api::{Error, ErrorCode, HandEdit};

use super::state::State;

/// Run `edit` (a dry run when it says so: `Ok(None)` means it would install).
pub(crate) fn apply(state: &State, edit: &HandEdit) -> Result<Option<UpdateResult>, Error> {
    // The disabled gate answers before any edit route runs; this is its second line.
    let local = state.local.as_ref().ok_or_else(|| Error::new(ErrorCode::MemoryDisabled, "memory is disabled"))?;
    local.hand_edit(edit)
}

/// Install `edit` (never a dry run): the result, or why it was refused.
pub(crate) fn install(state: &State, edit: &HandEdit) -> Result<UpdateResult, Error> {
    apply(state, &HandEdit { dry_run: false, ..edit.clone() })?
        .ok_or_else(|| Error::new(ErrorCode::Internal, "an install returned no result"))
}
