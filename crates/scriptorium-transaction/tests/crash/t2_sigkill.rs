//! T2: a child loops transactions and acks each on a pipe once `install` returned; the
//! parent SIGKILLs it at a random microsecond offset, reopens (recovering) and checks that
//! the workspace is exactly the state after some transaction m, with m at least the last
//! ack (no lost ack, I2) and at most one more (the one in flight). Default 500 kills;
//! `SCRIPTORIUM_T2_KILLS=n` or `SCRIPTORIUM_SOAK=1` (10,000) for more.
//!
//! The state after transaction m is a pure function of m, so its revision can be
//! computed in memory: `topics/counter.md` holds m, `topics/log.md` one line per
//! transaction (an append), `topics/items/` the last five items (a create and a delete
//! per transaction, sizes varying across 4 KiB pages), and the runtime state counts m.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use scriptorium_transaction::{Changes, RuntimeState, SimVfs, revision};

use crate::ensure;
use crate::support::{Outcome, RT, Rng, Scratch, child, count, reopen_and_check};

fn item(index: u64) -> Vec<u8> {
    let mut bytes = format!("item {index}\n").into_bytes();
    bytes.resize(bytes.len() + (index % 3) as usize * 3000, b'.');
    bytes.push(b'\n');
    bytes
}

fn log(m: u64) -> Vec<u8> {
    (1..=m).flat_map(|index| format!("entry {index}\n").into_bytes()).collect()
}

fn runtime(m: u64) -> Vec<u8> {
    let mut state = RuntimeState::default();
    state.local_batches = m as i64;
    state.to_bytes()
}

/// The whole workspace after transaction `m`.
fn state(m: u64) -> Vec<(String, Vec<u8>)> {
    let mut files = vec![
        ("topics/counter.md".to_owned(), format!("counter {m}\n").into_bytes()),
        ("topics/log.md".to_owned(), log(m)),
        (format!("{RT}/runtime.json"), runtime(m)),
    ];
    for index in m.saturating_sub(4).max(1)..=m {
        files.push((format!("topics/items/{index}.md"), item(index)));
    }
    files
}

/// Transaction `m`: from the state after m-1 to the state after m. The log is read from
/// disk and appended to, as an archive append would be.
pub(crate) fn transaction(m: u64, log_path: &Path) -> Result<Changes, String> {
    let mut changes = Changes::new();
    let mut log = std::fs::read(log_path).unwrap_or_default();
    log.extend(format!("entry {m}\n").as_bytes());
    changes.insert("topics/log.md".into(), Some(log));
    changes.insert("topics/counter.md".into(), Some(format!("counter {m}\n").into_bytes()));
    changes.insert(format!("topics/items/{m}.md"), Some(item(m)));
    if m > 5 {
        changes.insert(format!("topics/items/{}.md", m - 5), None);
    }
    changes.insert(format!("{RT}/runtime.json"), Some(runtime(m)));
    Ok(changes)
}

/// The m the workspace at `root` is at, read from its counter.
pub(crate) fn current(root: &Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(root.join("topics/counter.md")).map_err(|e| e.to_string())?;
    text.trim().strip_prefix("counter ").and_then(|m| m.parse().ok()).ok_or_else(|| format!("bad counter {text:?}"))
}

fn expected_revision(m: u64, cache: &mut HashMap<u64, String>) -> String {
    cache
        .entry(m)
        .or_insert_with(|| {
            let sim = SimVfs::from_files(state(m)).expect("build the expected tree");
            revision(&sim, RT).expect("revision")
        })
        .clone()
}

pub(crate) fn run() -> Outcome {
    let kills = count("SCRIPTORIUM_T2_KILLS", 500, 10_000);
    let mut rng = Rng::from_env("t2");
    let scratch = Scratch::new("t2");
    let root = scratch.path();
    for (path, bytes) in state(0) {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).map_err(|e| e.to_string())?;
        std::fs::write(full, bytes).map_err(|e| e.to_string())?;
    }
    let mut cache = HashMap::new();
    let (mut in_flight_landed, mut max_latency) = (0u64, Duration::ZERO);
    for kill in 0..kills {
        let start = current(root)?;
        let mut process = child("loop", root).stdout(Stdio::piped()).spawn().map_err(|e| e.to_string())?;
        let stdout = process.stdout.take().ok_or("no stdout")?;
        let acked = Arc::new(AtomicU64::new(start));
        let reader = {
            let acked = Arc::clone(&acked);
            std::thread::spawn(move || {
                for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                    if let Ok(m) = line.trim().parse() {
                        acked.store(m, Ordering::SeqCst);
                    }
                }
            })
        };
        // Up to 50 ms: process start-up and recovery included, so kills land everywhere.
        std::thread::sleep(Duration::from_micros(rng.below(50_000)));
        let _ = process.kill();
        let status = process.wait().map_err(|e| e.to_string())?;
        reader.join().map_err(|_| "the ack reader panicked")?;
        ensure!(!status.success(), "kill {kill}: the looping child exited by itself: {status}");
        let last_ack = acked.load(Ordering::SeqCst);

        // Recovery (inside reopen) first, then the state is read.
        let workspace = scriptorium_transaction::Workspace::open(root).map_err(|e| format!("kill {kill}: {e}"))?;
        drop(workspace);
        let m = current(root)?;
        ensure!(m >= last_ack, "kill {kill}: lost ack: workspace at {m}, last ack {last_ack} (I2)");
        ensure!(m <= last_ack + 1, "kill {kill}: workspace at {m} ahead of the last ack {last_ack} by more than one");
        in_flight_landed += u64::from(m == last_ack + 1);
        let latency = reopen_and_check(root, &expected_revision(m, &mut cache), &format!("kill {kill} at m={m}"))?;
        max_latency = max_latency.max(latency);
    }
    let transactions = current(root)?;
    ensure!(transactions >= kills / 10, "only {transactions} transactions committed over {kills} kills");
    Ok(format!(
        "{kills} kills, {transactions} transactions committed, {in_flight_landed} unacked in-flight installs found committed; max lock latency {max_latency:?}"
    ))
}
