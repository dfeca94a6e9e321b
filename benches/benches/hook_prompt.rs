//! The Claude Code prompt hook as Claude Code runs it: a new `scriptorium hook claude-code
//! user-prompt-submit` process per prompt, the hook JSON on stdin, the fenced recall on
//! stdout, on ws-10k (issue 18's goal: whole process p99 ≤ 200 ms). Also the session-start
//! hook (core.md) and, for comparison, a process that does nothing (`--version`).
//!
//! The bench builds the release binary itself (`cargo build --release -p scriptorium-cli`,
//! a no-op when it is fresh) and generates ws-10k once into
//! `CARGO_TARGET_TMPDIR/hook-prompt-bench/`; the first run of the hook there builds the
//! retrieval cache, as the first prompt of a real session would, and is not measured.
#![allow(clippy::print_stdout, reason = "a bench binary reports its figures")]
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a bench fails loudly")]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use scriptorium_benches::topics::ws10k_on_disk;

/// Prompts in the corpus's vocabulary (English and Chinese words of the generator).
const PROMPTS: &[&str] = &[
    "what was the budget tracker decision in April?",
    "does Ada prefer tea",
    "remember the deadline for the garden battery",
    "ships in April please",
    "记得 预算",
];

/// The release `scriptorium` binary, built now if it is stale.
fn binary() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["build", "--release", "-p", "scriptorium-cli", "--message-format=json-render-diagnostics"])
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo build failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|message| message["executable"].as_str().map(PathBuf::from))
        .find(|exe| exe.file_stem().is_some_and(|stem| stem == "scriptorium"))
        .expect("cargo reported the scriptorium executable")
}

/// One hook process with `input` on stdin; its wall time and stdout length.
fn run_once(exe: &Path, args: &[&str], root: &Path, input: &str) -> (Duration, usize) {
    let started = Instant::now();
    let mut child = Command::new(exe)
        .args(args)
        .arg("--workspace")
        .arg(root)
        .env("SCRIPTORIUM_CONFIG", root.join("no-config.toml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let elapsed = started.elapsed();
    assert!(out.status.success());
    (elapsed, out.stdout.len())
}

fn quantile(sorted: &[Duration], q: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[at.min(sorted.len() - 1)].as_secs_f64() * 1e3
}

fn measure(name: &str, runs: usize, goal: &str, mut once: impl FnMut(usize) -> (Duration, usize)) {
    let mut samples = Vec::with_capacity(runs);
    let mut chars = 0;
    for i in 0..runs {
        let (elapsed, len) = once(i);
        samples.push(elapsed);
        chars = chars.max(len);
    }
    samples.sort();
    println!(
        "{name:<34} p50 {:>7.1} ms  p99 {:>7.1} ms  max {:>7.1} ms  ({runs} runs, ≤ {chars} bytes out; goal {goal})",
        quantile(&samples, 0.5),
        quantile(&samples, 0.99),
        quantile(&samples, 1.0),
    );
}

fn prompt_input(prompt: &str) -> String {
    serde_json::json!({
        "session_id": "bench", "transcript_path": "/nowhere.jsonl", "cwd": "/",
        "hook_event_name": "UserPromptSubmit", "prompt": prompt,
    })
    .to_string()
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let exe = binary();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hook-prompt-bench");
    let root = ws10k_on_disk(&dir).unwrap();
    if !root.join("core.md").exists() {
        let line = "- Ada prefers green tea and reviews the budget tracker every Friday before the April release.\n";
        std::fs::write(root.join("core.md"), format!("# Core\n\n{}", line.repeat(90))).unwrap();
    }
    let prompt_args = ["hook", "claude-code", "user-prompt-submit"];
    // The first prompt builds the retrieval cache; racy fingerprints need 2 s to settle.
    let (first, _) = run_once(&exe, &prompt_args, &root, &prompt_input(PROMPTS[0]));
    println!("first prompt hook (builds the cache): {:.1} ms", first.as_secs_f64() * 1e3);
    std::thread::sleep(Duration::from_millis(2_500));
    run_once(&exe, &prompt_args, &root, &prompt_input(PROMPTS[0]));

    measure("process start (--version)", 100, "-", |_| {
        let started = Instant::now();
        let out = Command::new(&exe).arg("--version").output().unwrap();
        (started.elapsed(), out.stdout.len())
    });
    measure("hook user-prompt-submit (recall)", 200, "p99 ≤ 200 ms", |i| {
        run_once(&exe, &prompt_args, &root, &prompt_input(PROMPTS[i % PROMPTS.len()]))
    });
    let start_input = r#"{"session_id":"bench","hook_event_name":"SessionStart","source":"startup"}"#;
    measure("hook session-start (core.md)", 100, "-", |_| {
        run_once(&exe, &["hook", "claude-code", "session-start"], &root, start_input)
    });
}
