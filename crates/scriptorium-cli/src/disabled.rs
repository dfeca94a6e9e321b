//! `memory.backend = none` (spec 02 §1.2, §8.3): every memory verb prints `memory is
//! disabled by memory.backend=none` and exits 1 before the workspace is touched, so the
//! directory never comes into existence. `mcp` (which serves no tools) and `archive parse`
//! (one file, no workspace) decide for themselves.

use scriptorium_backend_api::config::{self, BackendKind};

use crate::cli::{ArchiveCommand, Command};
use crate::error::CliError;

/// `Err` with `MEMORY_DISABLED` when the configuration (the file named by the verb's
/// `--config`, else `$SCRIPTORIUM_CONFIG` or the user's file, and the environment
/// overrides) disables memory and `command` is a memory verb.
pub(crate) fn refuse(command: &Command) -> Result<(), CliError> {
    let config_flag = match command {
        Command::Mcp(_) | Command::Archive(ArchiveCommand::Parse(_)) => return Ok(()),
        Command::Recall(args) => args.config.as_deref(),
        _ => None,
    };
    let path = config_flag.map(crate::workspace::expand_home);
    // Warnings are the business of the verbs that use the settings (`recall`, `mcp`).
    let loaded = config::load(path.as_deref(), &|name| std::env::var(name).ok());
    if loaded.config.backend == BackendKind::None {
        return Err(crate::facade::disabled());
    }
    Ok(())
}
