//! The child roles. Each reads its workspace from `SCRIPTORIUM_T_ROOT`, exits 0 when its
//! work is done, and exits 3 with a message on stderr for any unexpected error (a crash
//! point aborts it instead, and T2 kills it).

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use scriptorium_transaction::{BACKGROUND_LOCK_TIMEOUT, ErrorCode, INTERACTIVE_LOCK_TIMEOUT, Workspace, WriteLock};

use crate::support::{RT, scenario_changes};
use crate::t2_sigkill;

fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is set by the parent"))
}

pub(crate) fn run(role: &str) -> ExitCode {
    let root = PathBuf::from(var("SCRIPTORIUM_T_ROOT"));
    let result = match role {
        "install" => install(&root),
        "recover" => Workspace::open(&root).map(|_| ()).map_err(|e| e.to_string()),
        "loop" => install_loop(&root),
        "writer" => writer(&root),
        "reader" => crate::t5_writers::reader(&root),
        "hold" => hold(&root),
        other => Err(format!("unknown role {other}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("child {role} failed: {message}");
            ExitCode::from(3)
        }
    }
}

/// T1: one scenario's transaction: open (recovering), lock, check the base revision,
/// install.
fn install(root: &std::path::Path) -> Result<(), String> {
    let workspace = Workspace::open(root).map_err(|e| e.to_string())?;
    let lock = workspace.lock(INTERACTIVE_LOCK_TIMEOUT).map_err(|e| e.to_string())?;
    let base = var("SCRIPTORIUM_T_BASE");
    let revision = workspace.revision().map_err(|e| e.to_string())?;
    if revision != base {
        return Err(format!("stale base revision {base}, workspace at {revision}"));
    }
    let changes = scenario_changes(&var("SCRIPTORIUM_T_SCENARIO"), workspace.vfs());
    workspace.install(&lock, &changes).map(|_| ()).map_err(|e| e.to_string())
}

/// T2: install transactions m+1, m+2, … forever, acking each on stdout once `install`
/// returned.
fn install_loop(root: &std::path::Path) -> Result<(), String> {
    let workspace = Workspace::open(root).map_err(|e| e.to_string())?;
    let mut stdout = std::io::stdout().lock();
    loop {
        let lock = workspace.lock(INTERACTIVE_LOCK_TIMEOUT).map_err(|e| e.to_string())?;
        let current = t2_sigkill::current(root)?;
        let changes = t2_sigkill::transaction(current + 1, &workspace.vfs().root().join("topics/log.md"))?;
        workspace.install(&lock, &changes).map_err(|e| e.to_string())?;
        drop(lock);
        writeln!(stdout, "{}", current + 1).and_then(|()| stdout.flush()).map_err(|e| e.to_string())?;
    }
}

/// T5: `SCRIPTORIUM_T_COUNT` successful transactions, each appending one line to
/// `topics/log.md` after a base-revision check under a 1 s lock; every failure must be
/// `CONCURRENT_UPDATE`, and is retried. Prints a summary line.
fn writer(root: &std::path::Path) -> Result<(), String> {
    let id: usize = var("SCRIPTORIUM_T_WRITER").parse().map_err(|_| "writer id")?;
    let count: usize = var("SCRIPTORIUM_T_COUNT").parse().map_err(|_| "count")?;
    let workspace = Workspace::open(root).map_err(|e| e.to_string())?;
    let (mut busy, mut stale) = (0u64, 0u64);
    let mut waits = Vec::with_capacity(count);
    let mut done = 0;
    while done < count {
        let base = workspace.revision().map_err(|e| e.to_string())?;
        let started = Instant::now();
        let lock = match workspace.lock(BACKGROUND_LOCK_TIMEOUT) {
            Ok(lock) => lock,
            Err(error) if error.code() == ErrorCode::ConcurrentUpdate => {
                busy += 1;
                continue;
            }
            Err(error) => return Err(error.to_string()),
        };
        waits.push(started.elapsed());
        if workspace.revision().map_err(|e| e.to_string())? != base {
            // The optimistic check of spec 02 §4.3: CONCURRENT_UPDATE, retried next turn.
            stale += 1;
            continue;
        }
        let log_path = root.join("topics/log.md");
        let mut log = std::fs::read(&log_path).unwrap_or_default();
        log.extend(format!("{id} {done}\n").as_bytes());
        let mut changes = scriptorium_transaction::Changes::new();
        changes.insert("topics/log.md".into(), Some(log));
        changes.insert(format!("topics/writers/{id}.md"), Some(format!("{id} {done}\n").into_bytes()));
        workspace.install(&lock, &changes).map_err(|e| e.to_string())?;
        done += 1;
    }
    waits.sort();
    let percentile = |p: usize| waits.get(waits.len().saturating_sub(1) * p / 100).copied().unwrap_or_default();
    println!("{id} {done} {busy} {stale} {} {}", percentile(50).as_micros(), percentile(99).as_micros());
    Ok(())
}

/// T6: take the lock, say `locked`, then answer `verify` with `ok`/`lost` and exit on
/// `release` (or end of input).
fn hold(root: &std::path::Path) -> Result<(), String> {
    let lock = WriteLock::acquire(&root.join(RT), Duration::from_secs(10)).map_err(|e| e.to_string())?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "locked").and_then(|()| stdout.flush()).map_err(|e| e.to_string())?;
    for line in std::io::stdin().lock().lines() {
        match line.map_err(|e| e.to_string())?.as_str() {
            "verify" => {
                let answer = if lock.verify().is_ok() { "ok" } else { "lost" };
                writeln!(stdout, "{answer}").and_then(|()| stdout.flush()).map_err(|e| e.to_string())?;
            }
            _ => break,
        }
    }
    Ok(())
}
