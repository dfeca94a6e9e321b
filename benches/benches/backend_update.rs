//! `memory_update` of one block through a warm `LocalBackend` on ws-10k (issue 16's
//! performance goal): the tool's time against the transaction's own commit of the same
//! edit. Goal: the tool's median ≤ the commit's median + 5 ms.
//!
//! Both sides make the same edit on their own copy of ws-10k: one `create_record` in
//! `topics/bench/updates.md` citing one existing source, history `auto` (the tool always
//! uses `auto`), each based on the revision the previous one returned, as an agent does.
//! The commit side is `Workspace::update` with a `ViewsCache` kept across commits, as a
//! long-lived process keeps it; the tool side adds what the backend does around it (the
//! gate, the caller's authority, parsing the JSON request, the pretty JSON result). Both
//! sides are warmed first (the first commit initializes Git history and every view), and
//! the timed runs alternate between them so the machine's load falls on both alike.
//!
//! Each call is timed twice: wall time, and the process's on-CPU time from the scheduler's
//! own accounting (`/proc/self/task/*/schedstat`, as the commit bench reads it), which a
//! loaded, shared machine disturbs far less than wall time.
//!
//! Knobs: `BACKEND_UPDATE_RUNS` sets the timed runs per side (30);
//! `BACKEND_UPDATE_EDIT=toggle` makes the edit the commit bench's whole-file toggle of one
//! paragraph instead of a record; `BACKEND_UPDATE_COMMIT_GIT=off` turns history off on the
//! commit side only, to see what the history commit costs (the tool cannot turn it off: its
//! history mode is the runtime's, never the caller's); `BACKEND_UPDATE_COMMIT_INDEX=1` has
//! the commit side hold the retrieval index in memory as the warm backend does;
//! `BACKEND_UPDATE_CRITERION=1` also runs criterion groups over the same two calls.
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a bench binary reports its figures")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "a bench fails loudly")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::Criterion;
use scriptorium_backend_api::config::MemoryConfig;
use scriptorium_backend_api::{Caller, LocalBackend, MemoryBackend};
use scriptorium_benches::topics::ws10k_on_disk;
use scriptorium_derived_views::{DerivedViews, ViewsCache};
use scriptorium_transaction::{UpdateRequest, Workspace};
use serde_json::{Value, json};

const DESTINATION: &str = "topics/bench/updates.md";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("backend-update-bench")
}

/// A fresh copy of the pristine ws-10k at `<root>/<name>/memory`.
fn fresh_copy(pristine: &Path, name: &str) -> PathBuf {
    let parent = root().join(name);
    let _ = std::fs::remove_dir_all(&parent);
    std::fs::create_dir_all(&parent).unwrap();
    let target = parent.join("memory");
    let status = Command::new("cp").arg("-a").arg(pristine).arg(&target).status().unwrap();
    assert!(status.success(), "cp -a failed");
    target
}

/// The first source id of the first archive of the workspace (a trusted v2 frame).
fn some_source(dir: &Path) -> String {
    let mut stack = vec![dir.join("sources")];
    let mut archives = Vec::new();
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() { stack.push(path) } else { archives.push(path) }
        }
    }
    archives.sort();
    archives
        .iter()
        .find_map(|path| {
            let text = std::fs::read_to_string(path).ok()?;
            text.lines().find_map(|line| line.strip_prefix("<!-- source-id:")?.strip_suffix(" -->").map(str::to_owned))
        })
        .expect("ws-10k has a v2 source")
}

/// The one-block edit of the commit bench, for `BACKEND_UPDATE_EDIT=toggle`.
const TOGGLED: &str = "topics/people/t0000.md";

/// The model's fields of edit `n` on the workspace at `dir`: one new record citing
/// `source`, or with `BACKEND_UPDATE_EDIT=toggle` the commit bench's whole-file edit (the
/// first paragraph of one topic toggled), to tell the record path's cost from the rest.
fn edit(n: usize, source: &str, dir: &Path) -> Value {
    if std::env::var("BACKEND_UPDATE_EDIT").is_ok_and(|v| v == "toggle") {
        let current = std::fs::read(dir.join(TOGGLED)).unwrap();
        let content = scriptorium_benches::topics::toggle_first_paragraph(&current, "Edited ").unwrap();
        return json!({"changes": [{"path": TOGGLED, "action": "write", "content": content}]});
    }
    json!({"memory_changes": [{
        "op": "create_record", "content": format!("Benchmark fact number {n} about the garden sensor."),
        "time": "2024-05-01", "sources": [{"source": source, "label": "garden"}],
        "destination": {"topic_path": DESTINATION, "headings": ["Bench"], "position": "end"}}]})
}

/// The tool side: a warm backend, the caller, and the revision its last answer gave.
struct Tool {
    backend: LocalBackend,
    caller: Caller,
    revision: String,
}

impl Tool {
    fn new(dir: &Path) -> Tool {
        let revision = Workspace::open(dir).unwrap().revision().unwrap();
        let backend = LocalBackend::new(dir, None, MemoryConfig::default());
        backend.initialize("bench");
        Tool { backend, caller: Caller::local_owner("bench/t1"), revision }
    }

    fn run(&mut self, n: usize, source: &str) -> Sample {
        let mut fields = edit(n, source, self.backend.root());
        fields["base_revision"] = json!(self.revision);
        let (started, cpu) = (Instant::now(), cpu_ns());
        let output = self.backend.call_tool("memory_update", &fields, &self.caller);
        let elapsed = Sample { wall: started.elapsed(), cpu: Duration::from_nanos(cpu_ns() - cpu) };
        let answer: Value = serde_json::from_str(&output).unwrap_or_else(|_| panic!("not JSON: {output}"));
        assert_eq!(answer["ok"], true, "{output}");
        self.revision = answer["revision"].as_str().unwrap().to_owned();
        elapsed
    }
}

