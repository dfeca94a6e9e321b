//! `scriptorium hook install claude-code` and `… uninstall claude-code`: our four command
//! hooks merged into Claude Code's settings file (project `.claude/settings.json` or the
//! user's `~/.claude/settings.json`), every other setting and hook kept. A changed file is
//! first copied to a timestamped backup beside it; installing what is already installed
//! writes nothing. The facts about the file's shape are in docs/hooks-claude-code.md.

mod settings;

use std::path::{Path, PathBuf};

use clap::{ArgGroup, Args, ValueEnum};
use serde_json::{Value, json};

use self::settings::{Entry, Shape, quote};
use crate::Outcome;
use crate::error::{CliError, CliErrorCode};
use crate::output::{print, print_json};

/// The agents whose hooks we know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Agent {
    /// Claude Code (`.claude/settings.json`).
    ClaudeCode,
}

/// Which settings file: `--project DIR` (default: the current directory) or `--user`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("scope").args(["project", "user"])))]
pub(crate) struct ScopeArgs {
    /// The agent (`claude-code`).
    #[arg(value_enum)]
    pub(crate) agent: Agent,
    /// The project whose `.claude/settings.json` to change (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub(crate) project: Option<PathBuf>,
    /// Change the user's settings instead: `$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`.
    #[arg(long)]
    pub(crate) user: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Arguments of `hook install`.
#[derive(Debug, Args)]
pub(crate) struct InstallArgs {
    /// Where to install.
    #[command(flatten)]
    pub(crate) scope: ScopeArgs,
    /// The workspace the hooks use (written into each hook command; default: the hook's own default).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// The session store the hooks import into (default: `sessions.sqlite3` beside the workspace).
    #[arg(long, value_name = "FILE")]
    pub(crate) sessions: Option<PathBuf>,
}

/// The events we hook, with our event name and Claude Code's timeout in seconds: the prompt
/// hook runs before every prompt, so its limit is the shortest.
const EVENTS: &[(&str, &str, u64)] = &[
    ("SessionStart", "session-start", 10),
    ("UserPromptSubmit", "user-prompt-submit", 5),
    ("Stop", "stop", 10),
    ("SessionEnd", "session-end", 10),
];

fn settings_error(message: impl Into<String>) -> CliError {
    CliError::new(CliErrorCode::SettingsInvalid, message)
}

fn write_error(path: &Path, err: &std::io::Error) -> CliError {
    CliError::new(CliErrorCode::SettingsWriteFailed, format!("{}: cannot write: {err}", path.display()))
}

/// The settings file the scope names.
fn settings_path(scope: &ScopeArgs) -> Result<PathBuf, CliError> {
    if scope.user {
        if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|dir| !dir.is_empty()) {
            return Ok(PathBuf::from(dir).join("settings.json"));
        }
        let home = crate::workspace::expand_home(Path::new("~"));
        if home == Path::new("~") {
            return Err(CliError::new(CliErrorCode::Usage, "--user: no home directory (set HOME)"));
        }
        return Ok(home.join(".claude").join("settings.json"));
    }
    let project = match &scope.project {
        Some(dir) => crate::workspace::expand_home(dir),
        None => PathBuf::from("."),
    };
    Ok(project.join(".claude").join("settings.json"))
}

/// `path` made absolute against the current directory, so a hook run from any directory finds it.
fn absolute(path: &Path) -> Result<PathBuf, CliError> {
    let path = crate::workspace::expand_home(path);
    std::path::absolute(&path)
        .map_err(|err| CliError::new(CliErrorCode::Usage, format!("{}: cannot make absolute: {err}", path.display())))
}

/// Our command line for `event`.
fn command(program: &Path, event: &str, args: &InstallArgs) -> Result<String, CliError> {
    let mut words =
        vec![quote(&program.to_string_lossy()), "hook".to_owned(), "claude-code".to_owned(), event.to_owned()];
    if let Some(workspace) = &args.workspace {
        words.push("--workspace".to_owned());
        words.push(quote(&absolute(workspace)?.to_string_lossy()));
    }
    if let Some(sessions) = &args.sessions {
        words.push("--sessions".to_owned());
        words.push(quote(&absolute(sessions)?.to_string_lossy()));
    }
    Ok(words.join(" "))
}

