//! [`UpdateRequest`]: the `memory_update` / changes request of spec 02 §4.2, parsed and
//! checked before the write lock is taken (§4.3), so a malformed call never waits for it.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::error::{Error, ErrorCode};
use crate::evidence::{Evidence, Provenance, parse_evidence};
use crate::history::DEFAULT_MESSAGE;
use crate::patch::{MAX_PATCH_BYTES, Patch};
use crate::update::changes::{FileChange, parse_changes};

/// The top-level fields a request may carry; anything else is `INVALID_ARGUMENT`.
const FIELDS: [&str; 9] = [
    "base_revision",
    "patch",
    "changes",
    "memory_changes",
    "sources",
    "commit_message",
    "append_only",
    "provenance",
    "git_commit",
];

/// The provenance fields (the runtime's record of the current turn).
const PROVENANCE_FIELDS: [&str; 6] =
    ["principal_id", "speaker_kind", "speaker_id", "speaker_display", "authority_tier", "origin_id"];

/// Whether the transaction commits to Git history (spec 02 §4.2 `git_commit`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GitMode {
    /// Commit when history is available; a history failure is not an error.
    #[default]
    Auto,
    /// Commit, and reject the transaction (`GIT_COMMIT_FAILED`) when that fails.
    On,
    /// Never touch history.
    Off,
}

/// Which sources a new citation may name (spec 02 §4.7); every new one must resolve
/// and, if it names a v2 frame, be trusted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum CitationScope {
    /// Only this call's evidence: the sources it archives and the ids its record
    /// operations declare (`memory_update`, the changes API).
    #[default]
    ThisCall,
    /// Any existing trusted source: owner edits with no evidence set of their own
    /// (hand edits, `restore`). Never set from a request body.
    AnyTrusted,
    /// This call's evidence, these source ids, and every source the committed topics
    /// already cite: the writer's commits, whose evidence is the batch it was given
    /// (decision 4: citations may be regrouped between blocks, never invented). Never
    /// set from a request body.
    Sources(BTreeSet<String>),
}

/// The one edit a request makes.
#[derive(Clone, Debug)]
pub enum Edit {
    /// Form A: a unified diff over topic files (checked to parse; labels are replaced
    /// and it is parsed again inside the lock).
    Patch(String),
    /// Form B: whole-file writes and deletes, deduplicated by normalized path.
    Changes(Vec<FileChange>),
    /// Form C: record operations, as given (parsed inside the lock).
    MemoryChanges(Value),
}

/// A parsed `memory_update` request.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct UpdateRequest {
    /// The revision the caller's edit was made against; `None` bases the edit on the
    /// revision read after the write lock is taken (an owner's edit that was not made
    /// against a particular revision, such as a CLI `update` without `--base-revision`).
    pub base_revision: Option<String>,
    /// The edit.
    pub edit: Edit,
    /// Evidence to archive with the edit (labels `new-source-…`).
    pub sources: Vec<Evidence>,
    /// The history message, default `Update memory`.
    pub commit_message: String,
    /// Whether the caller may only create files or append to them (non-owner tiers).
    pub append_only: bool,
    /// The runtime's record of who is speaking; required when `sources` is non-empty.
    pub provenance: Option<Provenance>,
    /// Whether to commit to Git history.
    pub git_commit: GitMode,
    /// Which sources new citations may name; [`UpdateRequest::from_json`] always gives
    /// [`CitationScope::ThisCall`].
    pub citations: CitationScope,
    /// Topic files (path → bytes) whose block ids count as committed, so normalization
    /// keeps them: `restore` passes the files as they were at the revision it restores,
    /// so restored paragraphs keep their ids. Never set from a request body.
    pub known_ids_from: BTreeMap<String, Vec<u8>>,
}

impl UpdateRequest {
    /// A request with one edit and defaults for the rest: no sources, the default
    /// message, owner authority (not append-only), no provenance, history `auto`.
    pub fn new(base_revision: impl Into<String>, edit: Edit) -> Self {
        UpdateRequest {
            base_revision: Some(base_revision.into()),
            edit,
            sources: Vec::new(),
            commit_message: DEFAULT_MESSAGE.to_owned(),
            append_only: false,
            provenance: None,
            git_commit: GitMode::Auto,
            citations: CitationScope::ThisCall,
            known_ids_from: BTreeMap::new(),
        }
    }

    /// A request based on the revision read under the write lock (see
    /// [`UpdateRequest::base_revision`]), with the defaults of [`UpdateRequest::new`].
    pub fn at_current(edit: Edit) -> Self {
        UpdateRequest { base_revision: None, ..UpdateRequest::new(String::new(), edit) }
    }

    /// Parse the JSON request object. Every top-level check of §4.3 happens here:
    /// `base_revision`, the commit message's type, exactly one edit form, the patch (size
    /// and syntax), the change list, the sources, and provenance when sources are given
    /// (`WRITER_PRECONDITION_FAILED`). Record operations are checked inside the lock.
    pub fn from_json(value: &Value) -> Result<Self, Error> {
        Self::parse(value, true)
    }

