//! The writing verbs: `update`, `restore`, `history` and `check --repair`. Each goes
//! through `scriptorium-transaction`, so every write is one validated, all-or-nothing
//! install, with the derived views rebuilt in the same install; a rejected transaction
//! prints `error[CODE]: message` with its public contract code and exits 1.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use scriptorium_derived_views::DerivedViews;

use scriptorium_transaction::{
    CitationScope, Edit, Error, FileChange, History, TopicPath, UpdateRequest, UpdateResult, Workspace,
};

use crate::Outcome;
use crate::cli::{HistoryArgs, RestoreArgs, UpdateArgs};
use crate::error::{CliError, CliErrorCode};
use crate::output::{print, print_json};
use crate::workspace::Workspace as Located;

/// Run `update`.
pub(crate) fn update(args: &UpdateArgs) -> Result<Outcome, CliError> {
    let root = Located::locate(args.workspace.as_deref())?.root;
    let mut fields = serde_json::Map::new();
    if let Some(path) = &args.changes {
        let bytes = std::fs::read(path).map_err(|e| CliError::read(path, &e))?;
        let changes: Value = serde_json::from_slice(&bytes)
            .map_err(|e| CliError::new(CliErrorCode::Usage, format!("{}: not JSON: {e}", path.display())))?;
        fields.insert("changes".to_owned(), changes);
    }
    if let Some(path) = &args.patch {
        let text = std::fs::read_to_string(path).map_err(|e| CliError::read(path, &e))?;
        fields.insert("patch".to_owned(), Value::String(text));
    }
    if let Some(message) = &args.message {
        fields.insert("commit_message".to_owned(), Value::String(message.clone()));
    }
    let outcome = open(&root).and_then(|workspace| {
        let base = match &args.base_revision {
            Some(revision) => revision.clone(),
            None => workspace.revision()?,
        };
        fields.insert("base_revision".to_owned(), Value::String(base));
        let request = UpdateRequest::from_json(&Value::Object(fields))?;
        workspace.update(&request, &DerivedViews::default())
    });
    report(outcome, args.json)
}

/// Run `restore REV [PATH…]`.
pub(crate) fn restore(args: &RestoreArgs) -> Result<Outcome, CliError> {
    let root = Located::locate(args.workspace.as_deref())?.root;
    let outcome = open(&root).and_then(|workspace| {
        let scope: Vec<String> = if args.paths.is_empty() { vec!["topics".to_owned()] } else { args.paths.clone() };
        let history = History::open_or_init(workspace.root())?;
        let scope_refs: Vec<&str> = scope.iter().map(String::as_str).collect();
        let then = history.files_at(&args.rev, &scope_refs)?;
        let snapshot = workspace.snapshot()?;
        let changes = restore_changes(&scope, &then, &snapshot.topics)?;
        if changes.is_empty() {
            return Ok(None);
        }
        let mut request = UpdateRequest::new(snapshot.revision, Edit::Changes(changes));
        request.commit_message = format!("memory: restore {} {}", args.rev, scope.join(" "));
        // The owner brings back bytes that history already held: their citations need
        // only resolve to trusted sources, as for a hand edit (spec 02 §4.7).
        request.citations = CitationScope::AnyTrusted;
        // Restored paragraphs keep the block ids they had, so links to them work again.
        request.known_ids_from = then.into_iter().filter(|(path, _)| path.ends_with(".md")).collect();
        workspace.update(&request, &DerivedViews::default()).map(Some)
    });
    match outcome {
        Ok(None) => {
            print("nothing to restore: the files already match\n")?;
            Ok(Outcome::Clean)
        }
        Ok(Some(result)) => report(Ok(result), args.json),
        Err(error) => report(Err(error), args.json),
    }
}

