//! The transaction commit path (spec 03 P9, P10) on seeded generated workspaces whose
//! topics cite canonical v2 archives written by the real writer.
//!
//! - `update_one_block/*`: a one-block edit through `Workspace::update` on a 10,000-topic
//!   workspace, git off, without and with the derived views (a `ViewsCache` kept across
//!   commits, so the first commit builds every view and later ones patch them). Goals:
//!   ≤ F + 4 fsyncs for F changed files; CPU ≤ 1.5× the revision floor (below).
//! - `git_checkpoint_1k`: `History::prepare` + `publish` of a one-file change on a
//!   1,000-topic workspace. Goal ≤ 20 ms.
//! - `lock_wait_8way`: 8 threads contending on `Workspace::lock`, each holding it for a
//!   real one-file install. Goal p99 wait ≤ 1 s.
//!
//! Before criterion runs, the bench re-executes itself under `strace -f -c` to count the
//! fsyncs of N commits (minus a run of 0 commits, for the open), and reports process CPU
//! per commit from `/proc/self/task/*/schedstat` (on-CPU ns, user + sys, so time blocked
//! in fsync is not counted; the kernel's own CPU inside fsync is).
//!
//! P9's CPU goal (issue 13 §5): CPU per one-block commit ≤ 1.5× the *revision floor*, the
//! stat walk plus re-hashing from the first changed path on, which the `cpu` report
//! measures after every commit in the same process (a second handle's revision, its cache
//! at the tree before the commit) and prints beside the commit figure with the ratio.
//!
//! The generated workspaces are cached in `CARGO_TARGET_TMPDIR/commit-bench/`, keyed by
//! seed and size; each run copies the pristine tree. `COMMIT_BENCH_TOPICS` overrides the
//! 10,000; `COMMIT_BENCH_REPORTS` picks the reports (`cpu,fsync,lock` by default; `none`
//! for criterion only; add `only` to skip criterion); `COMMIT_BENCH_COMMITS` the commits
//! of the `cpu` report (10). `COMMIT_BENCH_ONCE=<derive|none>:<n>` skips criterion and runs n commits in
//! this process on a fresh copy (for `perf record` or callgrind).
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a bench binary reports its figures")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "a bench fails loudly")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use criterion::Criterion;
use scriptorium_benches::topics::{toggle_first_paragraph, topic_workspace};
use scriptorium_derived_views::{DerivedViews, ViewsCache};
use scriptorium_transaction::{
    Changes, Derive, Edit, FileChange, GitMode, History, NoDerivedViews, TopicPath, UpdateRequest, Workspace,
};

const SEED: u64 = 0xc0_3317_be4c_0001;
const TOPICS: usize = 10_000;
const BLOCKS_PER_TOPIC: usize = 3;
const GIT_TOPICS: usize = 1_000;
/// The topic file every one-block edit changes.
const EDITED: &str = "topics/people/t0000.md";
const MARK: &str = "Edited ";
const CONTENDERS: usize = 8;
const LOCKS_PER_CONTENDER: usize = 40;

fn topics_wanted() -> usize {
    std::env::var("COMMIT_BENCH_TOPICS").ok().and_then(|n| n.parse().ok()).unwrap_or(TOPICS)
}

fn cache_root() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("commit-bench")
}

/// The pristine generated workspace for `(seed, topics)`: topics and sources on disk,
/// opened once, derived views built; generated on first use and marked complete last.
fn pristine(seed: u64, topics: usize) -> PathBuf {
    let dir = cache_root().join(format!("pristine-{seed:016x}-{topics}x{BLOCKS_PER_TOPIC}"));
    let marker = dir.join(".bench-complete");
    if marker.exists() {
        return dir;
    }
    let started = Instant::now();
    let _ = std::fs::remove_dir_all(&dir);
    let generated = topic_workspace(seed, topics, BLOCKS_PER_TOPIC);
    let files = generated.sources.files.iter().map(|f| (&f.path, &f.bytes)).chain(generated.topics.iter());
    for (path, bytes) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let workspace = Workspace::open(&dir).unwrap();
    // Two edits that cancel out leave the topics as generated and every derived view built.
    edit_once(&workspace, &DerivedViews::default());
    edit_once(&workspace, &DerivedViews::default());
    std::fs::write(&marker, b"").unwrap();
    eprintln!("commit: generated {} in {:.1} s", dir.display(), started.elapsed().as_secs_f64());
    dir
}