    /// Parse the JSON request object as [`UpdateRequest::from_json`] does, except that
    /// `base_revision` may be absent: the update is then based on the revision read under
    /// the write lock. For an owner's front end (the CLI), never for the model's tool.
    pub fn from_json_at_current(value: &Value) -> Result<Self, Error> {
        Self::parse(value, false)
    }

    fn parse(value: &Value, base_required: bool) -> Result<Self, Error> {
        let object = value.as_object().ok_or_else(|| invalid("the request must be a JSON object"))?;
        if let Some(unknown) = object.keys().find(|key| !FIELDS.contains(&key.as_str())) {
            return Err(invalid(format!("unknown field: {unknown}")));
        }
        let field = |name: &str| object.get(name).unwrap_or(&Value::Null);
        let base_revision = match field("base_revision") {
            Value::String(text) if !text.trim().is_empty() => Some(text.clone()),
            Value::Null if !base_required => None,
            _ => return Err(invalid("base_revision is required")),
        };
        let commit_message = match field("commit_message") {
            Value::Null => DEFAULT_MESSAGE.to_owned(),
            Value::String(text) => text.clone(),
            _ => return Err(invalid("commit_message must be a string")),
        };
        let git_commit = match field("git_commit") {
            Value::Null => GitMode::Auto,
            Value::String(mode) if mode == "auto" => GitMode::Auto,
            Value::String(mode) if mode == "on" => GitMode::On,
            Value::String(mode) if mode == "off" => GitMode::Off,
            _ => return Err(invalid("git_commit must be one of auto, on, off")),
        };
        let append_only = match field("append_only") {
            Value::Null => false,
            Value::Bool(flag) => *flag,
            _ => return Err(invalid("append_only must be a boolean")),
        };
        let edit = parse_edit(object)?;
        let sources = parse_evidence(field("sources"))?;
        let provenance = parse_provenance(field("provenance"))?;
        if !sources.is_empty() && provenance.is_none() {
            return Err(Error::new(
                ErrorCode::WriterPreconditionFailed,
                "creating sources requires the runtime's provenance of the current turn",
            ));
        }
        Ok(UpdateRequest {
            base_revision,
            edit,
            sources,
            commit_message,
            append_only,
            provenance,
            git_commit,
            citations: CitationScope::ThisCall,
            known_ids_from: BTreeMap::new(),
        })
    }
}

/// Exactly one of `patch`, `changes`, `memory_changes`.
fn parse_edit(object: &Map<String, Value>) -> Result<Edit, Error> {
    let present: Vec<&str> = ["patch", "changes", "memory_changes"]
        .into_iter()
        .filter(|name| object.get(*name).is_some_and(|value| !value.is_null()))
        .collect();
    match present.as_slice() {
        ["patch"] => match object.get("patch") {
            Some(Value::String(text)) if text.len() > MAX_PATCH_BYTES => {
                Err(invalid(format!("patch exceeds {MAX_PATCH_BYTES} bytes")).with_detail("bytes", text.len()))
            }
            Some(Value::String(text)) if !text.trim().is_empty() => {
                Patch::parse(text).map(|_| Edit::Patch(text.clone()))
            }
            _ => Err(invalid("patch must be a non-empty string")),
        },
        ["changes"] => Ok(Edit::Changes(parse_changes(object.get("changes").unwrap_or(&Value::Null))?)),
        ["memory_changes"] => match object.get("memory_changes") {
            Some(Value::Array(items)) if !items.is_empty() => Ok(Edit::MemoryChanges(Value::Array(items.clone()))),
            Some(Value::Array(_)) => Err(invalid("memory_changes must not be empty")),
            _ => Err(invalid("memory_changes must be a list")),
        },
        _ => Err(invalid("exactly one of patch, changes or memory_changes is required")),
    }
}

fn parse_provenance(value: &Value) -> Result<Option<Provenance>, Error> {
    let object = match value {
        Value::Null => return Ok(None),
        Value::Object(object) => object,
        _ => return Err(invalid("provenance must be an object")),
    };
    if let Some(unknown) = object.keys().find(|key| !PROVENANCE_FIELDS.contains(&key.as_str())) {
        return Err(invalid(format!("provenance has unknown field: {unknown}")));
    }
    let text = |name: &str| -> Result<String, Error> {
        match object.get(name) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(text)) => Ok(text.clone()),
            Some(_) => Err(invalid(format!("provenance.{name} must be a string"))),
        }
    };
    Ok(Some(Provenance {
        principal_id: text("principal_id")?,
        speaker_kind: text("speaker_kind")?,
        speaker_id: text("speaker_id")?,
        speaker_display: text("speaker_display")?,
        authority_tier: text("authority_tier")?,
        origin_id: text("origin_id")?,
    }))
}

pub(crate) fn invalid(message: impl Into<Box<str>>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}