/// The whole-file changes that bring the topic files in `scope` to their bytes `then`.
fn restore_changes(
    scope: &[String],
    then: &BTreeMap<String, Vec<u8>>,
    now: &BTreeMap<String, Vec<u8>>,
) -> Result<Vec<FileChange>, Error> {
    let in_scope =
        |path: &str| scope.iter().any(|s| path == s || path.starts_with(&format!("{}/", s.trim_end_matches('/'))));
    let mut changes = Vec::new();
    for (path, bytes) in then {
        let topic = TopicPath::new(path)?;
        if now.get(path) != Some(bytes) {
            let content = String::from_utf8(bytes.clone()).map_err(|_| {
                Error::new(scriptorium_transaction::ErrorCode::InvalidTopicFormat, "not UTF-8").with_path(path)
            })?;
            changes.push(FileChange { path: topic, content: Some(content) });
        }
    }
    for path in now.keys().filter(|path| in_scope(path) && !then.contains_key(*path)) {
        changes.push(FileChange { path: TopicPath::new(path)?, content: None });
    }
    Ok(changes)
}

/// Run `history`.
pub(crate) fn history(args: &HistoryArgs) -> Result<Outcome, CliError> {
    let root = Located::locate(args.workspace.as_deref())?.root;
    let entries = match History::open_or_init(&root).and_then(|history| history.list(args.limit)) {
        Ok(entries) => entries,
        Err(error) => return rejected(&error),
    };
    if args.json {
        let list: Vec<Value> = entries
            .iter()
            .map(|e| json!({"id": e.id, "time": e.time, "message": e.message, "changed": e.changed}))
            .collect();
        print_json(&Value::Array(list))?;
    } else {
        let mut out = String::new();
        for entry in &entries {
            let short = entry.id.get(..12).unwrap_or(&entry.id);
            out.push_str(&format!("{short} {} {} ({} files)\n", entry.time, entry.message, entry.changed.len()));
        }
        print(&out)?;
    }
    Ok(Outcome::Clean)
}

/// `check --repair`: recover, then quarantine unreadable archive tails.
pub(crate) fn repair(root: &Path) -> Result<Option<Outcome>, CliError> {
    let workspace = match open(root) {
        Ok(workspace) => workspace,
        Err(error) => return rejected(&error).map(Some),
    };
    let mut out = String::new();
    if !workspace.recovery().is_clean() {
        out.push_str("repair: recovered an interrupted install\n");
    }
    match workspace.repair_archives() {
        Ok(repaired) => {
            for archive in repaired {
                out.push_str(&format!(
                    "repair: {} truncated to {} bytes; tail moved to {}\n",
                    archive.path, archive.kept_bytes, archive.quarantined
                ));
            }
        }
        Err(error) => return rejected(&error).map(Some),
    }
    if !out.is_empty() {
        eprint!("{out}");
    }
    Ok(None)
}

fn open(root: &Path) -> Result<Workspace, Error> {
    Workspace::open(root)
}

fn report(outcome: Result<UpdateResult, Error>, as_json: bool) -> Result<Outcome, CliError> {
    let result = match outcome {
        Ok(result) => result,
        Err(error) => return rejected(&error),
    };
    if as_json {
        print_json(&result.to_json())?;
    } else {
        let mut out = format!("revision {}\n", result.revision);
        for path in &result.changed_files {
            out.push_str(&format!("changed {path}\n"));
        }
        if let Some(commit) = &result.git_commit {
            out.push_str(&format!("commit {commit}\n"));
        }
        print(&out)?;
    }
    Ok(Outcome::Clean)
}

/// A rejected or failed transaction: one line with the public code, exit status 1.
fn rejected(error: &Error) -> Result<Outcome, CliError> {
    let message: String = error.to_string().chars().map(|c| if c == '\n' { ' ' } else { c }).collect();
    let message = message.strip_prefix(&format!("{}: ", error.code())).unwrap_or(&message).to_owned();
    eprintln!("error[{}]: {message}", error.code());
    Ok(Outcome::Findings)
}
