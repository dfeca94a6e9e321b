//! T6: lock semantics across real processes. A SIGKILLed (or aborted) holder frees the
//! lock at once; a lock file deleted or replaced while held lets a second process lock
//! the new file, but the first then fails `verify`, which install calls before its
//! commit point, so at most one of them can commit; the lock interoperates with the
//! Python reference's `fcntl.flock` in both directions while ignoring `fcntl.lockf`.
//! The waiting line: waiters get the lock in the order they queued, even against a
//! releaser that re-locks at once; a SIGKILLed waiter's entry blocks nobody; a timeout
//! is still `CONCURRENT_UPDATE` and leaves no entry; a plain `flock` holder that ignores
//! the queue (as the reference does) still excludes every waiter.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use scriptorium_transaction::crashpoint::ENV;
use scriptorium_transaction::{ErrorCode, LOCK_FILE, Workspace, WriteLock};

use crate::ensure;
use crate::support::{Outcome, RT, Scratch, aborted, child};

/// A process that says one line when it holds the lock and answers on stdin.
struct Holder {
    process: Child,
    stdin: ChildStdin,
    /// Its stdout, line by line, read by a thread so that a wait can time out.
    lines: Receiver<String>,
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
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if send.send(line.trim().to_owned()).is_err() {
                    break;
                }
            }
        });
        Ok(Holder { process, stdin, lines })
    }

    fn wait_locked(&mut self) -> Result<(), String> {
        let first = self.line()?;
        ensure!(first == "locked", "holder said {first:?}");
        Ok(())
    }

    /// The next line; a child that says nothing for 30 s is stuck.
    fn line(&mut self) -> Result<String, String> {
        self.line_within(Duration::from_secs(30))?.ok_or_else(|| format!("holder {} said nothing", self.process.id()))
    }

    /// The next line if one comes within `limit`.
    fn line_within(&mut self, limit: Duration) -> Result<Option<String>, String> {
        match self.lines.recv_timeout(limit) {
            Ok(line) => Ok(Some(line)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(format!("holder {} closed its output", self.process.id())),
        }
    }

    /// Whether the child has said anything yet (without waiting).
    fn is_silent(&mut self) -> Result<bool, String> {
        Ok(self.line_within(Duration::ZERO)?.is_none())
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

impl Drop for Holder {
    /// A case that failed half-way must not leave a child holding or waiting.
    fn drop(&mut self) {
        if matches!(self.process.try_wait(), Ok(None)) {
            let _ = self.process.kill();
            let _ = self.process.wait();
        }
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

    let queue_cases = queue_cases(root)?;
    cases += queue_cases;

    // Python's fcntl.flock, both directions; lockf is a different lock.
    let Some(python) = python() else {
        return Ok(format!(
            "{cases} cases, {queue_cases} on the waiting line (python3 not found: flock interop skipped); worst unlock-to-acquire {worst:?}"
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

    Ok(format!(
        "{cases} cases, including 4 against Python fcntl and {queue_cases} on the waiting line; worst unlock-to-acquire {worst:?}"
    ))
}

/// The queue directory (`lock.rs`'s `lock-queue`).
fn queue_dir(root: &Path) -> std::path::PathBuf {
    root.join(RT).join("lock-queue")
}

/// The process ids of the queue's entries (`<ticket>-<pid>-<random>`), in queue order.
fn queued_pids(root: &Path) -> Result<Vec<u32>, String> {
    let listing = match std::fs::read_dir(queue_dir(root)) {
        Ok(listing) => listing,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error.to_string()),
    };
    let mut names: Vec<String> = listing
        .map(|entry| entry.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    names.sort();
    names
        .iter()
        .map(|name| name.split('-').nth(1).and_then(|pid| pid.parse().ok()).ok_or(format!("bad entry {name:?}")))
        .collect()
}

/// Wait until the queue holds exactly `pids`, in that order.
fn wait_queued(root: &Path, pids: &[u32]) -> Result<(), String> {
    let started = Instant::now();
    loop {
        let queued = queued_pids(root)?;
        if queued == pids {
            return Ok(());
        }
        ensure!(started.elapsed() < Duration::from_secs(10), "the queue holds {queued:?}, expected {pids:?}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Start `n` holder processes one after the other, each queued before the next starts
/// (the lock is held elsewhere).
fn queue_holders(root: &Path, n: usize) -> Result<Vec<Holder>, String> {
    let mut holders: Vec<Holder> = Vec::new();
    for _ in 0..n {
        holders.push(Holder::start(child("hold", root))?);
        let pids: Vec<u32> = holders.iter().map(|holder| holder.process.id()).collect();
        wait_queued(root, &pids)?;
    }
    Ok(holders)
}

/// Wait until `holder` says it holds the lock.
fn wait_turn(holder: &mut Holder, what: &str) -> Result<(), String> {
    let said = holder.line_within(Duration::from_secs(10))?;
    ensure!(said.as_deref() == Some("locked"), "{what} did not get the lock: it said {said:?}");
    Ok(())
}

/// The waiting line across processes; returns the number of cases.
fn queue_cases(root: &Path) -> Result<usize, String> {
    let me = std::process::id();

    // 1. FIFO hand-off: three processes queue behind our lock; we release and re-lock at
    // once, as a writer in a tight loop does. Each gets the lock in the order it queued,
    // and we only after the third (plain flock polling lets the re-locker win).
    let lock = acquire(root, Duration::ZERO).map_err(|e| format!("free lock: {e}"))?;
    let mut holders = queue_holders(root, 3)?;
    let pids: Vec<u32> = holders.iter().map(|holder| holder.process.id()).collect();
    let (got, relocked) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let relocker = {
        let root = root.to_path_buf();
        std::thread::spawn(move || {
            drop(lock);
            let again = acquire(&root, Duration::from_secs(30)).map_err(|e| e.to_string());
            let _ = got.send(again.as_ref().map(|_| ()).map_err(Clone::clone));
            // Hold it until told, so that a re-locker that jumped the line keeps the
            // others out and the case fails.
            let _ = released.recv();
        })
    };
    for (turn, mut holder) in holders.drain(..).enumerate() {
        wait_turn(&mut holder, &format!("waiter {turn}"))?;
        ensure!(relocked.try_recv().is_err(), "the re-locking writer jumped ahead of waiter {turn}");
        let behind: Vec<u32> = pids.iter().skip(turn + 1).copied().chain([me]).collect();
        wait_queued(root, &behind)?;
        holder.release()?;
    }
    let again = relocked.recv_timeout(Duration::from_secs(10)).map_err(|e| format!("the re-locker: {e}"))?;
    again.map_err(|e| format!("the re-locker failed: {e}"))?;
    ensure!(queued_pids(root)?.is_empty(), "entries left: {:?}", queued_pids(root)?);
    let _ = release.send(());
    relocker.join().map_err(|_| "the re-locking thread panicked")?;
    ensure!(!queue_dir(root).exists(), "the empty queue directory was left behind");

    // 2. A SIGKILLed waiter leaves its entry, unlocked; it blocks neither the waiter
    // behind it (which removes it on its next look) nor an acquirer that is not queued.
    let lock = acquire(root, Duration::ZERO).map_err(|e| format!("free lock: {e}"))?;
    let mut holders = queue_holders(root, 2)?;
    let (mut killed, mut waiter) = (holders.remove(0), holders.remove(0));
    killed.process.kill().map_err(|e| e.to_string())?;
    killed.process.wait().map_err(|e| e.to_string())?;
    wait_queued(root, &[waiter.process.id()])?;
    drop(lock);
    wait_turn(&mut waiter, "the waiter behind a killed one")?;
    wait_queued(root, &[])?;
    waiter.release()?;

    let lock = acquire(root, Duration::ZERO).map_err(|e| format!("free lock: {e}"))?;
    let mut killed = queue_holders(root, 1)?.remove(0);
    killed.process.kill().map_err(|e| e.to_string())?;
    killed.process.wait().map_err(|e| e.to_string())?;
    ensure!(queued_pids(root)? == [killed.process.id()], "the killed waiter's entry went: {:?}", queued_pids(root)?);
    drop(lock);
    let lock = acquire(root, Duration::ZERO).map_err(|e| format!("a stale entry blocked a newcomer: {e}"))?;
    ensure!(!queue_dir(root).exists(), "the stale entry was not removed");
    drop(lock);

    // 3. A timeout behind a holder and a queued waiter is CONCURRENT_UPDATE, after the
    // whole timeout, and leaves no entry; a zero timeout does not queue at all.
    let holder = Holder::spawn(child("hold", root))?;
    let mut queued = queue_holders(root, 1)?.remove(0);
    for timeout in [Duration::ZERO, Duration::from_millis(150)] {
        let started = Instant::now();
        let error = acquire(root, timeout).err().ok_or("locked past a holder and a waiter")?;
        ensure!(started.elapsed() >= timeout, "gave up after {:?} of {timeout:?}", started.elapsed());
        ensure!(error.code() == ErrorCode::ConcurrentUpdate, "timeout gave {}", error.code());
        ensure!(error.details().get("lock").and_then(|v| v.as_str()) == Some(LOCK_FILE), "{:?}", error.details());
        ensure!(queued_pids(root)? == [queued.process.id()], "left {:?}", queued_pids(root)?);
    }
    holder.release()?;
    wait_turn(&mut queued, "the waiter")?;
    queued.release()?;

    // 4. A plain flock holder that ignores the queue, as the reference does, excludes
    // the first waiter and everyone behind it, and is excluded in turn.
    let plain = std::fs::File::options().append(true).open(root.join(RT).join(LOCK_FILE)).map_err(|e| e.to_string())?;
    plain.lock().map_err(|e| e.to_string())?;
    let mut first = queue_holders(root, 1)?.remove(0);
    ensure!(acquire(root, Duration::from_millis(100)).is_err(), "locked past a plain flock holder");
    std::thread::sleep(Duration::from_millis(100));
    ensure!(first.is_silent()?, "the first waiter locked past a plain flock holder");
    plain.unlock().map_err(|e| e.to_string())?;
    wait_turn(&mut first, "the first waiter after the plain holder released")?;
    ensure!(plain.try_lock().is_err(), "a plain flock got the lock a waiter holds");
    first.release()?;
    ensure!(plain.try_lock().is_ok(), "the lock was not free after the waiter released");
    plain.unlock().map_err(|e| e.to_string())?;

    Ok(4)
}
