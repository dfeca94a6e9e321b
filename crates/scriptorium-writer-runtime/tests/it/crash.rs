//! Real child processes: a holder of the workspace write lock, and the crash tests that
//! abort a write pass at every named crash point (the transaction's mechanism,
//! `SCRIPTORIUM_CRASH_AT`) and check that after a restart the batch is installed and
//! marked exactly once, its facts in the topics once, without a second model call.
//!
//! The children are this test binary run again with `SCRIPTORIUM_IT_CHILD` set, filtered to
//! [`child_process`], which plays the role the variable names.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use scriptorium_transaction::WriteLock;
use scriptorium_writer_runtime::crashpoint::POINTS;

use crate::support::{Fixture, Script, T0, TempDir, TestResult, chain, config};

const ROLE: &str = "SCRIPTORIUM_IT_CHILD";
const DIR: &str = "SCRIPTORIUM_IT_DIR";

fn child(role: &str, dir: &Path, crash_at: Option<&str>) -> std::io::Result<Child> {
    let mut command = Command::new(std::env::current_exe()?);
    command
        .args(["--exact", "crash::child_process", "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .env(DIR, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    command.env_remove(scriptorium_transaction::crashpoint::ENV);
    if let Some(point) = crash_at {
        command.env(scriptorium_transaction::crashpoint::ENV, point);
    }
    command.spawn()
}

/// A child process holding the write lock of the workspace at `memory`.
pub(crate) struct LockHolder(Child);

impl Drop for LockHolder {
    fn drop(&mut self) {
        // SIGKILL: the kernel releases the flock.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start a process that takes the write lock of `memory` and keeps it for `hold`;
/// returns once it holds it.
pub(crate) fn hold_lock(memory: &Path, hold: Duration) -> Result<LockHolder, Box<dyn std::error::Error>> {
    let mut process = child(&format!("hold-lock:{}", hold.as_millis()), memory, None)?;
    let stdout = process.stdout.take().ok_or("no stdout")?;
    // The harness prints its own lines first; the child's line says it holds the lock.
    for line in BufReader::new(stdout).lines() {
        if line?.ends_with("locked") {
            return Ok(LockHolder(process));
        }
    }
    let _ = process.kill();
    Err("the lock holder ended without taking the lock".into())
}

/// The child's side: with `SCRIPTORIUM_IT_CHILD` unset this is an ordinary run of the test
/// binary and there is no role to play.
#[test]
fn child_process() -> TestResult {
    let (Ok(role), Ok(dir)) = (std::env::var(ROLE), std::env::var(DIR)) else { return Ok(()) };
    let dir = PathBuf::from(dir);
    if let Some(millis) = role.strip_prefix("hold-lock:") {
        let lock = WriteLock::acquire(&dir.join(".scriptorium"), Duration::from_secs(10))?;
        #[allow(clippy::print_stdout, reason = "the parent waits for this line")]
        {
            println!("\nlocked");
        }
        std::thread::sleep(Duration::from_millis(millis.parse()?));
        drop(lock);
        return Ok(());
    }
    if role == "write" {
        let fx = Fixture::at(TempDir::borrowed(dir), Script::Facts, config(8000))?;
        let failure = fx.runtime.hook("s1", None, true);
        return match failure {
            None => Ok(()),
            Some(failure) => Err(format!("child write failed: {failure:?}").into()),
        };
    }
    Err(format!("unknown role {role}").into())
}

#[test]
fn a_write_pass_killed_at_every_crash_point_is_installed_and_marked_exactly_once() -> TestResult {
    for point in POINTS {
        let dir = TempDir::new("crash");
        {
            let fx = Fixture::at(TempDir::borrowed(dir.path().to_owned()), Script::Facts, config(8000))?;
            fx.store.append("s1", &chain("a", None, 3, 2, T0), T0)?;
        }
        let status = child("write", dir.path(), Some(&format!("{point}:1")))?.wait()?;
        assert!(!status.success(), "{point}: the child was not stopped at the crash point");

        let fx = Fixture::at(TempDir::borrowed(dir.path().to_owned()), Script::Facts, config(8000))?;
        assert_eq!(fx.runtime.hook("s1", None, true), None, "{point}");
        let model_calls = fx.writer.writes();
        let expected_calls = usize::from(*point == "writer.archived");
        assert_eq!(model_calls, expected_calls, "{point}: a batch installed before the crash is not offered again");
        assert_eq!(fx.marked("s1")?, ["a0", "a1", "a2"], "{point}");
        for id in ["a0", "a1", "a2"] {
            assert_eq!(fx.fact_count(id), 1, "{point}: {id}\n{}", fx.facts());
        }
        let state = fx.runtime.workspace().runtime_state();
        assert_eq!(state.written_batch, None, "{point}");
        assert_eq!(state.local_batches, 1, "{point}: the batch is counted once");
        let archive = std::fs::read_to_string(fx.memory().join("sources/openprogram/_v2/s1.md"))?;
        assert_eq!(archive.matches("source-id:openprogram/s1/a1").count(), 1, "{point}");
        // Nothing is owed any more.
        assert_eq!(fx.runtime.hook("s1", None, true), None);
        assert_eq!(fx.writer.writes(), model_calls);
    }
    Ok(())
}
