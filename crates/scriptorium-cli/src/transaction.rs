//! The writing verbs: `update`, `restore`, `history` and `check --repair`. Each goes
//! through `scriptorium-transaction`, so every write is one validated, all-or-nothing
//! install, with the derived views rebuilt in the same install; a rejected transaction
//! prints `error[CODE]: message` with its public contract code and exits 1.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use scriptorium_backend_api::layers::derived_views::DerivedViews;

use scriptorium_backend_api::layers::transaction::{
    CitationScope, Edit, Error, ErrorCode, FileChange, History, TopicPath, UpdateRequest, UpdateResult, Workspace,
    is_revision,
};

use crate::Outcome;
use crate::cli::{HistoryArgs, RestoreArgs, UpdateArgs};
use crate::error::{CliError, CliErrorCode};
use crate::output::{print, print_json};
use crate::workspace::Workspace as Located;

/// The most violations a rejected update lists, as `check` caps its list.
const MAX_LISTED: usize = 200;

/// The longest `history --limit`.
const HISTORY_LIMIT_MAX: usize = 10_000;

/// Run `update`.
pub(crate) fn update(args: &UpdateArgs) -> Result<Outcome, CliError> {
    let root = Located::locate(args.workspace.as_deref())?.root;
    let request = match update_request(args)? {
        Ok(request) => request,
        Err(error) => return rejected(&error, args.json),
    };
    let interrupted = Interrupt::install()?;
    let outcome = open(&root).and_then(|workspace| {
        workspace.update_cancellable(&request, &DerivedViews::default(), &|| interrupted.happened())
    });
    finish(outcome, args.json, &interrupted)
}

/// The request `update` sends: read from the files named on the command line and checked
/// before the workspace is opened (spec 02 §4.3), so a malformed call changes nothing.
/// The outer error is bad usage (an unreadable file, not JSON); the inner one a
/// rejection with its contract code.
fn update_request(args: &UpdateArgs) -> Result<Result<UpdateRequest, Error>, CliError> {
    let read_json = |path: &Path| -> Result<Value, CliError> {
        let bytes = std::fs::read(path).map_err(|e| CliError::read(path, &e))?;
        serde_json::from_slice(&bytes)
            .map_err(|e| CliError::new(CliErrorCode::Usage, format!("{}: not JSON: {e}", path.display())))
    };
    let mut fields = match &args.request {
        Some(path) => match read_json(path)? {
            Value::Object(fields) => fields,
            _ => return Ok(Err(invalid(format!("{}: the request must be a JSON object", path.display())))),
        },
        None => serde_json::Map::new(),
    };
    if let Some(path) = &args.changes {
        fields.insert("changes".to_owned(), read_json(path)?);
    }
    if let Some(path) = &args.patch {
        let text = std::fs::read_to_string(path).map_err(|e| CliError::read(path, &e))?;
        fields.insert("patch".to_owned(), Value::String(text));
    }
    if let Some(message) = &args.message {
        fields.insert("commit_message".to_owned(), Value::String(message.clone()));
    }
    if let Some(base) = &args.base_revision {
        match fields.get("base_revision") {
            Some(Value::String(given)) if given != base => {
                return Ok(Err(invalid("--base-revision differs from the request's base_revision")));
            }
            _ => {
                fields.insert("base_revision".to_owned(), Value::String(base.clone()));
            }
        }
    }
    // A base that is not a revision can never match: a typo, not a concurrent update.
    if let Some(base) = fields.get("base_revision").and_then(Value::as_str)
        && !is_revision(base)
    {
        return Ok(Err(invalid(format!("base revision is not 32 lowercase hex digits: {base:?}"))
            .with_detail("base_revision", base)));
    }
    Ok(UpdateRequest::from_json_at_current(&Value::Object(fields)))
}

fn invalid(message: impl Into<Box<str>>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

/// SIGINT and SIGTERM during a transaction: instead of dying mid-way, the process lets
/// the transaction cancel itself before its install (or finish it, once past that
/// point), then says which happened.
struct Interrupt {
    flag: Arc<AtomicBool>,
}

impl Interrupt {
    fn install() -> Result<Self, CliError> {
        let flag = Arc::new(AtomicBool::new(false));
        for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            signal_hook::flag::register(signal, Arc::clone(&flag)).map_err(|err| {
                CliError::new(CliErrorCode::Internal, format!("cannot handle signal {signal}: {err}"))
            })?;
        }
        Ok(Interrupt { flag })
    }

    fn happened(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }
}

