//! The command-line grammar (clap derive). Behaviour lives in the command modules.

use std::path::PathBuf;

use clap::{ArgGroup, Args, Parser, Subcommand};

/// Inspect and check a Scriptorium memory workspace (OpenProgram's layout).
#[derive(Debug, Parser)]
#[command(name = "scriptorium", version, about, long_about = None)]
pub(crate) struct Cli {
    /// The verb to run.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The top-level verbs. A new verb is one variant here (with its `Args` struct) and
/// one arm in `main::run`.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Create an empty workspace (`topics/`, `sources/` and the runtime directory); Git
    /// history starts with the first installed edit.
    ///
    /// Exit status: 0 (also when the directory already is a workspace), 2 on bad usage or
    /// when the directory cannot be created.
    Init(InitArgs),
    /// Work with single source archive files.
    #[command(subcommand)]
    Archive(ArchiveCommand),
    /// Check a workspace (writing nothing unless --repair): scan every source archive and
    /// report each file as complete, or where and why its scan stops; then parse every
    /// topic file strictly and resolve every citation against the archives, listing
    /// each violation as `path:line: CODE detail`.
    ///
    /// Exit status: 0 when every v2 archive is complete and every topic file valid, 1
    /// when not (or a file cannot be read), 2 on bad usage or input.
    Check(CheckArgs),
    /// Show the workspace at a glance: revision, topic and source file counts, the last
    /// `core.md` render report (tokens used of the budget, blocks left out and why),
    /// whether the derived views are in step with the topics, and the history head.
    ///
    /// Exit status: 0 (drift is shown, not a failure), 2 on bad usage or an unreadable workspace.
    Status(StatusArgs),
    /// Print `core.md` as a render of the current `topics/core.md` would make it now,
    /// followed by the render report (tokens used, budget, blocks left out and why).
    ///
    /// Exit status: 0 (also when there is no `topics/core.md`), 2 on bad usage or an unreadable workspace.
    Core(CoreArgs),
    /// Serve the memory tools over the Model Context Protocol on stdin/stdout
    /// (newline-delimited JSON-RPC; logs on stderr) until stdin closes.
    ///
    /// Exit status: 0 at end of input, 2 on bad usage or when stdin/stdout fail.
    Mcp(McpArgs),
    /// Serve the memory over HTTP on loopback (the `/api/memory/*` routes, the backend
    /// contract for agent runtimes, `/api/openapi.json` and the web page at `/`), behind a
    /// bearer token kept in the runtime directory, until SIGINT or SIGTERM.
    ///
    /// Exit status: 0 after a signal, 2 on bad usage or when the address cannot be bound.
    Serve(crate::serve::ServeArgs),
    /// Search topics and sources with BM25 (the persistent index in
    /// `.scriptorium/retrieval-index.bin`, refreshed from the files first).
    ///
    /// Exit status: 0 (with or without results), 2 on bad usage, a bad filter or an unreadable workspace.
    Search(crate::search::SearchArgs),
    /// Find a literal text (with --regex, a pattern in Python `re` syntax) in the visible workspace files, line by line
    /// (case-insensitive unless --case-sensitive; never `.scriptorium/`, `.git/`,
    /// `memory-superseded/` or symbolic links; v2 archives on record lines only).
    ///
    /// Exit status: 0 (with or without matches), 2 on bad usage or an unreadable workspace.
    Grep(crate::grep::GrepArgs),
    /// Apply one all-or-nothing edit to the topic files: a JSON list of whole-file
    /// changes (`[{"path", "action": "write"|"delete", "content"?}]`), a unified diff, or a
    /// whole `memory_update` request (`--request`: changes, patch or memory_changes, plus
    /// `sources` and `provenance` to archive the evidence a new paragraph cites).
    ///
    /// Exit status: 0 when installed (also when interrupted after the install), 1 when the
    /// transaction is rejected (the line `error[CODE]: message` names the contract code,
    /// then one line per violation), 2 on bad usage or input, 130 when SIGINT or SIGTERM
    /// interrupted it before the install (nothing changed).
    Update(UpdateArgs),
    /// List the newest history commits of the workspace (times in ISO 8601, UTC).
    /// Reads only: a workspace without history lists nothing.
    History(HistoryArgs),
    /// Bring topic files back to their bytes at a history revision, as one ordinary
    /// validated transaction (files that did not exist then are deleted).
    ///
    /// Exit status as for `update`.
    Restore(RestoreArgs),
    /// Run the write hook (spec 02 §2.6) for one session or all: hand what is due to the
    /// writer model (--model or $SCRIPTORIUM_WRITER_MODEL, the key from $OPENAI_API_KEY or
    /// $ANTHROPIC_API_KEY). Without a model every due session reports
    /// `error[WRITER_PRECONDITION_FAILED]` and the failure is recorded in writer status.
    ///
    /// Exit status: 0 when nothing is due, 1 when a write failed, 2 on bad usage.
    Write(WriteArgs),
    /// List the sessions of the session store with their pending turns and tokens.
    ///
    /// Exit status: 0, 1 when the session store is refused (`error[WRITER_SESSION_STORE_*]`), 2 on bad usage.
    Sessions(SessionsArgs),
    /// Reorganize every topic file with the writer model (spec 02 §8.1, the nightly pass):
    /// prints `{status, topics, changed_files}`; an empty list is the model's choice.
    ///
    /// Exit status: 0 (also `busy`, `empty`), 1 when the run failed, 2 on bad usage.
    Sleep(WriterVerbArgs),
    /// Write every trusted source no topic cites yet, in token-budgeted batches (spec 02
    /// §8.2): prints `{status, candidates, processed, remaining, revision}`.
    ///
    /// Exit status: 0 when complete, 1 when incomplete or a batch failed, 2 on bad usage.
    Backfill(WriterVerbArgs),
    /// Trust a pending source as the local owner and distill it into the topics (spec 02
    /// §5): prints `{source_id, promoted, trust_state, distilled, changed_files}`.
    ///
    /// Exit status: 0, 1 when the promotion or the distillation failed, 2 on bad usage.
    Promote(PromoteArgs),
    /// Agent hooks: `hook claude-code EVENT` answers one Claude Code hook event;
    /// `hook install claude-code` / `hook uninstall claude-code` edit Claude Code's settings.
    #[command(subcommand)]
    Hook(crate::hook::HookCommand),
    /// Watch Claude Code's transcript directories: import each file as it grows, run the
    /// write hook for sessions that gained turns, force-write idle sessions and reorganize
    /// nightly; logs to stderr until SIGTERM or SIGINT (docs/watch.md).
    ///
    /// Exit status: 0 when stopped by a signal, 2 when it cannot start (`CLI_WATCH_FAILED`).
    Watch(crate::watch::WatchArgs),
    /// Import agent transcripts into the session store: `claude-code`, `codex`,
    /// `chatgpt`, `jsonl` or `openprogram` (a state dir's v2 source archives, read-only)
    /// (docs/format/session-import.md), idempotent and incremental;
    /// without a PATH, the format's default directories (`~/.claude/projects`, …).
    ///
    /// Exit status: 0 (skipped lines are warnings), 1 when the session store fails, 2 on bad usage.
    Import(ImportArgs),
    /// Show what automatic recall (spec 02 §1.5) gives the model for a turn: the fenced
    /// `<memory-context>` block, with the configured method and top-k.
    ///
    /// Exit status: 0 (with or without recall), 1 when memory is disabled, 2 on bad usage or an unreadable workspace.
    Recall(crate::recall::RecallArgs),
    /// Print a file (its first 400 lines; an archive's records only), one block with the
    /// source frames its footnotes cite (`PATH#^BLOCK`), or one source frame (`PATH#source-…`).
    ///
    /// Exit status: 0, 1 when the path or block cannot be shown, 2 on bad usage.
    Show(crate::show::ShowArgs),
    /// Edit one topic file in $VISUAL or $EDITOR (a draft in the runtime directory's
    /// `drafts/`); on save the draft is validated and installed as a hand edit. A
    /// rejected draft is kept and its place printed.
    ///
    /// Exit status: 0 when installed or unchanged, 1 when rejected, 2 on bad usage or when the editor fails.
    Edit(crate::edit::EditArgs),
    /// Write the workspace as a gzip tar archive (entries under `memory/`): topics,
    /// sources and derived files; `.git/` only with --with-history, never the runtime directory.
    ///
    /// Exit status: 0, 2 on bad usage or when the archive cannot be written.
    Export(crate::export::ExportArgs),
}

