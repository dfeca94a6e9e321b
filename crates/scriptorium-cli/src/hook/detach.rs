//! Start a process that outlives the hook: Claude Code may end a hook's process (and, on
//! `SessionEnd`, itself) as soon as the hook returns (docs/hooks-claude-code.md), and a
//! write pass may call a model for minutes. The child gets its own session through the
//! `setsid` program where there is one, else its own process group (`process_group(0)`,
//! safe std API; `pre_exec` would need `unsafe`). Its stdin and stdout are null, so Claude
//! Code never waits on a pipe it holds, and stderr appends to the hook log.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `setsid` on `PATH` (util-linux; macOS has none).
fn setsid() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join("setsid")).find(|candidate| candidate.is_file())
}

/// Spawn `program args…` detached, stderr appended to `log` (or discarded); the child's pid.
pub(crate) fn spawn(program: &Path, args: &[OsString], log: Option<&Path>) -> std::io::Result<u32> {
    let stderr = match log {
        Some(path) => Stdio::from(std::fs::OpenOptions::new().create(true).append(true).open(path)?),
        None => Stdio::null(),
    };
    let mut command = match setsid() {
        Some(setsid) => {
            let mut command = Command::new(setsid);
            command.arg(program);
            command
        }
        None => {
            let mut command = Command::new(program);
            #[cfg(unix)]
            std::os::unix::process::CommandExt::process_group(&mut command, 0);
            command
        }
    };
    command.args(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(stderr);
    // Dropping the handle neither waits nor kills: the child is reparented when we exit.
    Ok(command.spawn()?.id())
}