/// The commit side: one handle and one views cache kept across commits.
struct Commit {
    /// With `BACKEND_UPDATE_COMMIT_INDEX=1`, the retrieval index the backend also holds
    /// in memory, to see whether its residency alone explains a difference.
    _index: Option<scriptorium_retrieval::Index>,
    workspace: Workspace,
    views: ViewsCache,
    revision: String,
}

impl Commit {
    fn new(dir: &Path) -> Commit {
        let workspace = Workspace::open(dir).unwrap();
        let revision = workspace.revision().unwrap();
        let index = std::env::var("BACKEND_UPDATE_COMMIT_INDEX")
            .is_ok_and(|v| v == "1")
            .then(|| scriptorium_retrieval::Index::open(dir).unwrap());
        Commit { _index: index, workspace, views: ViewsCache::new(DerivedViews::default()), revision }
    }

    fn run(&mut self, n: usize, source: &str) -> Sample {
        let mut fields = edit(n, source, self.workspace.root());
        fields["base_revision"] = json!(self.revision);
        let git = std::env::var("BACKEND_UPDATE_COMMIT_GIT").unwrap_or_else(|_| "auto".to_owned());
        fields["git_commit"] = json!(git);
        let (started, cpu) = (Instant::now(), cpu_ns());
        let request = UpdateRequest::from_json(&fields).unwrap();
        let result = self.workspace.update(&request, &self.views).unwrap_or_else(|e| panic!("update failed: {e}"));
        let elapsed = Sample { wall: started.elapsed(), cpu: Duration::from_nanos(cpu_ns() - cpu) };
        assert!(
            result.changed_files.iter().any(|path| path == DESTINATION || path == TOGGLED),
            "{:?}",
            result.changed_files
        );
        self.revision = result.revision;
        elapsed
    }
}

/// One call's wall and on-CPU time.
#[derive(Clone, Copy)]
struct Sample {
    wall: Duration,
    cpu: Duration,
}

/// On-CPU time of this process's threads, from the scheduler's own accounting (ns).
fn cpu_ns() -> u64 {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let stat = std::fs::read_to_string(task.unwrap().path().join("schedstat")).unwrap_or_default();
        total += stat.split_whitespace().next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(0);
    }
    total
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    let index = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[index]
}

/// Print the median and p90 of `runs`' wall and CPU times; returns both medians.
fn report(label: &str, runs: &[Sample]) -> (Duration, Duration) {
    let mut medians = Vec::new();
    for (kind, pick) in [("wall", (|s: &Sample| s.wall) as fn(&Sample) -> Duration), ("cpu", |s: &Sample| s.cpu)] {
        let mut times: Vec<Duration> = runs.iter().map(pick).collect();
        times.sort();
        let (median, p90) = (quantile(&times, 0.5), quantile(&times, 0.9));
        println!(
            "backend_update: {label:<22} {kind:<4} median {:8.2} ms  p90 {:8.2} ms  ({} runs)",
            ms(median),
            ms(p90),
            times.len()
        );
        medians.push(median);
    }
    (medians[0], medians[1])
}

fn main() {
    let pristine = ws10k_on_disk(&root()).unwrap();
    let source = some_source(&pristine);
    let runs: usize = std::env::var("BACKEND_UPDATE_RUNS").ok().and_then(|n| n.parse().ok()).unwrap_or(30);
    let mut tool = Tool::new(&fresh_copy(&pristine, "tool"));
    let mut commit = Commit::new(&fresh_copy(&pristine, "commit"));
    // Warm both: Git history, every derived view, the committed-topics cache.
    for n in 0..3 {
        tool.run(n, &source);
        commit.run(n, &source);
    }
    let (mut tool_runs, mut commit_runs) = (Vec::new(), Vec::new());
    for n in 3..3 + runs {
        // Alternate which side goes first, so neither always runs on a cache the other warmed.
        if n % 2 == 0 {
            tool_runs.push(tool.run(n, &source));
            commit_runs.push(commit.run(n, &source));
        } else {
            commit_runs.push(commit.run(n, &source));
            tool_runs.push(tool.run(n, &source));
        }
    }
    let (commit_wall, commit_cpu) = report("transaction commit", &commit_runs);
    let (tool_wall, tool_cpu) = report("memory_update (tool)", &tool_runs);
    for (kind, tool, commit) in [("wall", tool_wall, commit_wall), ("cpu", tool_cpu, commit_cpu)] {
        let overhead = ms(tool) - ms(commit);
        let verdict = if overhead <= 5.0 { "meets" } else { "MISSES" };
        println!("backend_update: {kind:<4} tool − commit = {overhead:+.2} ms (goal ≤ +5 ms: {verdict})");
    }

    if std::env::var("BACKEND_UPDATE_CRITERION").is_ok_and(|v| v == "1") {
        let mut criterion = Criterion::default().sample_size(10).configure_from_args();
        let mut group = criterion.benchmark_group("backend_update");
        let mut n = 10_000;
        group.bench_function("memory_update_one_block", |b| {
            b.iter(|| {
                n += 1;
                tool.run(n, &source)
            })
        });
        group.bench_function("transaction_commit_one_block", |b| {
            b.iter(|| {
                n += 1;
                commit.run(n, &source)
            })
        });
        group.finish();
        criterion.final_summary();
    }
}
