//! Owner edits from the page (spec 02 §8.4's "staged hand edit"): whole-file writes and
//! deletes of topic files through the transaction, based on what is committed now, with
//! the owner's citation scope (any trusted source, as for `update` and `restore` on the
//! command line), and the dry run of the same edit that `validate` answers with.

use scriptorium_derived_views::DerivedViews;
use scriptorium_transaction::{
    CitationScope, Edit, Error, ErrorCode, FileChange, TopicPath, UpdateRequest, UpdateResult,
};

use super::state::State;

/// The error a dry run stops with right before the install, once everything passed.
const DRY_RUN_STOP: ErrorCode = ErrorCode::Cancelled;

/// One whole-file change: `content` `None` deletes.
pub(crate) fn change(path: &str, content: Option<String>) -> Result<FileChange, Error> {
    Ok(FileChange { path: TopicPath::new(path)?, content })
}

/// Install `changes` as one owner edit with `message`.
pub(crate) fn apply(state: &State, changes: Vec<FileChange>, message: &str) -> Result<UpdateResult, Error> {
    let result = run(state, owner_request(Edit::Changes(changes), message), false);
    state.changed();
    result
}

/// Install an owner `request` as given (restore builds its own).
pub(crate) fn apply_request(state: &State, request: UpdateRequest) -> Result<UpdateResult, Error> {
    let result = run(state, request, false);
    state.changed();
    result
}

/// Check `changes` exactly as [`apply`] would, then stop before the install: `Ok(())`
/// when the edit would be installed; nothing on disk changes either way.
pub(crate) fn dry_run(state: &State, changes: Vec<FileChange>) -> Result<(), Error> {
    match run(state, owner_request(Edit::Changes(changes), "memory: validate"), true) {
        Ok(_) => Err(Error::new(ErrorCode::Io, "a dry run installed")),
        Err(error) if error.code() == DRY_RUN_STOP => Ok(()),
        Err(error) => Err(error),
    }
}

/// An owner edit of `edit` based on what is committed when it runs.
pub(crate) fn owner_request(edit: Edit, message: &str) -> UpdateRequest {
    let mut request = UpdateRequest::at_current(edit);
    request.commit_message = message.to_owned();
    request.citations = CitationScope::AnyTrusted;
    request
}

fn run(state: &State, request: UpdateRequest, stop: bool) -> Result<UpdateResult, Error> {
    let workspace = state.owner_workspace()?;
    workspace.update_cancellable(&request, &DerivedViews::default(), &|| stop)
}
