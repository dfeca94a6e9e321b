//! Import of 100 MB of generated Claude Code JSONL into a fresh session store (goal
//! ≤ 10 s on one core, ≤ 200 MB peak RSS) and a re-run over the unchanged files (goal
//! ≤ 0.5 s), each in a fresh child process (this binary, re-executed) so the corpus
//! generation does not pollute the peak (`VmHWM`). CPU seconds come from
//! `/proc/thread-self/schedstat` (the import is single-threaded), which stays meaningful
//! when other work shares the cores.
#![allow(clippy::print_stdout, reason = "a bench binary reports its figures on stdout")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use scriptorium_benches::transcripts::claude_code_session;
use scriptorium_writer_runtime::SqliteStore;
use scriptorium_writer_runtime::import::{Format, import_paths};

const CHILD: &str = "SCRIPTORIUM_IMPORT_CHILD";

fn status_kib(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status (Linux only)");
    let line = status.lines().find(|l| l.starts_with(field)).expect("field present");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("a number of kB")
}

fn cpu_ns() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").expect("schedstat (Linux only)");
    stat.split_whitespace().next().and_then(|v| v.parse().ok()).expect("a number of ns")
}

/// Child: import `projects` into `store` and print `bytes lines turns wall cpu hwm_kib`.
fn child(projects: &Path, store: &Path) {
    let store = SqliteStore::open(store).expect("store");
    let started = Instant::now();
    let cpu = cpu_ns();
    let report = import_paths(&store, Format::ClaudeCode, &[projects.to_path_buf()]).expect("import");
    let cpu = (cpu_ns() - cpu) / 1e9;
    let secs = started.elapsed().as_secs_f64();
    assert!(report.problems.is_empty(), "{:?}", report.problems.first());
    println!(
        "{} {} {} {secs} {cpu} {}",
        report.bytes_read,
        report.lines_read,
        report.turns_added,
        status_kib("VmHWM:")
    );
}

fn run_child(projects: &Path, store: &Path) -> Vec<f64> {
    let exe = std::env::current_exe().expect("this binary");
    let out =
        Command::new(exe).env(CHILD, projects).env("SCRIPTORIUM_IMPORT_STORE", store).output().expect("child runs");
    assert!(out.status.success(), "child failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).split_whitespace().filter_map(|f| f.parse().ok()).collect()
}

fn main() {
    if let Ok(projects) = std::env::var(CHILD) {
        let store = std::env::var("SCRIPTORIUM_IMPORT_STORE").expect("store path");
        child(Path::new(&projects), Path::new(&store));
        return;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("import-bench");
    let _ = std::fs::remove_dir_all(&dir);
    let projects = dir.join("projects");
    // One long session of 50 MB and twenty of 2.5 MB, in four projects: 100 MB.
    let mut total = 0usize;
    for i in 0..21u64 {
        let size = if i == 0 { 50 << 20 } else { 5 << 19 };
        let project = projects.join(format!("-home-ana-src-project{}", i % 4));
        std::fs::create_dir_all(&project).expect("project dir");
        let session = format!("{:08x}-0000-4000-8000-{:012x}", i, i * 7919);
        let bytes = claude_code_session(i + 1, &session, size);
        total += bytes.len();
        std::fs::write(project.join(format!("{session}.jsonl")), bytes).expect("write corpus");
    }
    let store = dir.join("sessions.sqlite3");
    println!(
        "import: {:.1} MB of Claude Code JSONL in 21 files (fresh child process per run)",
        total as f64 / f64::from(1 << 20)
    );
    println!(
        "{:>10} {:>10} {:>9} {:>9} {:>9} {:>8} {:>11} {:>10}",
        "run", "MB read", "lines", "turns", "wall s", "CPU s", "peak RSS MB", "goal"
    );
    for (label, goal) in [("first", "≤10 s, ≤200 MB"), ("unchanged", "≤0.5 s")] {
        let fields = run_child(&projects, &store);
        let [bytes, lines, turns, secs, cpu, hwm] = fields[..] else { panic!("unexpected child output {fields:?}") };
        println!(
            "{label:>10} {:>10.1} {lines:>9} {turns:>9} {secs:>9.2} {cpu:>8.2} {:>11.1} {goal:>10}",
            bytes / f64::from(1 << 20),
            hwm / 1024.0
        );
    }
    let db = std::fs::metadata(&store).map(|m| m.len()).unwrap_or(0);
    println!("session store: {:.1} MB", db as f64 / f64::from(1 << 20));
}
