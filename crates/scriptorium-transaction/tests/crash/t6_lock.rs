//! T6: lock semantics across real processes. A SIGKILLed (or aborted) holder frees the
//! lock at once; a lock file deleted or replaced while held lets a second process lock
//! the new file, but the first then fails `verify`, which install calls before its
//! commit point, so at most one of them can commit; and the lock interoperates with the
//! Python reference's `fcntl.flock` in both directions while ignoring `fcntl.lockf`.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use scriptorium_transaction::crashpoint::ENV;
use scriptorium_transaction::{ErrorCode, LOCK_FILE, Workspace, WriteLock};

use crate::ensure;
use crate::support::{Outcome, RT, Scratch, aborted, child};

/// A process that says one line when it holds the lock and answers on stdin.
struct Holder {
    process: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Holder {
    /// Start the process and wait until it holds the lock.
    fn spawn(command: Command) -> Result<Holder, String> {
        let mut holder = Holder::start(command)?;
        holder.wait_locked()?;
        Ok(holder)
    }

    /// Start the process without waiting for it to get the lock.
    fn start(mut command: Command) -> Result<Holder, String> {
        let mut process = command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().map_err(|e| e.to_string())?;
        let stdin = process.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(process.stdout.take().ok_or("no stdout")?);
        Ok(Holder { process, stdin, stdout })
    }

    fn wait_locked(&mut self) -> Result<(), String> {
        let first = self.line()?;
        ensure!(first == "locked", "holder said {first:?}");
        Ok(())
    }

    fn line(&mut self) -> Result<String, String> {
        let mut line = String::new();
        self.stdout.read_line(&mut line).map_err(|e| e.to_string())?;
        Ok(line.trim().to_owned())
    }

    fn ask(&mut self, question: &str) -> Result<String, String> {
        writeln!(self.stdin, "{question}").map_err(|e| e.to_string())?;
        self.line()
    }

    fn release(mut self) -> Result<(), String> {
        let _ = writeln!(self.stdin, "release");
        let status = self.process.wait().map_err(|e| e.to_string())?;
        ensure!(status.success(), "holder exited with {status}");
        Ok(())
    }
}

fn acquire(root: &Path, timeout: Duration) -> Result<WriteLock, scriptorium_transaction::Error> {
    WriteLock::acquire(&root.join(RT), timeout)
}

fn python() -> Option<&'static str> {
    Command::new("python3").arg("--version").output().ok().filter(|out| out.status.success()).map(|_| "python3")
}

/// A Python process that takes `flock` (or `lockf`) on the lock file and holds it until
/// its stdin closes.
fn python_command(python: &str, root: &Path, call: &str) -> Command {
    let script = format!(
        "import fcntl, sys\nf = open(sys.argv[1], 'a')\n{call}\nprint('locked', flush=True)\nsys.stdin.readline()\n"
    );
    let mut command = Command::new(python);
    command.arg("-c").arg(script).arg(root.join(RT).join(LOCK_FILE));
    command
}

fn python_holder(python: &str, root: &Path, call: &str) -> Result<Holder, String> {
    Holder::spawn(python_command(python, root, call))
}

