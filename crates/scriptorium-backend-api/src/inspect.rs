//! Read-only views of a workspace for front ends that run one command and exit (the
//! CLI's `recall`, `show`, `status` and `export`): the same code the tools run, without a
//! warm backend, so reading opens no session store and creates nothing.
//!
//! ```
//! let root = std::env::temp_dir().join(format!("scriptorium-inspect-doc-{}", std::process::id()));
//! std::fs::create_dir_all(root.join("topics")).unwrap();
//! std::fs::write(root.join("topics/tea.md"), "# Tea\n\nAda likes tea. ^aaaa1111\n").unwrap();
//! let files = scriptorium_backend_api::inspect::visible_files(&root).unwrap();
//! assert_eq!(files, ["topics/tea.md"]);
//! let text = scriptorium_backend_api::inspect::get(&root, "topics/tea.md", Some("aaaa1111")).unwrap();
//! assert_eq!(text, "Ada likes tea. ^aaaa1111");
//! # std::fs::remove_dir_all(&root).unwrap();
//! ```

mod frame;

use std::path::Path;

use scriptorium_retrieval::Index;
use scriptorium_transaction::{FileClass, Listing, Scope};
use serde_json::{Value, json};

use crate::config::MemoryConfig;
use crate::error::{Error, ErrorCode};

pub use self::frame::{Citation, FrameView, cited_frames, frame};

/// The civil date (year, month, day; proleptic Gregorian, UTC) of a day count since
/// 1970-01-01, for front ends that name files by date.
pub use scriptorium_transaction::civil_from_days;

/// The persistent search index's file, relative to the workspace root: a front end that
/// finds it missing knows the first query builds the index from every file.
pub const INDEX_CACHE_PATH: &str = scriptorium_retrieval::CACHE_PATH;

/// One hit of automatic recall (spec 02 §1.5), with where it points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recalled {
    /// The workspace-relative file of the hit.
    pub path: String,
    /// `#^<block id>` for a topic claim, `#source-<16 hex>` for a source record.
    pub anchor: String,
    /// The text the model is given (not yet fenced).
    pub content: String,
}

/// What automatic recall gives the model for `query`: the fenced text (`""` when nothing
/// is recalled) and the hits it was made of. The persistent index is refreshed from the
/// files first.
///
/// Errors: `BACKEND_IO` when the workspace cannot be read.
pub fn recall(root: &Path, query: &str, config: &MemoryConfig) -> Result<(String, Vec<Recalled>), Error> {
    if query.trim().is_empty() {
        return Ok((String::new(), Vec::new()));
    }
    let mut index = Index::open(root)?;
    // A cache that cannot be written only makes the next start slower.
    let _ = index.save(root);
    let hits = crate::local::recalled(&index, query, config);
    let joined = hits.iter().map(|hit| hit.content.as_str()).collect::<Vec<_>>().join("\n\n");
    Ok((crate::fence::fence(&joined), hits))
}

/// The workspace's id (`w-…`, spec 01 §1.4) as its first open recorded it in the
/// runtime directory; `None` before that or when the file does not hold a valid id.
pub fn workspace_id(root: &Path) -> Option<String> {
    use scriptorium_transaction::{RealVfs, WORKSPACE_ID_FILE, is_valid_workspace_id, runtime_dir_name};
    let runtime = runtime_dir_name(&RealVfs::new(root)).ok()?;
    let text = std::fs::read_to_string(root.join(runtime).join(WORKSPACE_ID_FILE)).ok()?;
    let id = text.trim();
    is_valid_workspace_id(id).then(|| id.to_owned())
}

/// The last `core.md` render report (tokens used of the budget, blocks rendered and left
/// out and why), as the install that rendered it wrote it in the runtime directory;
/// `None` when no install has rendered `topics/core.md` yet.
pub fn core_report(root: &Path) -> Option<String> {
    let runtime = scriptorium_transaction::runtime_dir_name(&scriptorium_transaction::RealVfs::new(root)).ok()?;
    let bytes = std::fs::read(root.join(runtime).join(scriptorium_transaction::CORE_REPORT_FILE)).ok()?;
    String::from_utf8(bytes).ok()
}

/// `memory_get`'s text of one file (its first 400 lines; a source archive's record lines
/// only), or of one block with the footnote definitions it cites.
///
/// Errors: `PATH_OUTSIDE_WORKSPACE` for a path that leaves the workspace or names an
/// internal file; `INVALID_ARGUMENT` for a missing file or block.
pub fn get(root: &Path, path: &str, block_id: Option<&str>) -> Result<String, Error> {
    let arguments = match block_id {
        Some(id) => json!({ "path": path, "block_id": id }),
        None => json!({ "path": path }),
    };
    crate::tools::get::read(root, &arguments)
}

/// Every visible file of the workspace (topics, sources, derived views, `core.md`; never
/// the runtime directory, `.git/` or another hidden path, never a symbolic link), in the
/// listing's order, which is the same on every run.
///
/// Errors: `BACKEND_IO` when a directory cannot be listed.
pub fn visible_files(root: &Path) -> Result<Vec<String>, Error> {
    Ok(visible(root)?.into_iter().map(|(path, _)| path).collect())
}

fn visible(root: &Path) -> Result<Vec<(String, FileClass)>, Error> {
    let listing = Listing::read_names(root, Scope::Root)
        .complete()
        .map_err(|error| Error::new(ErrorCode::Io, format!("cannot list the workspace: {error}")))?;
    Ok(listing
        .files
        .iter()
        .filter(|file| file.class().is_visible())
        .filter_map(|file| Some((file.path()?.to_owned(), file.class())))
        .collect())
}

/// The fields of `memory_status` (spec 02 §7) that the files decide, in the spec's order
/// after `workspace` and `revision`: `topic_files`, `blocks`, `source_files`,
/// `timeline_files`, `recent_events`, `relations`, `core_exists`, `embedding_available`.
///
/// Errors: `BACKEND_IO` when a directory cannot be listed.
pub fn status_counts(root: &Path) -> Result<Vec<(&'static str, Value)>, Error> {
    let files = visible(root)?;
    Ok(crate::tools::status::counts(root, &files)
        .into_iter()
        .map(|(key, rendered)| (key, serde_json::from_str(&rendered).unwrap_or(Value::Null)))
        .collect())
}
