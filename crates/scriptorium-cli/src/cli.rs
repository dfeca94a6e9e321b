//! The command-line grammar (clap derive). Behaviour lives in the command modules.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Inspect and check a Scriptorium memory workspace (OpenProgram's layout).
#[derive(Debug, Parser)]
#[command(name = "scriptorium", version, about, long_about = None)]
pub(crate) struct Cli {
    /// The verb to run.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The top-level verbs.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Work with single source archive files.
    #[command(subcommand)]
    Archive(ArchiveCommand),
    /// Check a workspace without writing anything: scan every source archive and
    /// report each file as complete, or where and why its scan stops; then parse every
    /// topic file strictly and resolve every citation against the archives, listing
    /// each violation as `path:line: CODE detail`.
    ///
    /// Exit status: 0 when every v2 archive is complete and every topic file valid, 1
    /// when not (or a file cannot be read), 2 on bad usage or input.
    Check(CheckArgs),
}

/// Verbs on one archive file.
#[derive(Debug, Subcommand)]
pub(crate) enum ArchiveCommand {
    /// Scan one archive file and report its frames (v2) or records (legacy).
    ///
    /// Exit status: 0 for a complete v2 archive or any legacy archive, 1 when the v2
    /// scan stops early (the scan is still printed), 2 on bad usage or input.
    Parse(ParseArgs),
}

/// Arguments of `archive parse`.
#[derive(Debug, Args)]
pub(crate) struct ParseArgs {
    /// The archive file to scan.
    pub(crate) file: PathBuf,
    /// The file's workspace-relative path (`sources/<provider>/_v2/<thread>.md`), which
    /// every frame's source id must match. Default: the path below the nearest
    /// ancestor whose `sources/` directory holds the file, else FILE as given.
    #[arg(long, value_name = "P")]
    pub(crate) relative_path: Option<String>,
    /// Print the scan as JSON (the golden vectors' `expected.scan` shape for v2 files).
    #[arg(long)]
    pub(crate) json: bool,
}

/// Arguments of `check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The workspace root. Default: `$SCRIPTORIUM_WORKSPACE`, else the platform data
    /// directory + `scriptorium/memory`: `$XDG_DATA_HOME` or `~/.local/share` on Linux,
    /// `~/Library/Application Support` on macOS, `%APPDATA%` on Windows.
    /// A leading `~` means the home directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}
