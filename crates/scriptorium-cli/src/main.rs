//! `scriptorium`: the command-line front end of the Scriptorium memory workspace.
//!
//! Top layer of the workspace: it reads files and prints reports; the formats live in
//! the layers below, reached through `scriptorium-backend-api` (its `inspect` reads and
//! `layers` re-exports), except `archive parse`, a thin view of the archive format.
//!
//! # Architecture invariants
//!
//! - Reading verbs (`check`, `status`, `history`, `core`, `search`, `grep`, `recall`,
//!   `show`, `archive parse`) write nothing outside their own caches in the runtime
//!   directory (no `.git/`, no mode change). Every write (`init`, `update`, `restore`,
//!   `edit`, `check --repair`) goes through the transaction layer; a rejected edit
//!   changes nothing on disk.
//! - Every failure is one stderr line `error[CODE]: message` with a stable `CLI_*`
//!   code (docs/error-codes.md) and exit status 2; findings (an incomplete archive, a
//!   topic violation, a rejected transaction as `error[CONTRACT_CODE]: message` followed by
//!   one line per violation) are exit status 1; success is 0; a transaction stopped by
//!   SIGINT/SIGTERM before its install is 130. A refusal by a layer below (`show` of a
//!   path outside the workspace, `memory.backend = none`) is `error[CONTRACT_CODE]` and
//!   exit status 1. With `--json` a failure is also `{"ok": false, "error": {…}}` on
//!   stdout. Nothing panics on bad input.
#![forbid(unsafe_code)]
// A binary's job is to print: stdout for reports, stderr for the one error line.
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "the binary's output is its interface")]

mod archive_parse;
mod archives;
mod check;
mod cli;
mod core_cmd;
mod disabled;
mod drift;
mod edit;
mod error;
mod export;
mod facade;
mod grep;
mod hook;
mod hook_install;
mod import_cmd;
mod init;
mod json_errors;
mod legacy;
mod listing;
mod mcp;
mod model;
mod output;
mod progress;
mod recall;
mod relative;
mod rewritten_sources;
mod search;
mod serve;
mod show;
mod status;
mod topics;
mod transaction;
mod views;
mod watch;
mod workspace;
mod writer_cmd;
mod writer_verbs;

use std::process::ExitCode;

use clap::Parser as _;
use clap::error::ErrorKind;

use crate::cli::{ArchiveCommand, Cli, Command};
use crate::error::{CliError, CliErrorCode};

/// Exit status: everything checked out.
const EXIT_OK: u8 = 0;
/// Exit status: the command ran and found a problem (an incomplete v2 archive, a topic violation).
const EXIT_FINDINGS: u8 = 1;
/// Exit status: bad usage or input; nothing was checked.
const EXIT_ERROR: u8 = 2;
/// Exit status: SIGINT or SIGTERM stopped a transaction before its install (128 + 2, as
/// shells report an interrupt); nothing changed.
const EXIT_INTERRUPTED: u8 = 130;

/// What a command found, mapped to the exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Everything complete.
    Clean,
    /// At least one problem was reported.
    Findings,
    /// A signal stopped a transaction before its install; nothing changed.
    Interrupted,
}

fn main() -> ExitCode {
    install_panic_hook();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return clap_exit(&err),
    };
    let json = json_errors::wanted(&cli.command);
    match disabled::refuse(&cli.command).and_then(|()| run(cli)) {
        Ok(Outcome::Clean) => ExitCode::from(EXIT_OK),
        Ok(Outcome::Findings) => ExitCode::from(EXIT_FINDINGS),
        Ok(Outcome::Interrupted) => ExitCode::from(EXIT_INTERRUPTED),
        Err(err) => {
            if json {
                json_errors::print(&err);
            }
            eprintln!("{err}");
            ExitCode::from(err.exit_status())
        }
    }
}

fn run(cli: Cli) -> Result<Outcome, CliError> {
    match cli.command {
        Command::Init(args) => init::run(&args),
        Command::Archive(ArchiveCommand::Parse(args)) => archive_parse::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Status(args) => status::run(&args),
        Command::Core(args) => core_cmd::run(&args),
        Command::Mcp(args) => mcp::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Update(args) => transaction::update(&args),
        Command::History(args) => transaction::history(&args),
        Command::Restore(args) => transaction::restore(&args),
        Command::Search(args) => search::run(&args),
        Command::Grep(args) => grep::run(&args),
        Command::Write(args) => writer_cmd::write(&args),
        Command::Sessions(args) => writer_cmd::sessions(&args),
        Command::Sleep(args) => writer_verbs::sleep(&args),
        Command::Backfill(args) => writer_verbs::backfill(&args),
        Command::Promote(args) => writer_verbs::promote(&args),
        Command::Hook(command) => hook::run(&command),
        Command::Watch(args) => watch::run(&args),
        Command::Import(args) => import_cmd::run(&args),
        Command::Recall(args) => recall::run(&args),
        Command::Show(args) => show::run(&args),
        Command::Edit(args) => edit::run(&args),
        Command::Export(args) => export::run(&args),
    }
}

/// Help and version go to stdout with status 0; every real usage error becomes the
/// one-line `error[CLI_USAGE]` form, so scripts see the same shape for every failure.
fn clap_exit(err: &clap::Error) -> ExitCode {
    if matches!(err.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        return match output::print(&err.render().to_string()) {
            Ok(()) => ExitCode::from(EXIT_OK),
            Err(err) => {
                eprintln!("{err}");
                ExitCode::from(EXIT_ERROR)
            }
        };
    }
    let rendered = err.render().to_string();
    let first = rendered.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("invalid command line");
    let detail = first.strip_prefix("error: ").unwrap_or(first);
    let detail = if err.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        "a command is required"
    } else {
        detail
    };
    eprintln!("{}", CliError::new(CliErrorCode::Usage, format!("{detail} (see `scriptorium --help`)")));
    ExitCode::from(EXIT_ERROR)
}

/// A panic is a bug, but the user still gets one line in the documented shape rather
/// than a backtrace (the exit status stays Rust's 101, distinct from 0/1/2).
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let location = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        let payload = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        eprintln!(
            "{}",
            CliError::new(CliErrorCode::Internal, format!("internal error{location}: {payload} (this is a bug)"))
        );
    }));
}