/// Arguments of `sleep` and `backfill`.
#[derive(Debug, Args)]
pub(crate) struct WriterVerbArgs {
    /// The workspace root (default as for `check`).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// The session store (default: `sessions.sqlite3` beside the workspace directory).
    #[arg(long, value_name = "FILE")]
    pub(crate) sessions: Option<PathBuf>,
    /// The writer model.
    #[command(flatten)]
    pub(crate) model: crate::model::ModelArgs,
    /// Print the result as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Arguments of `promote`.
#[derive(Debug, Args)]
pub(crate) struct PromoteArgs {
    /// The pending source to trust (`provider/thread/message`).
    #[arg(value_name = "SOURCE_ID")]
    pub(crate) source_id: String,
    /// The owner principal the audit line records.
    #[arg(long, value_name = "ID", default_value = "owner")]
    pub(crate) principal: String,
    /// Everything else as for `backfill`.
    #[command(flatten)]
    pub(crate) verb: WriterVerbArgs,
}

/// Arguments of `write`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("which").required(true).args(["session", "all"])))]
pub(crate) struct WriteArgs {
    /// The workspace root (default as for `check`).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// The session store (default: `sessions.sqlite3` beside the workspace directory).
    #[arg(long, value_name = "FILE")]
    pub(crate) sessions: Option<PathBuf>,
    /// Write this session.
    #[arg(long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// Write every session.
    #[arg(long)]
    pub(crate) all: bool,
    /// Write whatever is pending, below the threshold too (the idle watcher's write).
    #[arg(long)]
    pub(crate) force: bool,
    /// The writer model.
    #[command(flatten)]
    pub(crate) model: crate::model::ModelArgs,
    /// Print the result as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Arguments of `sessions`.
#[derive(Debug, Args)]
pub(crate) struct SessionsArgs {
    /// The workspace root (default as for `check`).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// The session store (default: `sessions.sqlite3` beside the workspace directory).
    #[arg(long, value_name = "FILE")]
    pub(crate) sessions: Option<PathBuf>,
    /// Print the list as JSON.
    #[arg(long)]
    pub(crate) json: bool,
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
    /// Repair before checking: recover an interrupted install, move the unreadable
    /// tail of every incomplete v2 archive to `.scriptorium/quarantine/`, truncating the
    /// archive to its valid prefix (nothing is deleted), restore every committed archive
    /// that was changed in place to its bytes in history (the altered bytes go to the
    /// quarantine too), and rebuild derived views that are out of step with the topics.
    #[arg(long)]
    pub(crate) repair: bool,
}

/// Arguments of `update`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("edit").required(true).args(["changes", "patch", "request"])))]
pub(crate) struct UpdateArgs {
    /// The workspace root (default as for `check`).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// A JSON file holding the list of whole-file changes.
    #[arg(long, value_name = "FILE.json")]
    pub(crate) changes: Option<PathBuf>,
    /// A unified diff over topic files.
    #[arg(long, value_name = "FILE.diff")]
    pub(crate) patch: Option<PathBuf>,
    /// A JSON file holding the whole `memory_update` request object (spec 02 §4.2):
    /// `changes`, `patch` or `memory_changes`, and optionally `sources`, `provenance`,
    /// `commit_message`, `base_revision`.
    #[arg(long, value_name = "FILE.json")]
    pub(crate) request: Option<PathBuf>,
    /// The revision the edit was made against (32 hex digits, as `status` shows it).
    /// Default: the revision read once the write lock is held.
    #[arg(long, value_name = "R")]
    pub(crate) base_revision: Option<String>,
    /// The history message.
    #[arg(long, value_name = "TEXT")]
    pub(crate) message: Option<String>,
    /// Print the result as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Arguments of `history`.
#[derive(Debug, Args)]
pub(crate) struct HistoryArgs {
    /// The workspace root (default as for `check`).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// At most this many commits, newest first (1 to 10000).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub(crate) limit: usize,
    /// Print the list as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Arguments of `restore`.
#[derive(Debug, Args)]
pub(crate) struct RestoreArgs {
    /// The workspace root (default as for `check`).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// The history revision (a commit id, at least 4 hex digits).
    pub(crate) rev: String,
    /// Topic files or directories to restore (default: all of `topics/`).
    pub(crate) paths: Vec<String>,
    /// Print the result as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Arguments of `status`.
#[derive(Debug, Args)]
pub(crate) struct StatusArgs {
    /// The workspace root (default as for `check`).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// The session store the writer block counts pending turns in (default: `sessions.sqlite3` beside the workspace).
    #[arg(long, value_name = "FILE")]
    pub(crate) sessions: Option<PathBuf>,
    /// Print the status as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Arguments of `core`.
#[derive(Debug, Args)]
pub(crate) struct CoreArgs {
    /// The workspace root (default as for `check`).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// Print the rendered text and the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Arguments of `init`.
#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    /// The workspace root to create (default as for `check`).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// Print `{ok, workspace, workspace_id, created}` as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Arguments of `mcp`.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// The workspace root (default as for `check`; created on the first write).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// The session store the write hook reads (none by default).
    #[arg(long, value_name = "FILE")]
    pub(crate) sessions: Option<PathBuf>,
    /// The configuration file (default `$SCRIPTORIUM_CONFIG`, else the user's config.toml).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
}

/// Arguments of `import`.
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// The transcript format.
    #[arg(value_name = "FORMAT", value_parser = ["claude-code", "codex", "chatgpt", "jsonl", "openprogram"])]
    pub(crate) format: String,
    /// Transcript files or directories (default: the format's own directories).
    #[arg(value_name = "PATH")]
    pub(crate) paths: Vec<PathBuf>,
    /// The workspace root whose state directory holds the session store (default as for `check`).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// The session store (default: `sessions.sqlite3` beside the workspace directory).
    #[arg(long, value_name = "FILE")]
    pub(crate) sessions: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}
