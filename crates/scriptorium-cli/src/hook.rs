//! `scriptorium hook claude-code EVENT`: Scriptorium as Claude Code's command hooks
//! (docs/hooks-claude-code.md has the protocol facts and their sources), and the
//! `install` / `uninstall` verbs that put them into Claude Code's settings
//! ([`crate::hook_install`]).
//!
//! A hook must never hold or block the agent: whatever goes wrong (no workspace, bad input,
//! a failed import, even a panic) it adds nothing, logs one line and exits 0, because exit
//! status 2 would block the person's prompt.

mod context;
mod detach;
mod event;
mod ingest;
mod input;
mod log;

use std::path::PathBuf;

use clap::{Args, Subcommand};
use scriptorium_backend_api::config;

use self::event::Event;
use self::input::HookInput;
use self::log::Log;
use crate::Outcome;
use crate::error::CliError;

/// The `hook` verbs.
#[derive(Debug, Subcommand)]
pub(crate) enum HookCommand {
    /// Answer one Claude Code hook event (`session-start`, `user-prompt-submit`, `stop`,
    /// `session-end`, or Claude Code's own names) from the hook JSON on stdin: core.md or
    /// recall as added context, or import the transcript and start the write hook in the
    /// background.
    ///
    /// Exit status: always 0 (a hook must not block the agent); problems go to stderr and
    /// `<runtime-dir>/hook.log`.
    ClaudeCode(ClaudeCodeArgs),
    /// Merge our hooks into Claude Code's settings file (a backup first; other hooks kept;
    /// installing twice changes nothing).
    ///
    /// Exit status: 0, 2 when the settings file is not valid JSON of the documented shape
    /// or cannot be written.
    Install(crate::hook_install::InstallArgs),
    /// Remove only our hooks from Claude Code's settings file.
    ///
    /// Exit status as for `install`.
    Uninstall(crate::hook_install::ScopeArgs),
}

/// Arguments of `hook claude-code`.
#[derive(Debug, Args)]
pub(crate) struct ClaudeCodeArgs {
    /// The event: `session-start`, `user-prompt-submit`, `stop`, `session-end`.
    #[arg(value_name = "EVENT")]
    pub(crate) event: String,
    /// The workspace root (default as for `check`).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// The session store transcripts are imported into (default: `sessions.sqlite3` beside the workspace).
    #[arg(long, value_name = "FILE")]
    pub(crate) sessions: Option<PathBuf>,
    /// The configuration file (default `$SCRIPTORIUM_CONFIG`, else the user's config.toml).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// The writer model the background write uses.
    #[command(flatten)]
    pub(crate) model: crate::model::ModelArgs,
}

/// Run a `hook` verb.
pub(crate) fn run(command: &HookCommand) -> Result<Outcome, CliError> {
    match command {
        HookCommand::ClaudeCode(args) => {
            // A panic is still reported by the panic hook; the agent only sees exit 0.
            let _ = std::panic::catch_unwind(|| claude_code(args));
            Ok(Outcome::Clean)
        }
        HookCommand::Install(args) => crate::hook_install::install(args),
        HookCommand::Uninstall(args) => crate::hook_install::uninstall(args),
    }
}

/// One event, every failure logged and swallowed.
fn claude_code(args: &ClaudeCodeArgs) {
    let Some(event) = Event::parse(&args.event) else {
        eprintln!("scriptorium hook: unknown event {:?}; nothing to do", args.event);
        return;
    };
    let root = match crate::workspace::resolve(args.workspace.as_deref()) {
        Ok((root, _)) => root,
        Err(err) => {
            eprintln!("scriptorium hook: {err}");
            return;
        }
    };
    let log = Log::for_workspace(&root);
    let input = match HookInput::read_stdin() {
        Ok(input) => input,
        Err(why) => return log.line(&format!("{}: {why}", event.claude_name())),
    };
    let sessions = args.sessions.as_deref().map(crate::workspace::expand_home);
    match event {
        Event::SessionStart | Event::UserPromptSubmit => {
            if !root.is_dir() {
                return log.line(&format!("{}: no workspace at {}", event.claude_name(), root.display()));
            }
            let config_path = args.config.as_deref().map(crate::workspace::expand_home);
            let loaded = config::load(config_path.as_deref(), &|name| std::env::var(name).ok());
            let added = context::context(event, &root, loaded.config, input.prompt.as_deref());
            if let Some(output) = context::output(event, &added)
                && let Err(err) = crate::output::print(&format!("{output}\n"))
            {
                log.line(&format!("{}: {err}", event.claude_name()));
            }
        }
        Event::Stop | Event::SessionEnd => ingest::run(event, &root, sessions.as_deref(), args, &input, &log),
    }
}
