//! `--json` failures: a verb asked for JSON answers a failure with the object
//! `{"ok": false, "error": {"code", "message"}}` on stdout (the `error[CODE]` line still
//! goes to stderr), so a script reads one shape whichever verb failed and why.

use serde_json::json;

use crate::cli::{ArchiveCommand, Command};
use crate::error::CliError;

/// Whether the command line asked for JSON output.
pub(crate) fn wanted(command: &Command) -> bool {
    match command {
        Command::Init(args) => args.json,
        Command::Archive(ArchiveCommand::Parse(args)) => args.json,
        Command::Check(args) => args.json,
        Command::Status(args) => args.json,
        Command::Core(args) => args.json,
        Command::Search(args) => args.json,
        Command::Grep(args) => args.json,
        Command::Update(args) => args.json,
        Command::History(args) => args.json,
        Command::Restore(args) => args.json,
        Command::Write(args) => args.json,
        Command::Sessions(args) => args.json,
        Command::Sleep(args) | Command::Backfill(args) => args.json,
        Command::Promote(args) => args.verb.json,
        Command::Recall(args) => args.json,
        Command::Show(args) => args.json,
        Command::Edit(args) => args.json,
        Command::Export(args) => args.json,
        // `mcp` speaks JSON-RPC; verbs added later decide for themselves.
        #[allow(unreachable_patterns, reason = "verbs on other branches join this match")]
        _ => false,
    }
}

/// Print `error` as the JSON failure object on stdout (best effort: stdout may be closed).
pub(crate) fn print(error: &CliError) {
    let value = json!({"ok": false, "error": {"code": error.code_str(), "message": error.message()}});
    let _ = crate::output::print_json(&value);
}
