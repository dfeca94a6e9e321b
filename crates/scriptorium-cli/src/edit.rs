//! `scriptorium edit PATH`: a hand edit of one topic file in `$VISUAL` / `$EDITOR`. The
//! editor works on a draft copy in the runtime directory (`drafts/`); on save the draft
//! is validated and installed as one transaction (citations need only name trusted
//! sources, as for any hand edit). A rejected draft is kept, and its place printed, so
//! the work is not lost; the topic file is untouched.

use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Args;
use scriptorium_backend_api::layers::derived_views::DerivedViews;
use scriptorium_backend_api::layers::transaction::{
    CitationScope, Edit, FileChange, TopicPath, UpdateRequest, Workspace,
};

use crate::Outcome;
use crate::error::{CliError, CliErrorCode};
use crate::output::print;
use crate::workspace::Workspace as Located;

/// The draft directory inside the runtime directory.
const DRAFTS: &str = "drafts";

/// Arguments of `edit`.
#[derive(Debug, Args)]
pub(crate) struct EditArgs {
    /// The topic file (`topics/prefs.md`; `.md` is added when missing).
    #[arg(value_name = "PATH")]
    pub(crate) path: String,
    /// The workspace root (default as for `check`).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// The history message (default `memory: hand edit PATH`).
    #[arg(long, value_name = "TEXT")]
    pub(crate) message: Option<String>,
    /// Print the transaction's result (or its error object) as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Run `edit`.
pub(crate) fn run(args: &EditArgs) -> Result<Outcome, CliError> {
    let root = Located::locate(args.workspace.as_deref())?.root;
    let raw = if args.path.ends_with(".md") { args.path.clone() } else { format!("{}.md", args.path) };
    let topic = TopicPath::new(&raw).map_err(|error| CliError::refused(error.code().as_str(), error.message()))?;
    let original = read_topic(&root, topic.as_str())?;
    let workspace =
        Workspace::open(&root).map_err(|error| CliError::refused(error.code().as_str(), error.message()))?;
    // The revision the draft is made from: an install by someone else meanwhile is a
    // CONCURRENT_UPDATE, not a silent overwrite.
    let base = workspace.revision().map_err(|error| CliError::refused(error.code().as_str(), error.message()))?;
    let draft = write_draft(&workspace.runtime_dir(), topic.as_str(), &original)?;
    run_editor(&draft)?;
    let edited = std::fs::read(&draft).map_err(|err| CliError::read(&draft, &err))?;
    if edited == original {
        let _ = std::fs::remove_file(&draft);
        print(&format!("no change: {} is as it was\n", topic.as_str()))?;
        return Ok(Outcome::Clean);
    }
    let Ok(content) = String::from_utf8(edited) else {
        return kept(&draft, "the draft is not UTF-8");
    };
    let mut request =
        UpdateRequest::new(base, Edit::Changes(vec![FileChange { path: topic.clone(), content: Some(content) }]));
    request.commit_message = args.message.clone().unwrap_or_else(|| format!("memory: hand edit {}", topic.as_str()));
    request.citations = CitationScope::AnyTrusted;
    match workspace.update(&request, &DerivedViews::default()) {
        Ok(result) => {
            let _ = std::fs::remove_file(&draft);
            if !args.json {
                print("validated and derived views rebuilt\n")?;
            }
            crate::transaction::report(Ok(result), args.json)
        }
        Err(error) => {
            crate::transaction::rejected(&error, args.json)?;
            eprintln!(
                "the draft is kept at {} (edit it and run `scriptorium edit` again, or copy it back)",
                draft.display()
            );
            Ok(Outcome::Findings)
        }
    }
}

/// The topic file's bytes; it must exist as a regular file (never through a link).
fn read_topic(root: &Path, relative: &str) -> Result<Vec<u8>, CliError> {
    let path = root.join(relative);
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_file() => std::fs::read(&path).map_err(|err| CliError::read(&path, &err)),
        Ok(_) => Err(CliError::new(CliErrorCode::FileNotFound, format!("{relative} is not a regular file"))),
        Err(_) => Err(CliError::new(
            CliErrorCode::FileNotFound,
            format!("{relative}: no such topic file (`scriptorium update` creates new ones)"),
        )),
    }
}

/// A fresh draft `drafts/<stem>-<time>-<pid>.md` holding `bytes`.
fn write_draft(runtime_dir: &Path, relative: &str, bytes: &[u8]) -> Result<PathBuf, CliError> {
    let dir = runtime_dir.join(DRAFTS);
    std::fs::create_dir_all(&dir)
        .map_err(|err| CliError::new(CliErrorCode::EditFailed, format!("cannot create {}: {err}", dir.display())))?;
    let stem = relative.trim_start_matches("topics/").trim_end_matches(".md").replace('/', "-");
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let draft = dir.join(format!("{stem}-{stamp}-{}.md", std::process::id()));
    std::fs::write(&draft, bytes)
        .map_err(|err| CliError::new(CliErrorCode::EditFailed, format!("cannot write {}: {err}", draft.display())))?;
    Ok(draft)
}

/// `$VISUAL`, else `$EDITOR`, else `vi`, run by the shell (so `EDITOR="code -w"` works)
/// with the draft as its one argument; waits for it to exit.
fn run_editor(draft: &Path) -> Result<(), CliError> {
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|value| !value.trim().is_empty())
        .unwrap_or_else(|| "vi".to_owned());
    let status =
        Command::new("sh").arg("-c").arg(format!("{editor} \"$1\"")).arg("sh").arg(draft).status().map_err(|err| {
            CliError::new(CliErrorCode::EditFailed, format!("cannot start the editor {editor:?}: {err}"))
        })?;
    if !status.success() {
        return Err(CliError::new(
            CliErrorCode::EditFailed,
            format!("the editor {editor:?} failed ({status}); the draft is kept at {}", draft.display()),
        ));
    }
    Ok(())
}

/// A draft that cannot even be offered to the transaction: kept, exit status 1.
fn kept(draft: &Path, why: &str) -> Result<Outcome, CliError> {
    eprintln!("error[{}]: {why}", CliErrorCode::EditFailed.as_str());
    eprintln!("the draft is kept at {}", draft.display());
    Ok(Outcome::Findings)
}