/// The settings as they are (`{}` for a missing or blank file) and their bytes, if any.
fn read(path: &Path) -> Result<(Value, Option<Vec<u8>>), CliError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok((json!({}), None)),
        Err(err) => return Err(CliError::read(path, &err)),
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok((json!({}), Some(bytes)));
    }
    let value = serde_json::from_slice(&bytes)
        .map_err(|err| settings_error(format!("{}: not JSON ({err}); nothing was changed", path.display())))?;
    Ok((value, Some(bytes)))
}

/// A backup name beside `path` that does not exist yet: `settings.json.bak-20261202T061700Z`.
fn backup_path(path: &Path) -> PathBuf {
    let stamp = scriptorium_backend_api::layers::writer_runtime::iso8601_utc(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64().floor()),
    );
    let stamp: String = stamp.chars().take(19).filter(|c| c.is_ascii_digit() || *c == 'T').collect();
    let name = path.file_name().map_or_else(|| "settings.json".into(), |n| n.to_string_lossy().into_owned());
    let base = path.with_file_name(format!("{name}.bak-{stamp}Z"));
    let mut candidate = base.clone();
    let mut n = 1;
    while candidate.exists() {
        candidate = PathBuf::from(format!("{}-{n}", base.display()));
        n += 1;
    }
    candidate
}

/// Write `value` to `path` through a temporary file and a rename, after backing up `old`.
fn write(path: &Path, value: &Value, old: Option<&[u8]>) -> Result<Option<PathBuf>, CliError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|err| write_error(parent, &err))?;
    }
    let backup = match old {
        Some(bytes) => {
            let backup = backup_path(path);
            std::fs::write(&backup, bytes).map_err(|err| write_error(&backup, &err))?;
            Some(backup)
        }
        None => None,
    };
    let mut text = serde_json::to_string_pretty(value).map_err(|err| settings_error(err.to_string()))?;
    text.push('\n');
    let temp = path.with_file_name(format!(".settings.json.scriptorium-{}", std::process::id()));
    std::fs::write(&temp, text).map_err(|err| write_error(&temp, &err))?;
    if let Err(err) = std::fs::rename(&temp, path) {
        let _ = std::fs::remove_file(&temp);
        return Err(write_error(path, &err));
    }
    Ok(backup)
}

/// Apply `change` to the settings file and report what happened.
fn apply(
    scope: &ScopeArgs,
    verb: &str,
    change: impl FnOnce(&mut Value) -> Result<usize, Shape>,
) -> Result<Outcome, CliError> {
    let path = settings_path(scope)?;
    let (old, bytes) = read(&path)?;
    let mut new = old.clone();
    let count = change(&mut new)
        .map_err(|Shape(why)| settings_error(format!("{}: {why}; nothing was changed", path.display())))?;
    // Removing nothing must not even add the empty `hooks` object the merge creates.
    let changed = new != old && (verb == "installed" || count > 0);
    let backup = if changed { write(&path, &new, bytes.as_deref())? } else { None };
    if scope.json {
        print_json(&json!({
            "settings": path.display().to_string(),
            verb: count,
            "changed": changed,
            "backup": backup.as_ref().map(|b| b.display().to_string()),
        }))?;
    } else if changed {
        let backup = backup.map(|b| format!(" (backup: {})", b.display())).unwrap_or_default();
        print(&format!("{verb} {count} Claude Code hooks in {}{backup}\n", path.display()))?;
    } else {
        print(&format!("{} unchanged: nothing to do\n", path.display()))?;
    }
    Ok(Outcome::Clean)
}

/// Run `hook install`.
pub(crate) fn install(args: &InstallArgs) -> Result<Outcome, CliError> {
    let Agent::ClaudeCode = args.scope.agent;
    let program = std::env::current_exe()
        .and_then(|exe| exe.canonicalize())
        .map_err(|err| CliError::new(CliErrorCode::Internal, format!("cannot find this program's path: {err}")))?;
    let entries = EVENTS
        .iter()
        .map(|&(event, ours, timeout)| Ok(Entry { event, command: command(&program, ours, args)?, timeout }))
        .collect::<Result<Vec<_>, CliError>>()?;
    apply(&args.scope, "installed", |settings| settings::install(settings, &entries).map(|()| entries.len()))
}

/// Run `hook uninstall`.
pub(crate) fn uninstall(args: &ScopeArgs) -> Result<Outcome, CliError> {
    let Agent::ClaudeCode = args.agent;
    apply(args, "removed", settings::remove_ours)
}