/// Report a transaction's outcome, saying on an interrupt whether the edit was installed
/// (exit 0 when it was, 130 when nothing changed).
fn finish(outcome: Result<UpdateResult, Error>, as_json: bool, interrupted: &Interrupt) -> Result<Outcome, CliError> {
    match outcome {
        Ok(result) => {
            let reported = report(Ok(result), as_json);
            if interrupted.happened() {
                eprintln!("interrupted: the edit was installed before the signal could stop it");
            }
            reported
        }
        Err(error) if error.code() == ErrorCode::Cancelled || interrupted.happened() => {
            if error.code() == ErrorCode::Cancelled {
                if as_json {
                    print_json(&error_json(&error))?;
                }
            } else {
                // Rejected on its own while the signal was pending: still say why.
                rejected(&error, as_json)?;
            }
            eprintln!("interrupted: nothing was installed; the workspace is unchanged");
            Ok(Outcome::Interrupted)
        }
        Err(error) => rejected(&error, as_json),
    }
}

/// Run `restore REV [PATH…]`.
pub(crate) fn restore(args: &RestoreArgs) -> Result<Outcome, CliError> {
    let root = Located::locate(args.workspace.as_deref())?.root;
    let interrupted = Interrupt::install()?;
    let outcome = open(&root).and_then(|workspace| {
        let scope: Vec<String> = if args.paths.is_empty() { vec!["topics".to_owned()] } else { args.paths.clone() };
        let history = History::open_existing(workspace.root())?
            .ok_or_else(|| Error::new(ErrorCode::MemoryNotFound, "the workspace has no history yet"))?;
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
        workspace.update_cancellable(&request, &DerivedViews::default(), &|| interrupted.happened()).map(Some)
    });
    match outcome {
        Ok(None) => {
            print("nothing to restore: the files already match\n")?;
            Ok(Outcome::Clean)
        }
        Ok(Some(result)) => finish(Ok(result), args.json, &interrupted),
        Err(error) => finish(Err(error), args.json, &interrupted),
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
                Error::new(scriptorium_backend_api::layers::transaction::ErrorCode::InvalidTopicFormat, "not UTF-8")
                    .with_path(path)
            })?;
            changes.push(FileChange { path: topic, content: Some(content) });
        }
    }
    for path in now.keys().filter(|path| in_scope(path) && !then.contains_key(*path)) {
        changes.push(FileChange { path: TopicPath::new(path)?, content: None });
    }
    Ok(changes)
}

/// Run `history`. Reads only: a workspace without `.git/` has no history to list.
pub(crate) fn history(args: &HistoryArgs) -> Result<Outcome, CliError> {
    if !(1..=HISTORY_LIMIT_MAX).contains(&args.limit) {
        return Err(CliError::invalid_argument(format!(
            "--limit must be 1 to {HISTORY_LIMIT_MAX}, not {}",
            args.limit
        )));
    }
    let root = Located::locate(args.workspace.as_deref())?.root;
    let entries = match History::open_existing(&root).and_then(|history| match history {
        Some(history) => history.list(args.limit),
        None => Ok(Vec::new()),
    }) {
        Ok(entries) => entries,
        Err(error) => return rejected(&error, args.json),
    };
    if args.json {
        let list: Vec<Value> = entries
            .iter()
            .map(|e| {
                json!({"id": e.id, "time": e.time, "iso_time": e.iso_time(), "message": e.message, "changed": e.changed})
            })
            .collect();
        print_json(&Value::Array(list))?;
    } else {
        let mut out = String::new();
        if entries.is_empty() {
            out.push_str("no history yet: the first installed edit starts it\n");
        }
        for entry in &entries {
            let short = entry.id.get(..12).unwrap_or(&entry.id);
            let files = crate::output::count(entry.changed.len(), "file", "files");
            out.push_str(&format!("{short} {} {} ({files})\n", entry.iso_time(), entry.message));
        }
        print(&out)?;
    }
    Ok(Outcome::Clean)
}

/// `check --repair`: recover, then quarantine unreadable archive tails.
pub(crate) fn repair(root: &Path) -> Result<Option<Outcome>, CliError> {
    let workspace = match open(root) {
        Ok(workspace) => workspace,
        Err(error) => return rejected(&error, false).map(Some),
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
        Err(error) => return rejected(&error, false).map(Some),
    }
    match workspace.repair_rewritten_sources() {
        Ok(restored) => {
            for source in restored {
                let moved = source.quarantined.map_or_else(String::new, |q| format!("; altered bytes moved to {q}"));
                out.push_str(&format!(
                    "repair: {} restored to its {} committed bytes{moved}\n",
                    source.path, source.restored_bytes
                ));
            }
        }
        Err(error) => return rejected(&error, false).map(Some),
    }
    if !out.is_empty() {
        eprint!("{out}");
    }
    Ok(None)
}

