//! T5: 8 writer processes × 200 transactions through the real lock with a 1 s timeout,
//! each appending one line to `topics/log.md` after the optimistic base-revision check,
//! while 2 reader processes watch the log. Checked: no lost update (the log holds every
//! writer's lines 0..199 in order, exactly once), failures only `CONCURRENT_UPDATE`
//! (anything else makes a child exit non-zero), every timeout retried successfully, no
//! deadlock (120 s watchdog), readers never see a torn log, and the lock's waiting line
//! is gone at the end (no entry, no directory left). Reports the p99 lock wait.
//! `SCRIPTORIUM_T5_WRITERS` / `SCRIPTORIUM_T5_TXNS` (soak: 32 × 1,000) change the size.

use std::io::Read;
use std::process::Stdio;
use std::time::Duration;

use scriptorium_transaction::Workspace;

use crate::ensure;
use crate::support::{Outcome, Scratch, child, count, wait_with_watchdog};

/// A reader: read the log over and over until `stop` exists; every read must be whole
/// lines of the form `<writer> <n>`. Prints how many reads it made.
pub(crate) fn reader(root: &std::path::Path) -> Result<(), String> {
    let mut reads = 0u64;
    while !root.join("stop").exists() {
        if let Ok(text) = std::fs::read_to_string(root.join("topics/log.md")) {
            ensure!(text.is_empty() || text.ends_with('\n'), "a reader saw a torn log");
            for line in text.lines() {
                let mut parts = line.split(' ');
                let well_formed = parts.next().is_some_and(|p| p.parse::<u32>().is_ok())
                    && parts.next().is_some_and(|n| n.parse::<u32>().is_ok())
                    && parts.next().is_none();
                ensure!(well_formed, "a reader saw a malformed line {line:?}");
            }
            reads += 1;
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    println!("{reads}");
    Ok(())
}

pub(crate) fn run() -> Outcome {
    let writers = count("SCRIPTORIUM_T5_WRITERS", 8, 32) as usize;
    let txns = count("SCRIPTORIUM_T5_TXNS", 200, 1_000) as usize;
    let scratch = Scratch::new("t5");
    let root = scratch.path();
    Workspace::open(root).map_err(|e| e.to_string())?;

    let spawn = |role: &str, id: usize| {
        child(role, root)
            .env("SCRIPTORIUM_T_WRITER", id.to_string())
            .env("SCRIPTORIUM_T_COUNT", txns.to_string())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())
    };
    let readers: Vec<_> = (0..2).map(|id| spawn("reader", id)).collect::<Result<_, _>>()?;
    let mut children: Vec<_> = (0..writers).map(|id| spawn("writer", id)).collect::<Result<_, _>>()?;

    let mut summaries = Vec::new();
    let mut failure = None;
    for process in &mut children {
        match wait_with_watchdog(process, Duration::from_secs(120)) {
            Ok(status) if status.success() => {
                let mut out = String::new();
                process.stdout.take().ok_or("no stdout")?.read_to_string(&mut out).map_err(|e| e.to_string())?;
                summaries.push(out);
            }
            Ok(status) => failure = failure.or(Some(format!("a writer failed: {status}"))),
            Err(message) => failure = failure.or(Some(message)),
        }
    }
    std::fs::write(root.join("stop"), b"").map_err(|e| e.to_string())?;
    let mut reads = 0u64;
    for mut process in readers {
        let status = wait_with_watchdog(&mut process, Duration::from_secs(30))?;
        ensure!(status.success(), "a reader failed: {status}");
        let mut out = String::new();
        process.stdout.take().ok_or("no stdout")?.read_to_string(&mut out).map_err(|e| e.to_string())?;
        reads += out.trim().parse::<u64>().unwrap_or(0);
    }
    if let Some(message) = failure {
        return Err(message);
    }

    // No lost update: every writer's lines, in its order, exactly once.
    let log = std::fs::read_to_string(root.join("topics/log.md")).map_err(|e| e.to_string())?;
    let mut next = vec![0usize; writers];
    for line in log.lines() {
        let (writer, n) = line.split_once(' ').ok_or_else(|| format!("bad line {line:?}"))?;
        let writer: usize = writer.parse().map_err(|_| format!("bad line {line:?}"))?;
        let n: usize = n.parse().map_err(|_| format!("bad line {line:?}"))?;
        let slot = next.get_mut(writer).ok_or_else(|| format!("unknown writer in {line:?}"))?;
        ensure!(n == *slot, "writer {writer}: line {n} where {slot} was due (lost or duplicated update)");
        *slot += 1;
    }
    ensure!(next.iter().all(|&done| done == txns), "lines per writer {next:?}, expected {txns} each");
    for writer in 0..writers {
        let own =
            std::fs::read_to_string(root.join(format!("topics/writers/{writer}.md"))).map_err(|e| e.to_string())?;
        ensure!(own == format!("{writer} {}\n", txns - 1), "writer {writer}'s own file is {own:?}");
    }

    let queue = root.join(crate::support::RT).join("lock-queue");
    ensure!(!queue.exists(), "the lock queue was left behind: {:?}", std::fs::read_dir(&queue).map(|l| l.count()));

    let (mut busy, mut stale, mut p99) = (0u64, 0u64, 0u64);
    for summary in &summaries {
        let fields: Vec<u64> = summary.split_whitespace().filter_map(|field| field.parse().ok()).collect();
        ensure!(fields.len() == 6, "bad writer summary {summary:?}");
        busy += fields.get(2).copied().unwrap_or(0);
        stale += fields.get(3).copied().unwrap_or(0);
        p99 = p99.max(fields.get(5).copied().unwrap_or(0));
    }
    Ok(format!(
        "{writers} writers × {txns} transactions, {} committed, 0 lost; failures all CONCURRENT_UPDATE: {busy} lock timeouts + {stale} stale base revisions, each retried; worst per-writer p99 lock wait {:.1} ms; 2 readers made {reads} reads, none torn",
        writers * txns,
        p99 as f64 / 1000.0
    ))
}