/// A fresh copy of the pristine workspace at `name`.
fn fresh_copy(pristine: &Path, name: &str) -> PathBuf {
    let target = cache_root().join(name);
    let _ = std::fs::remove_dir_all(&target);
    let status = Command::new("cp").arg("-a").arg(pristine).arg(&target).status().unwrap();
    assert!(status.success(), "cp -a failed");
    target
}

/// The edited file with the first paragraph's `MARK` toggled: one block changes.
fn toggled(bytes: &[u8]) -> String {
    toggle_first_paragraph(bytes, MARK).expect("a generated topic file")
}

/// One one-block edit, git off; returns how many files changed.
fn edit_once(workspace: &Workspace, derive: &dyn Derive) -> usize {
    edit_at(workspace, workspace.revision().unwrap(), derive).0
}

/// One one-block edit based on `base` (as an agent bases it on its last result), git
/// off; returns how many files changed and the revision after it.
fn edit_at(workspace: &Workspace, base: String, derive: &dyn Derive) -> (usize, String) {
    let current = std::fs::read(workspace.root().join(EDITED)).unwrap();
    let change = FileChange { path: TopicPath::new(EDITED).unwrap(), content: Some(toggled(&current)) };
    let mut request = UpdateRequest::new(base, Edit::Changes(vec![change]));
    request.git_commit = GitMode::Off;
    let result = workspace.update(&request, derive).unwrap_or_else(|error| panic!("update failed: {error}"));
    assert!(result.changed_files.iter().any(|path| path == EDITED), "{:?}", result.changed_files);
    (result.changed_files.len(), result.revision)
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

fn derive_named(name: &str) -> Box<dyn Derive> {
    // A long-lived writer keeps its views cache across commits, as the backend does.
    if name == "derive" { Box::new(ViewsCache::new(DerivedViews::default())) } else { Box::new(NoDerivedViews) }
}

/// Per-commit figures of one child run (ns, one entry per commit).
#[derive(Default)]
struct Figures {
    changed: usize,
    cpu: Vec<u64>,
    wall: Vec<u64>,
    floor: Vec<u64>,
}

/// `n` commits (`Workspace::update` calls, each based on the last one's revision) on the
/// workspace at `dir` after one that warms the caches, each followed by the revision floor: a second
/// handle's `Workspace::revision`, whose cache is at the tree before that commit, so it
/// does exactly what a revision after the commit must minimally do (the stat walk of the
/// listing plus re-hashing from the first changed path on). Same process, same warm tree.
fn run_commits(dir: &Path, derive: &str, n: usize) -> Figures {
    let workspace = Workspace::open(dir).unwrap();
    let observer = Workspace::open(dir).unwrap();
    let derive = derive_named(derive);
    let mut figures = Figures::default();
    // The first commit of a handle loads its caches (a parse of every topic): not the
    // steady state, so it is left out of the figures (and of the fsync counts, which
    // subtract a run of 0 commits).
    edit_once(&workspace, derive.as_ref());
    let mut revision = observer.revision().unwrap();
    for _ in 0..n {
        let (c0, w0) = (cpu_ns(), Instant::now());
        let (changed, after) = edit_at(&workspace, revision, derive.as_ref());
        figures.cpu.push(cpu_ns() - c0);
        figures.wall.push(w0.elapsed().as_nanos() as u64);
        figures.changed += changed;
        let f0 = cpu_ns();
        revision = observer.revision().unwrap();
        figures.floor.push(cpu_ns() - f0);
        assert_eq!(revision, after, "the floor hashed another tree");
    }
    for v in [&mut figures.cpu, &mut figures.wall, &mut figures.floor] {
        v.sort_unstable();
    }
    figures
}

fn median_ms(sorted: &[u64]) -> f64 {
    sorted.get(sorted.len() / 2).copied().unwrap_or(0) as f64 / 1e6
}

fn min_ms(sorted: &[u64]) -> f64 {
    sorted.first().copied().unwrap_or(0) as f64 / 1e6
}

/// The child run: `n` commits on the workspace at `dir`; prints changed files, CPU and the floor.
fn child(dir: &Path, derive: &str, n: usize) {
    let f = run_commits(dir, derive, n);
    println!(
        "changed={} cpu_ms_median={:.2} cpu_ms_min={:.2} wall_ms_median={:.2} wall_ms_min={:.2} \
         floor_ms_median={:.2} floor_ms_min={:.2}",
        f.changed,
        median_ms(&f.cpu),
        min_ms(&f.cpu),
        median_ms(&f.wall),
        min_ms(&f.wall),
        median_ms(&f.floor),
        min_ms(&f.floor)
    );
}

/// Goal P9 (CPU), outside criterion and strace: CPU per one-block commit against the
/// revision floor measured beside it in the same process on the same workspace.
fn report_cpu(pristine: &Path, topics: usize) {
    let n: usize = std::env::var("COMMIT_BENCH_COMMITS").ok().and_then(|n| n.parse().ok()).unwrap_or(10);
    for derive in ["none", "derive"] {
        let dir = fresh_copy(pristine, &format!("cpu-{derive}"));
        let f = run_commits(&dir, derive, n);
        let (cpu, floor) = (median_ms(&f.cpu), median_ms(&f.floor));
        println!(
            "commit: {topics} topics, derive={derive}: CPU {cpu:.1} ms/commit (median of {}, min {:.1}; on-CPU \
             user+sys), revision floor {floor:.1} ms (min {:.1}), ratio {:.2} (goal ≤ 1.5)",
            f.cpu.len(),
            min_ms(&f.cpu),
            min_ms(&f.floor),
            cpu / floor
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// fsync + fdatasync calls and their total wall seconds, from an `strace -c -w` summary.
fn strace_fsyncs(summary: &str) -> (u64, f64) {
    let mut calls = 0;
    let mut seconds = 0.0;
    for line in summary.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if matches!(fields.last(), Some(&"fsync") | Some(&"fdatasync")) && fields.len() >= 5 {
            seconds += fields[1].parse::<f64>().unwrap_or(0.0);
            calls += fields[3].parse::<u64>().unwrap_or(0);
        }
    }
    (calls, seconds)
}

/// Run the child under strace on a fresh copy; returns (fsyncs, fsync seconds, child stdout).
fn traced_child(pristine: &Path, derive: &str, n: usize) -> (u64, f64, String) {
    let dir = fresh_copy(pristine, &format!("traced-{derive}"));
    let summary = dir.with_extension("strace");
    let output = Command::new("strace")
        .args(["-f", "-c", "-w", "-e", "trace=fsync,fdatasync", "-o"])
        .arg(&summary)
        .arg(std::env::current_exe().unwrap())
        .env("COMMIT_BENCH_CHILD", format!("{derive}:{n}:{}", dir.display()))
        .output()
        .expect("strace is installed");
    assert!(output.status.success(), "child failed: {}", String::from_utf8_lossy(&output.stderr));
    let (calls, seconds) = strace_fsyncs(&std::fs::read_to_string(&summary).unwrap());
    (calls, seconds, String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// Goal (a), outside criterion: fsyncs and CPU per commit.
fn report_fsyncs(pristine: &Path, topics: usize) {
    const N: usize = 10;
    for derive in ["none", "derive"] {
        let (base, _, _) = traced_child(pristine, derive, 0);
        let (calls, seconds, out) = traced_child(pristine, derive, N);
        let changed: f64 = out
            .split_whitespace()
            .find_map(|field| field.strip_prefix("changed="))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0.0);
        println!(
            "commit: {topics} topics, derive={derive}: {:.1} fsyncs/commit for {:.1} changed files \
             (goal ≤ F + 4), {:.2} ms in fsync/commit; {out} (per commit, under strace)",
            (calls - base) as f64 / N as f64,
            changed / N as f64,
            seconds * 1e3 / N as f64,
        );
    }
}

fn bench_update(c: &mut Criterion, pristine: &Path, topics: usize) {
    let mut group = c.benchmark_group("commit");
    group.sample_size(10);
    for derive in ["none", "derive"] {
        let dir = fresh_copy(pristine, &format!("criterion-{derive}"));
        let workspace = Workspace::open(&dir).unwrap();
        let derive_step = derive_named(derive);
        group.bench_function(format!("update_one_block_{topics}topics_{derive}"), |b| {
            b.iter(|| edit_once(&workspace, derive_step.as_ref()))
        });
    }
    group.finish();
}

fn bench_git(c: &mut Criterion) {
    let dir = fresh_copy(&pristine(SEED ^ 1, GIT_TOPICS), "git");
    let workspace = Workspace::open(&dir).unwrap();
    let lock = workspace.lock(Duration::from_secs(10)).unwrap();
    let history = History::open_or_init(&dir).unwrap();
    let files = walk_count(&dir.join("topics")) + walk_count(&dir.join("sources"));
    let mut group = c.benchmark_group("commit");
    group.sample_size(20);
    group.bench_function(format!("git_checkpoint_{files}files"), |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                let bytes = toggled(&std::fs::read(dir.join(EDITED)).unwrap()).into_bytes();
                let changes: Changes = BTreeMap::from([(EDITED.to_owned(), Some(bytes))]);
                let started = Instant::now();
                let prepared = history.prepare("bench", &changes).unwrap().expect("a change");
                prepared.publish().unwrap();
                spent += started.elapsed();
                // The install the commit describes, outside the timing.
                workspace.install(&lock, &changes).unwrap();
            }
            spent
        })
    });
    group.finish();
}

