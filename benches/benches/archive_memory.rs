//! Peak memory of a full parse against input size (spec 03 goal: ≤ input + 16 MB).
//!
//! Each size is measured in a fresh child process (this binary, re-executed), so the
//! corpus generation does not pollute the peak: the child reads the file, notes its
//! resident set (`VmRSS`), parses, and reports the peak (`VmHWM`) above it. Throughput is
//! also given per CPU second (`/proc/self/schedstat`), which stays meaningful when other
//! work shares the two cores.
#![allow(clippy::print_stdout, reason = "a bench binary reports its figures on stdout")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use scriptorium_archive_format::parse_bytes;
use scriptorium_benches::{archive_set, reference_sized_set};

/// The Python reference's `scan_source_archive` on the same kind of 20 MB set (spec 03 §B2).
const PYTHON_MB_PER_S: f64 = 12.4;

const CHILD: &str = "SCRIPTORIUM_MEM_CHILD";

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status (Linux only)");
    let line = status.lines().find(|l| l.starts_with(field)).expect("field present");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("a number of kB")
}

/// Nanoseconds this thread has spent on a CPU.
fn cpu_ns() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").expect("schedstat (Linux only)");
    stat.split_whitespace().next().and_then(|v| v.parse().ok()).expect("a number of ns")
}

/// Child: read, parse, and print `bytes frames rss_after_read_kib hwm_after_parse_kib
/// wall_secs cpu_secs`.
fn child(path: &Path, relative: &str) {
    let bytes = std::fs::read(path).expect("corpus file");
    let rss = status_kib("VmRSS:");
    let started = Instant::now();
    let cpu = cpu_ns();
    let parsed = parse_bytes(&bytes, relative);
    let cpu = (cpu_ns() - cpu) / 1e9;
    let secs = started.elapsed().as_secs_f64();
    assert!(parsed.stop.is_none());
    let hwm = status_kib("VmHWM:");
    println!("{} {} {rss} {hwm} {secs} {cpu}", bytes.len(), parsed.frames.len());
}

fn main() {
    if let Ok(path) = std::env::var(CHILD) {
        let relative = std::env::var("SCRIPTORIUM_MEM_PATH").expect("relative path");
        child(Path::new(&path), &relative);
        return;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("archive-memory");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    println!("archive_memory: peak memory of parse_bytes (fresh process per size)");
    println!(
        "{:>10} {:>9} {:>14} {:>16} {:>12} {:>9} {:>12}",
        "input MB", "frames", "parse peak MB", "peak - input MB", "goal (+16)", "MB/s", "MB/CPU-s"
    );
    for mb in [1usize, 4, 16, 64, 256] {
        let set = archive_set(mb as u64, mb << 20, mb << 20);
        let file = set.files.first().expect("one file");
        let path = dir.join(format!("archive-{mb}MB.md"));
        std::fs::write(&path, &file.bytes).expect("write corpus");
        let exe = std::env::current_exe().expect("this binary");
        let out =
            Command::new(exe).env(CHILD, &path).env("SCRIPTORIUM_MEM_PATH", &file.path).output().expect("child runs");
        assert!(out.status.success(), "child failed: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        let fields: Vec<f64> = text.split_whitespace().filter_map(|f| f.parse().ok()).collect();
        let [bytes, frames, rss, hwm, secs, cpu] = fields[..] else { panic!("unexpected child output {text:?}") };
        let input_mb = bytes / f64::from(1 << 20);
        // Peak while parsing, over the process with the input already resident.
        let parse_mb = (hwm - rss).max(0.0) / 1024.0;
        let total_mb = hwm / 1024.0;
        println!(
            "{input_mb:>10.1} {frames:>9} {parse_mb:>14.1} {:>16.1} {:>12} {:>9.0} {:>12.0}",
            total_mb - input_mb,
            if total_mb <= input_mb + 16.0 { "ok" } else { "OVER" },
            input_mb / secs,
            input_mb / cpu
        );
        std::fs::remove_file(&path).ok();
    }

    // Throughput per CPU second on the reference-sized set: a figure that holds even
    // when other work shares the machine (criterion's wall-clock figure does not).
    let set = reference_sized_set();
    let rounds = 5;
    let cpu = cpu_ns();
    let mut frames = 0;
    for _ in 0..rounds {
        for file in &set.files {
            frames += std::hint::black_box(parse_bytes(&file.bytes, &file.path)).frames.len();
        }
    }
    let cpu = (cpu_ns() - cpu) / 1e9;
    let mb = (set.total_bytes() * rounds) as f64 / f64::from(1 << 20);
    println!(
        "set of {} files, {:.1} MB, {} frames: {:.0} MB per CPU second, {:.1}x the Python reference ({PYTHON_MB_PER_S} MB/s)",
        set.files.len(),
        set.total_bytes() as f64 / f64::from(1 << 20),
        frames / rounds,
        mb / cpu,
        mb / cpu / PYTHON_MB_PER_S
    );
}
