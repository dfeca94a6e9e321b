//! `scriptorium sleep`, `backfill` and `promote`: the writer runs that are not a
//! session's write hook (spec 02 §8.1, §8.2, §5), each with the configured writer model
//! ([`crate::model`]) and each printing the report the spec names.

use std::sync::Arc;

use serde_json::{Value, json};

use scriptorium_backend_api::layers::writer_runtime::{
    BACKFILL_BUDGET_TOKENS, BackfillStatus, PassError, ReorganizeStatus, Runtime, classify,
};

use crate::Outcome;
use crate::cli::{PromoteArgs, WriterVerbArgs};
use crate::error::CliError;
use crate::output::{print, print_json};
use crate::workspace::Workspace;
use crate::writer_cmd::sessions_path;

/// The runtime for a writer verb, or the `error[CODE]` line that says why there is none.
fn runtime_for(args: &WriterVerbArgs) -> Result<Result<Runtime, Outcome>, CliError> {
    let workspace = Workspace::locate(args.workspace.as_deref())?;
    let built = crate::model::writer(&args.model).and_then(|writer| {
        crate::model::runtime(
            &workspace.root,
            sessions_path(&workspace.root, args.sessions.as_deref()),
            Arc::new(writer),
        )
    });
    Ok(built.map_err(|error| {
        eprintln!("error[{}]: {}", error.code, error.message);
        Outcome::Findings
    }))
}

/// A failed run as its `error[CODE]` line: a transaction's own code (a source that is
/// not there, a lock held elsewhere), else the write-failure classification.
fn failed(error: &PassError) -> Outcome {
    match error {
        PassError::Transaction(error) => eprintln!("error[{}]: {}", error.code().as_str(), error.message()),
        other => {
            let failure = classify(other);
            eprintln!("error[{}]: {}", failure.reason_code, failure.reason);
        }
    }
    Outcome::Findings
}

fn report(json: bool, value: &Value, human: String) -> Result<(), CliError> {
    if json { print_json(value) } else { print(&human) }
}

/// Run `sleep`: one organize run over every topic file.
pub(crate) fn sleep(args: &WriterVerbArgs) -> Result<Outcome, CliError> {
    let runtime = match runtime_for(args)? {
        Ok(runtime) => runtime,
        Err(outcome) => return Ok(outcome),
    };
    let done = match runtime.reorganize() {
        Ok(done) => done,
        Err(error) => return Ok(failed(&error)),
    };
    let status = match done.status {
        ReorganizeStatus::Disabled => "disabled",
        ReorganizeStatus::Empty => "empty",
        ReorganizeStatus::Ok => "ok",
        ReorganizeStatus::Busy => "busy",
    };
    let value = json!({"status": status, "topics": done.topics, "changed_files": done.changed_files});
    let changed = if done.changed_files.is_empty() {
        "the model changed nothing".to_owned()
    } else {
        format!("changed {}", done.changed_files.join(", "))
    };
    report(args.json, &value, format!("reorganize {status}: {} topic files; {changed}\n", done.topics))?;
    Ok(Outcome::Clean)
}

/// Run `backfill`: every uncited trusted source, in 16k-token batches.
pub(crate) fn backfill(args: &WriterVerbArgs) -> Result<Outcome, CliError> {
    let runtime = match runtime_for(args)? {
        Ok(runtime) => runtime,
        Err(outcome) => return Ok(outcome),
    };
    let spinner = crate::progress::spinner("backfilling uncited sources");
    let done = runtime.backfill(BACKFILL_BUDGET_TOKENS);
    spinner.finish_and_clear();
    let done = match done {
        Ok(done) => done,
        Err(error) => return Ok(failed(&error)),
    };
    let status = if done.status == BackfillStatus::Ok { "ok" } else { "incomplete" };
    let value = json!({
        "status": status, "candidates": done.candidates, "processed": done.processed,
        "remaining": done.remaining, "revision": done.revision,
    });
    let human = format!(
        "backfill {status}: {} candidates, {} processed, {} remaining (revision {})\n",
        done.candidates, done.processed, done.remaining, done.revision
    );
    report(args.json, &value, human)?;
    Ok(if done.status == BackfillStatus::Ok { Outcome::Clean } else { Outcome::Findings })
}

/// Run `promote`: trust one pending source, then distill it.
pub(crate) fn promote(args: &PromoteArgs) -> Result<Outcome, CliError> {
    let runtime = match runtime_for(&args.verb)? {
        Ok(runtime) => runtime,
        Err(outcome) => return Ok(outcome),
    };
    let done = match runtime.promote(&args.source_id, &args.principal) {
        Ok(done) => done,
        Err(error) => return Ok(failed(&error)),
    };
    let value = json!({
        "source_id": done.source_id, "promoted": done.promoted, "trust_state": done.trust_state,
        "distilled": done.distilled, "changed_files": done.changed_files,
    });
    let human = format!(
        "{}: {}, {}\n",
        done.source_id,
        if done.promoted { "promoted to trusted" } else { "already trusted" },
        if done.distilled { "distilled" } else { "not distilled" }
    );
    report(args.verb.json, &value, human)?;
    Ok(Outcome::Clean)
}