pub(crate) fn run() -> Outcome {
    let scratch = Scratch::new("t6");
    let root = scratch.path();
    Workspace::open(root).map_err(|e| e.to_string())?;
    let mut cases = 0;
    let mut worst = Duration::ZERO;

    // 1. A SIGKILLed holder: the next acquirer gets the lock within 10 ms, five times.
    for _ in 0..5 {
        let mut holder = Holder::spawn(child("hold", root))?;
        holder.process.kill().map_err(|e| e.to_string())?;
        holder.process.wait().map_err(|e| e.to_string())?;
        let started = Instant::now();
        let lock = acquire(root, Duration::from_millis(10));
        worst = worst.max(started.elapsed());
        ensure!(lock.is_ok(), "the lock of a killed holder was not free within 10 ms");
        cases += 1;
    }

    // 2. A holder aborted at the `lock.acquired` crash point frees it as well.
    let status = child("recover", root).env(ENV, "lock.acquired:1").status().map_err(|e| e.to_string())?;
    ensure!(aborted(status), "the crash point did not fire: {status}");
    ensure!(acquire(root, Duration::from_millis(10)).is_ok(), "the lock of an aborted holder was not free");
    cases += 1;

    // 3. A live holder excludes others, with CONCURRENT_UPDATE and the lock detail.
    let holder = Holder::spawn(child("hold", root))?;
    let error = acquire(root, Duration::from_millis(100)).err().ok_or("two holders")?;
    ensure!(error.code() == ErrorCode::ConcurrentUpdate, "timeout gave {}", error.code());
    ensure!(error.details().get("lock").and_then(|v| v.as_str()) == Some(LOCK_FILE), "details {:?}", error.details());
    holder.release()?;
    ensure!(acquire(root, Duration::from_millis(10)).is_ok(), "a released lock was not free");
    cases += 1;

    // 4 and 5. The lock file deleted, or replaced, while held: a newcomer locks the new
    // file, and the old holder's verify (install's pre-commit check) fails.
    for replace in [false, true] {
        let mut holder = Holder::spawn(child("hold", root))?;
        let lock_path = root.join(RT).join(LOCK_FILE);
        if replace {
            std::fs::write(root.join(RT).join("other"), b"").map_err(|e| e.to_string())?;
            std::fs::rename(root.join(RT).join("other"), &lock_path).map_err(|e| e.to_string())?;
        } else {
            std::fs::remove_file(&lock_path).map_err(|e| e.to_string())?;
        }
        let newcomer = acquire(root, Duration::from_millis(100)).map_err(|e| format!("newcomer: {e}"))?;
        ensure!(newcomer.verify().is_ok(), "the newcomer does not verify");
        let answer = holder.ask("verify")?;
        ensure!(
            answer == "lost",
            "the old holder still verifies after the file was {}",
            if replace { "replaced" } else { "deleted" }
        );
        drop(newcomer);
        holder.release()?;
        cases += 1;
    }

    // 6–9. Python's fcntl.flock, both directions; lockf is a different lock.
    let Some(python) = python() else {
        return Ok(format!(
            "{cases} cases (python3 not found: flock interop skipped); worst unlock-to-acquire {worst:?}"
        ));
    };
    let holder = python_holder(python, root, "fcntl.flock(f, fcntl.LOCK_EX)")?;
    let error = acquire(root, Duration::from_millis(100)).err().ok_or("Rust locked while Python held flock")?;
    ensure!(error.code() == ErrorCode::ConcurrentUpdate, "Python-held lock gave {}", error.code());
    holder.release()?;
    let started = Instant::now();
    let lock = acquire(root, Duration::from_secs(1)).map_err(|e| format!("after Python released: {e}"))?;
    worst = worst.max(started.elapsed());
    cases += 1;

    let probe = "import fcntl, sys\nf = open(sys.argv[1], 'a')\ntry:\n    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)\n    print('got')\nexcept BlockingIOError:\n    print('busy')\n";
    let run_probe = || -> Result<String, String> {
        let out = Command::new(python)
            .arg("-c")
            .arg(probe)
            .arg(root.join(RT).join(LOCK_FILE))
            .output()
            .map_err(|e| e.to_string())?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    ensure!(run_probe()? == "busy", "Python's flock got a lock Rust holds");
    cases += 1;

    // Python blocks in flock while Rust holds, and gets it once Rust releases.
    let mut waiter = Holder::start(python_command(python, root, "fcntl.flock(f, fcntl.LOCK_EX)"))?;
    std::thread::sleep(Duration::from_millis(300));
    drop(lock);
    waiter.wait_locked()?;
    waiter.release()?;
    ensure!(run_probe()? == "got", "the lock was not free after both released");
    cases += 1;

    // lockf (a POSIX record lock) does not exclude flock holders: documented, never mixed.
    let holder = python_holder(python, root, "fcntl.lockf(f, fcntl.LOCK_EX)")?;
    let lock = acquire(root, Duration::from_millis(100));
    ensure!(lock.is_ok(), "a Python lockf holder blocked the flock-based lock");
    drop(lock);
    holder.release()?;
    cases += 1;

    Ok(format!("{cases} cases, including 4 against Python fcntl; worst unlock-to-acquire {worst:?}"))
}
