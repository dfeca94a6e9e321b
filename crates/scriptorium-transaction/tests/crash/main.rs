//! The crash, fault and concurrency suites of spec 04 §C4 for the install protocol, as one
//! `harness = false` binary (sled style): with `SCRIPTORIUM_CRASH_ROLE` set it is a child
//! process playing that role; otherwise it runs the suites and reports counts and times.
//!
//! - T1 every named crash point × every occurrence, child aborts, parent recovers (I1, I4)
//! - T2 random SIGKILL of a child looping acked installs (committed prefix, no lost ack)
//! - T3 simulated power loss with the durability model of `SimVfs` (I1, durable ack, I4)
//! - T4 every N × EIO/ENOSPC/EDQUOT/EACCES, transient and persistent (clean error, I1)
//! - T5 8 writer processes × 200 transactions on the real lock (no lost update)
//! - T6 lock semantics: SIGKILLed holder, deleted/replaced lock file, Python `fcntl.flock`
//!
//! `cargo test -p scriptorium-transaction --test crash -- t3 t4` runs a subset. Counts
//! grow with `SCRIPTORIUM_SOAK=1` or per-suite variables (see each suite), and
//! `SCRIPTORIUM_SEED` replays the random choices printed by a run.
#![allow(clippy::print_stdout, reason = "a harness = false test binary reports its own results")]
#![allow(clippy::print_stderr, reason = "children report unexpected errors on stderr")]

mod children;
mod support;
mod t1_crash_points;
mod t2_sigkill;
mod t3_power_loss;
mod t4_faults;
mod t5_writers;
mod t6_lock;
mod t8_paths;

use std::process::ExitCode;
use std::time::Instant;

type Suite = (&'static str, &'static str, fn() -> support::Outcome);

const SUITES: &[Suite] = &[
    ("t1", "crash-point enumeration", t1_crash_points::run),
    ("t2", "random SIGKILL", t2_sigkill::run),
    ("t3", "simulated power loss", t3_power_loss::run),
    ("t4", "I/O error injection", t4_faults::run),
    ("t5", "concurrent writers", t5_writers::run),
    ("t6", "lock semantics", t6_lock::run),
    ("t8", "planted symbolic links", t8_paths::run),
];

/// Filters from the command line: bare words; flags (and the value after a flag that
/// takes one, as libtest's `--test-threads 2`) are ignored.
fn filters() -> Vec<String> {
    let mut out = Vec::new();
    let mut skip_value = false;
    for arg in std::env::args().skip(1) {
        if skip_value {
            skip_value = false;
        } else if arg.starts_with('-') {
            skip_value = !arg.contains('=')
                && matches!(arg.as_str(), "--test-threads" | "--format" | "--color" | "--skip" | "-Z");
        } else {
            out.push(arg);
        }
    }
    out
}

fn main() -> ExitCode {
    if let Ok(role) = std::env::var(support::ROLE_ENV) {
        return children::run(&role);
    }
    let filters = filters();
    let mut failed = 0;
    let mut ran = 0;
    for (id, name, run) in SUITES {
        if !filters.is_empty()
            && !filters.iter().any(|filter| id.contains(filter.as_str()) || name.contains(filter.as_str()))
        {
            continue;
        }
        ran += 1;
        println!("{id} {name} ...");
        let started = Instant::now();
        match run() {
            Ok(summary) => println!("{id} {name}: ok: {summary} ({:.1} s)", started.elapsed().as_secs_f64()),
            Err(message) => {
                failed += 1;
                println!("{id} {name}: FAILED after {:.1} s: {message}", started.elapsed().as_secs_f64());
            }
        }
    }
    println!("\ncrash suites: {ran} run, {failed} failed");
    if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