fn walk_count(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries.flatten().map(|entry| if entry.path().is_dir() { walk_count(&entry.path()) } else { 1 }).sum()
        })
        .unwrap_or(0)
}

/// Goal (c): 8 threads, each with its own handle, take the lock and hold it for a real
/// one-file install; report the wait distribution. `think` is the pause between a
/// release and the next attempt (random up to that many ms): 0 is the adversarial tight
/// loop where the releaser re-locks before any sleeping waiter wakes.
fn report_lock_wait(pristine: &Path, think_ms: u64) {
    let dir = fresh_copy(pristine, "contention");
    let barrier = Arc::new(Barrier::new(CONTENDERS));
    let handles: Vec<_> = (0..CONTENDERS)
        .map(|n| {
            let (dir, barrier) = (dir.clone(), barrier.clone());
            std::thread::spawn(move || {
                let workspace = Workspace::open(&dir).unwrap();
                let path = format!("topics/home/contender{n}.md");
                let (mut waits, mut holds) = (Vec::new(), Vec::new());
                barrier.wait();
                for round in 0..LOCKS_PER_CONTENDER {
                    let started = Instant::now();
                    let lock = workspace.lock(Duration::from_secs(10)).unwrap();
                    let locked = Instant::now();
                    waits.push(locked - started);
                    let bytes = format!("# Contender {n}\n\nRound {round}.\n").into_bytes();
                    let changes: Changes = BTreeMap::from([(path.clone(), Some(bytes))]);
                    workspace.install(&lock, &changes).unwrap();
                    drop(lock);
                    holds.push(locked.elapsed());
                    if think_ms > 0 {
                        // A cheap per-thread jitter: the round and the thread id, mixed.
                        let mix = (n as u64 * 0x9e37_79b9 + round as u64 * 0x85eb_ca6b) % 1000;
                        std::thread::sleep(Duration::from_micros(mix * think_ms));
                    }
                }
                (waits, holds)
            })
        })
        .collect();
    let (mut waits, mut holds): (Vec<Duration>, Vec<Duration>) = (Vec::new(), Vec::new());
    for handle in handles {
        let (w, h) = handle.join().unwrap();
        waits.extend(w);
        holds.extend(h);
    }
    waits.sort_unstable();
    holds.sort_unstable();
    let at = |sorted: &[Duration], q: f64| sorted[((sorted.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e3;
    // A fair lock bounds a wait by the holds ahead of it: (CONTENDERS - 1) × a hold, so
    // the holds are printed too (a slow fsync on a shared disk shows there, not as unfairness).
    println!(
        "commit: lock wait at {CONTENDERS}-way contention ({} acquisitions, hold = one-file install, \
         think 0-{think_ms} ms): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms (goal p99 ≤ 1000 ms); \
         hold p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        waits.len(),
        at(&waits, 0.5),
        at(&waits, 0.99),
        at(&waits, 1.0),
        at(&holds, 0.5),
        at(&holds, 0.99),
        at(&holds, 1.0)
    );
}

fn main() {
    if let Ok(spec) = std::env::var("COMMIT_BENCH_CHILD") {
        let mut parts = spec.splitn(3, ':');
        let (derive, n, dir) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
        child(Path::new(dir), derive, n.parse().unwrap());
        return;
    }
    let topics = topics_wanted();
    let pristine_dir = pristine(SEED, topics);
    if let Ok(spec) = std::env::var("COMMIT_BENCH_ONCE") {
        let (derive, n) = spec.split_once(':').unwrap_or((spec.as_str(), "1"));
        let dir = fresh_copy(&pristine_dir, "once");
        child(&dir, derive, n.parse().unwrap_or(1));
        return;
    }
    let reports = std::env::var("COMMIT_BENCH_REPORTS").unwrap_or_else(|_| "cpu,fsync,lock".to_owned());
    if reports.contains("cpu") {
        report_cpu(&pristine_dir, topics);
    }
    if reports.contains("fsync") {
        report_fsyncs(&pristine_dir, topics);
    }
    if reports.contains("lock") {
        report_lock_wait(&pristine_dir, 0);
        report_lock_wait(&pristine_dir, 20);
    }
    if reports.contains("only") {
        return;
    }
    let mut criterion = Criterion::default().configure_from_args();
    bench_git(&mut criterion);
    bench_update(&mut criterion, &pristine_dir, topics);
    criterion.final_summary();
}
