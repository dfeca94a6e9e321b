//! Real child processes: a holder of the workspace write lock, and the crash tests that
//! stop a write pass at every named crash point with SIGKILL (the transaction's pause
//! mechanism, `SCRIPTORIUM_PAUSE_AT`: the child waits at the point, the parent kills it
//! there) and check that after a restart the batch is installed and marked exactly once,
//! its facts in the topics once, without a second model call.
//!
//! The children are this test binary run again with `SCRIPTORIUM_IT_CHILD` set, filtered to
//! [`child_process`], which plays the role the variable names.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use scriptorium_transaction::{WriteLock, crashpoint};
use scriptorium_writer_runtime::crashpoint::POINTS;

use crate::support::{Fixture, Script, T0, TempDir, TestResult, chain, config};

const ROLE: &str = "SCRIPTORIUM_IT_CHILD";
const DIR: &str = "SCRIPTORIUM_IT_DIR";

/// Start this test binary as a child playing `role` over `dir`; `pause_at` arms the
/// transaction's pause mechanism (`name:n`, pausing by creating `pause_file`).
fn child(role: &str, dir: &Path, pause_at: Option<(&str, &Path)>) -> std::io::Result<Child> {
    let mut command = Command::new(std::env::current_exe()?);
    command
        .args(["--exact", "crash::child_process", "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .env(DIR, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    command.env_remove(crashpoint::ENV).env_remove(crashpoint::PAUSE_ENV).env_remove(crashpoint::PAUSE_FILE_ENV);
    if let Some((point, file)) = pause_at {
        command.env(crashpoint::PAUSE_ENV, point).env(crashpoint::PAUSE_FILE_ENV, file);
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

/// Run the write pass in a child, let it reach `point` for the `nth` time, and SIGKILL it
/// there. `false` when the pass ended without reaching it.
fn kill_write_at(dir: &Path, point: &str, nth: usize) -> Result<bool, Box<dyn std::error::Error>> {
    let pause = dir.join("paused");
    let _ = std::fs::remove_file(&pause);
    let mut process = child("write", dir, Some((&format!("{point}:{nth}"), &pause)))?;
    let started = Instant::now();
    loop {
        if pause.exists() {
            // `Child::kill` is SIGKILL on Unix: no handler, no destructor, no flush runs.
            process.kill()?;
            let status = process.wait()?;
            std::fs::remove_file(&pause)?;
            assert_eq!(status.signal(), Some(9), "{point}:{nth}: the child died of SIGKILL");
            return Ok(true);
        }
        if let Some(status) = process.try_wait()? {
            return if status.success() { Ok(false) } else { Err(format!("{point}:{nth}: child {status}").into()) };
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = process.kill();
            return Err(format!("{point}:{nth}: the child never paused").into());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A workspace with session `s1` of three turns, no pass run yet.
fn crash_base() -> Result<TempDir, Box<dyn std::error::Error>> {
    let dir = TempDir::new("crash");
    let fx = Fixture::at(TempDir::borrowed(dir.path().to_owned()), Script::Facts, config(8000))?;
    fx.store.append("s1", &chain("a", None, 3, 2, T0), T0)?;
    Ok(dir)
}

/// After a restart in `dir`, a forced write owes nothing more: the batch is installed
/// and marked exactly once, its facts once, archived once, counted once; `model_calls` is
/// how many model calls the restart may make (one when the kill fell before the install).
fn assert_written_once(dir: &Path, label: &str, model_calls: usize) -> TestResult {
    let fx = Fixture::at(TempDir::borrowed(dir.to_owned()), Script::Facts, config(8000))?;
    assert_eq!(fx.runtime.hook("s1", None, true), None, "{label}");
    assert_eq!(fx.writer.writes(), model_calls, "{label}: a batch installed before the kill is not offered again");
    assert_eq!(fx.marked("s1")?, ["a0", "a1", "a2"], "{label}");
    for id in ["a0", "a1", "a2"] {
        assert_eq!(fx.fact_count(id), 1, "{label}: {id}\n{}", fx.facts());
    }
    let state = fx.runtime.workspace().runtime_state();
    assert_eq!(state.written_batch, None, "{label}");
    assert_eq!(state.local_batches, 1, "{label}: the batch is counted once");
    let archive = std::fs::read_to_string(fx.memory().join("sources/openprogram/_v2/s1.md"))?;
    for id in ["a0", "a1", "a2"] {
        assert_eq!(archive.matches(&format!("source-id:openprogram/s1/{id}")).count(), 1, "{label}: {id}");
    }
    // Nothing is owed any more.
    assert_eq!(fx.runtime.hook("s1", None, true), None, "{label}");
    assert_eq!(fx.writer.writes(), model_calls, "{label}");
    Ok(())
}

#[test]
fn a_write_pass_killed_at_every_crash_point_is_installed_and_marked_exactly_once() -> TestResult {
    for point in POINTS {
        let dir = crash_base()?;
        assert!(kill_write_at(dir.path(), point, 1)?, "{point}: the pass never reached it");
        assert_written_once(dir.path(), point, usize::from(*point == "writer.archived"))?;
    }
    Ok(())
}

/// The transaction's own crash points around the moment an install becomes durable, at
/// every occurrence within one pass (the archive, the writer's commit, the counters):
/// after a restart (which rolls a committed journal forward) the model is called again
/// only when the writer's edit did not survive, and the batch is written exactly once.
#[test]
fn a_write_pass_killed_inside_any_of_its_installs_is_written_exactly_once() -> TestResult {
    for point in ["journal.committed", "install.after_rename"] {
        let mut kills = 0;
        for nth in 1.. {
            let dir = crash_base()?;
            if !kill_write_at(dir.path(), point, nth)? {
                break;
            }
            kills += 1;
            // Recovery runs on open; the edit survived iff its topic is there afterwards.
            drop(scriptorium_transaction::Workspace::open(dir.path().join("memory"))?);
            let installed = dir.path().join("memory/topics/facts.md").exists();
            assert_written_once(dir.path(), &format!("{point}:{nth}"), usize::from(!installed))?;
        }
        assert!(kills >= 3, "{point}: reached in the archive, the writer's commit and the counters ({kills})");
    }
    Ok(())
}