fn open(root: &Path) -> Result<Workspace, Error> {
    Workspace::open(root)
}

pub(crate) fn report(outcome: Result<UpdateResult, Error>, as_json: bool) -> Result<Outcome, CliError> {
    let result = match outcome {
        Ok(result) => result,
        Err(error) => return rejected(&error, as_json),
    };
    if as_json {
        print_json(&result.to_json())?;
    } else {
        let mut out = format!("revision {}\n", result.revision);
        for path in &result.changed_files {
            out.push_str(&format!("changed {path}\n"));
        }
        for path in &result.dropped_files {
            out.push_str(&format!("dropped {path}: it holds no cited record, so normalization removed it\n"));
        }
        if let Some(commit) = &result.git_commit {
            out.push_str(&format!("commit {commit}\n"));
        }
        print(&out)?;
    }
    for path in &result.dropped_files {
        eprintln!("warning: {path} was not installed: a topic file without a cited record is removed");
    }
    Ok(Outcome::Clean)
}

/// The structured error object of spec 02 §4.12: `{ok: false, error: {code, message, path, details?}}`.
fn error_json(error: &Error) -> Value {
    let mut body = serde_json::Map::new();
    body.insert("code".to_owned(), json!(error.code().as_str()));
    body.insert("message".to_owned(), json!(error.message()));
    body.insert("path".to_owned(), json!(error.path()));
    if !error.details().is_empty() {
        body.insert("details".to_owned(), Value::Object(error.details().clone()));
    }
    json!({"ok": false, "error": Value::Object(body)})
}

/// A rejected or failed transaction, exit status 1: with `--json` the error object on
/// stdout; on stderr the line `error[CODE]: message`, then every violation the
/// transaction found (at most 200, then a count) and, where it helps, how to fix it.
pub(crate) fn rejected(error: &Error, as_json: bool) -> Result<Outcome, CliError> {
    if as_json {
        print_json(&error_json(error))?;
    }
    let one_line =
        |text: &str| -> String { text.chars().map(|c| if c == '\n' || c == '\r' { ' ' } else { c }).collect() };
    let message = one_line(&error.to_string());
    let message = message.strip_prefix(&format!("{}: ", error.code())).unwrap_or(&message).to_owned();
    let mut out = format!("error[{}]: {message}\n", error.code());
    let violations = error.details().get("violations").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for violation in violations.iter().take(MAX_LISTED) {
        let text = |key: &str| violation.get(key).and_then(Value::as_str).unwrap_or_default();
        let line = violation.get("line").and_then(Value::as_u64).map_or_else(String::new, |line| format!(":{line}"));
        out.push_str(&format!("  {}{line}: {} {}\n", text("file"), text("code"), one_line(text("detail"))));
    }
    if violations.len() > MAX_LISTED {
        out.push_str(&format!("  … and {} more violations\n", violations.len() - MAX_LISTED));
    }
    if let Some(hint) = hint(error) {
        out.push_str(&format!("  hint: {hint}\n"));
    }
    eprint!("{out}");
    Ok(Outcome::Findings)
}

/// How to supply the evidence a rejected citation lacks.
fn hint(error: &Error) -> Option<&'static str> {
    let policy = error.details().get("source_policy").and_then(Value::as_str);
    match (error.code(), policy) {
        (ErrorCode::InvalidTopicFormat, Some("not_evidence")) => Some(
            "a new citation must name evidence of this update: pass `--request FILE.json` whose `sources` \
             archives it (`[{\"label\": \"new-source-x\", \"role\": \"user\", \"content\": \"…\"}]`, cited as \
             `new-source-x`, with `provenance`), or cite an existing source through `memory_changes` \
             `sources: [{\"source\": ID, \"label\": …}]`",
        ),
        (ErrorCode::MissingSource, _) => Some(
            "declare every `new-source-…` label the edit uses in the request's `sources` (`update --request FILE.json`)",
        ),
        (ErrorCode::WriterPreconditionFailed, _) => Some(
            "archiving `sources` needs the request's `provenance`: {principal_id, speaker_kind, speaker_id, \
             speaker_display, authority_tier, origin_id}",
        ),
        _ => None,
    }
}
