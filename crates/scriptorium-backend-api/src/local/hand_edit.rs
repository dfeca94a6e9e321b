//! Owner hand edits (spec 02 §8.4's "staged hand edit", the page's edits and restore):
//! whole-file writes and deletes of topic files, based on what is committed when they
//! run, with the owner's citation scope (any trusted source), through the warm backend's
//! own workspace handle and views cache, so its caches stay valid afterwards instead of
//! reloading as they would after a write through a second handle.

use std::collections::BTreeMap;
use std::time::Duration;

use scriptorium_derived_views::DerivedViews;
use scriptorium_transaction::{
    CitationScope, Edit, ErrorCode as TxCode, FileChange, TopicPath, UpdateRequest, UpdateResult, WriteLock,
};

use super::LocalBackend;
use crate::error::{Error, ErrorCode};

/// One owner hand edit: plain data, checked when it runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HandEdit {
    /// Whole-file changes of `topics/**.md` files: `(path, Some(content))` writes,
    /// `(path, None)` deletes.
    pub changes: Vec<(String, Option<String>)>,
    /// The history commit message.
    pub message: String,
    /// Run every check an install would, then stop right before it: nothing changes.
    pub dry_run: bool,
    /// Files as they were at an earlier revision whose block ids the edit keeps (restore
    /// passes them, so restored paragraphs keep their ids and links to them work again).
    pub known_ids_from: BTreeMap<String, Vec<u8>>,
}

impl HandEdit {
    /// A hand edit writing (`Some`) or deleting (`None`) the one file `path`.
    pub fn one(path: impl Into<String>, content: Option<String>, message: impl Into<String>) -> Self {
        HandEdit { changes: vec![(path.into(), content)], message: message.into(), ..HandEdit::default() }
    }
}

impl LocalBackend {
    /// Install an owner hand edit through this backend's warm workspace handle:
    /// `Ok(Some(result))` once installed; with [`HandEdit::dry_run`], `Ok(None)` when
    /// the edit would be installed, and nothing on disk changes either way.
    ///
    /// Errors: the transaction's code mapped to its contract code (`INVALID_TOPIC_FORMAT`
    /// with the violations as [`Error::details`], `READ_ONLY_PATH` for a path that is no
    /// topic file, `CONCURRENT_UPDATE` when the write lock is not free in time, …), or the
    /// error the workspace opened with.
    pub fn hand_edit(&self, edit: &HandEdit) -> Result<Option<UpdateResult>, Error> {
        let changes = edit
            .changes
            .iter()
            .map(|(path, content)| Ok(FileChange { path: TopicPath::new(path)?, content: content.clone() }))
            .collect::<Result<Vec<_>, scriptorium_transaction::Error>>()?;
        let mut request = UpdateRequest::at_current(Edit::Changes(changes));
        request.commit_message = edit.message.clone();
        request.citations = CitationScope::AnyTrusted;
        request.known_ids_from = edit.known_ids_from.clone();
        let warm = self.warm()?;
        if edit.dry_run {
            // The same pipeline, cancelled right before the install; the views are built
            // afresh so the warm cache never sees a revision that was not installed.
            let stopped = warm.runtime.workspace().update_cancellable(&request, &DerivedViews::default(), &|| true);
            return match stopped {
                Ok(_) => {
                    warm.watch.changed();
                    Err(Error::new(ErrorCode::Internal, "a dry run installed"))
                }
                Err(error) if error.code() == TxCode::Cancelled => Ok(None),
                Err(error) => Err(error.into()),
            };
        }
        let result = warm.runtime.update(&request);
        warm.watch.changed();
        Ok(Some(result?))
    }

    /// Take the workspace's write lock through this backend's handle, waiting at most
    /// `timeout`, so a reader sees several files as one installed state (spec 02 §8.4's
    /// `GET /api/memory/core` reads the master and its render under it). Dropping the
    /// lock releases it.
    ///
    /// Errors: `CONCURRENT_UPDATE` when another holder keeps it past `timeout`, or the
    /// error the workspace opened with.
    pub fn lock(&self, timeout: Duration) -> Result<WriteLock, Error> {
        Ok(self.warm()?.runtime.workspace().lock(timeout)?)
    }
}
