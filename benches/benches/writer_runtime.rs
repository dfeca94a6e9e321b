//! The writer runtime (issue 14's goals), timed directly (medians of repeated runs):
//!
//! - `pending_suffix_10k`: the pending suffix of a 10,000-node branch in a 100,000-node
//!   SQLite session store as a pass computes it (`pending_suffix`: the walk over ids and
//!   markers, then the nodes, records and tokens as far as the first 16k-token batch
//!   reaches), with nothing and with all but 100 nodes marked. Goal ≤ 5 ms.
//! - `mark_16k_tokens`: marking a 16,000-token batch in one metadata merge. Goal ≤ 5 ms.
//! - `write_pass_ws10k`: one forced write pass on ws-10k (10,000 topics) with a bench
//!   writer that makes one commit; the runtime's own cost is the pass minus that commit.
//!   Goal ≤ 1.5× the commit.
//! - `store_peak_rss`: a child process that opens the 100k-node store, reads the branch
//!   and marks a batch (no tokenizer, no workspace) reports its peak RSS. Goal ≤ 64 MB.
//!
//! The store and the workspace are generated into `CARGO_TARGET_TMPDIR/writer-bench/`.
//! `-- --store-only` skips the write passes.
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a bench binary reports its figures")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "a bench fails loudly")]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use scriptorium_archive_format::{source_anchor, v2_location};
use scriptorium_benches::topics::topic_workspace;
use scriptorium_transaction::{Edit, FileChange, TopicPath, Workspace};
use scriptorium_writer_runtime::{
    AgentError, Clock, MARKER_KEY, Message, MetadataPatches, Runtime, RuntimeConfig, SessionStore, SqliteStore,
    Timestamp, WriterAgent, WriterReport, WriterStage, WriterTask, pending_suffix, records,
};
use serde_json::{Map, json};

const NODES_PER_SESSION: usize = 10_000;
const SESSIONS: usize = 10;
const T0: f64 = 1_714_557_600.0;
const ROLE_ENV: &str = "WRITER_BENCH_ROLE";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("writer-bench")
}

fn turn(id: &str, predecessor: Option<&str>, index: usize, words: usize) -> Message {
    let mut message = Message::text(
        id,
        if index.is_multiple_of(2) { "user" } else { "assistant" },
        format!("turn {id}{}", " word".repeat(words)),
    );
    message.predecessor = predecessor.map(str::to_owned);
    message.timestamp = Timestamp::Unix(T0 + index as f64);
    let authority = json!({"authority_schema": 1, "speaker_kind": "owner", "speaker_id": "owner/local",
        "speaker_display": "Owner", "principal_id": "owner", "authority_tier": "owner", "interaction": "interactive"});
    message.metadata = authority.as_object().cloned().unwrap();
    message
}

/// The 100k-node store: 10 sessions, each one 10,000-node chain of ~100-token turns.
fn store_path() -> PathBuf {
    let path = root().join("sessions-100k.sqlite3");
    let marker = root().join("sessions-100k.complete");
    if marker.exists() {
        return path;
    }
    std::fs::create_dir_all(root()).unwrap();
    let _ = std::fs::remove_file(&path);
    let started = Instant::now();
    let store = SqliteStore::open(&path).unwrap();
    for session in 0..SESSIONS {
        let mut nodes = Vec::with_capacity(NODES_PER_SESSION);
        for index in 0..NODES_PER_SESSION {
            let previous = (index > 0).then(|| format!("n{}", index - 1));
            nodes.push(turn(&format!("n{index}"), previous.as_deref(), index, 96));
        }
        store.append(&format!("s{session}"), &nodes, T0).unwrap();
    }
    std::fs::write(&marker, b"").unwrap();
    eprintln!("writer_runtime: generated 100k-node store in {:.1} s", started.elapsed().as_secs_f64());
    path
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// This thread's CPU time so far (the scheduler's `sum_exec_runtime`, in ns): on a
/// shared machine the wall clock also counts the time other processes ran.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    Duration::from_nanos(stat.split_whitespace().next().and_then(|ns| ns.parse().ok()).unwrap_or(0))
}

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The mean CPU time of `runs` runs of `work` (the scheduler's count is exact only over
/// many ticks, so one run is not timed alone).
fn mean_cpu(runs: u32, mut work: impl FnMut()) -> Duration {
    let cpu = cpu_time();
    for _ in 0..runs {
        work();
    }
    (cpu_time() - cpu) / runs
}

/// The pending suffix as a pass computes it, timed: wall median, then mean CPU of the
/// whole, of the walk alone and of building the records and counting their tokens.
fn suffix_figures(store: &SqliteStore, session: &str, workspace_id: &str) -> [Duration; 4] {
    let wall = median(
        (0..15)
            .map(|_| {
                let started = Instant::now();
                pending_suffix(store, session, None, workspace_id, 16_000, 0).unwrap();
                started.elapsed()
            })
            .collect(),
    );
    let total = mean_cpu(40, || drop(pending_suffix(store, session, None, workspace_id, 16_000, 0).unwrap()));
    let walk = mean_cpu(40, || drop(store.get_unmarked_suffix_ids(session, None, MARKER_KEY, workspace_id).unwrap()));
    let rows = pending_suffix(store, session, None, workspace_id, 16_000, 0).unwrap().rows;
    let counting = mean_cpu(40, || {
        let mut sum = 0;
        let _ = records(session, &rows, 0).unwrap().iter().any(|record| {
            sum += record.tokens();
            sum >= 16_000
        });
    });
    [wall, total, walk, counting]
}

fn mark(store: &SqliteStore, session: &str, from: usize, count: usize) -> Duration {
    let mut marker = Map::new();
    marker.insert(MARKER_KEY.to_owned(), json!("w-0badbeef"));
    let patches: MetadataPatches = (from..from + count).map(|i| (format!("n{i}"), marker.clone())).collect();
    let started = Instant::now();
    store.merge_node_metadata_batch(session, &patches).unwrap();
    started.elapsed()
}

struct FixedClock(f64);

impl Clock for FixedClock {
    fn now(&self) -> f64 {
        self.0
    }
}

/// The bench's writer: one commit of one paragraph per record, timed (wall and CPU).
struct BenchWriter {
    commit: Mutex<Duration>,
    commit_cpu: Mutex<Duration>,
}

impl WriterAgent for BenchWriter {
    fn run(&self, task: &WriterTask<'_>, stage: &mut WriterStage<'_>) -> Result<WriterReport, AgentError> {
        if task.records.is_empty() {
            return Ok(WriterReport::default());
        }
        let mut text = String::from("# Bench\n");
        for record in task.records {
            let id = record.source.source_id();
            let label = record.node_id();
            text.push_str(&format!(
                "\nSaid {label}.[^b-{label}]\n\n[^b-{label}]: Time: `2024-05-01`; Sources: [{id}](../{}#{})\n",
                v2_location(&id).unwrap(),
                source_anchor(&id)
            ));
        }
        // One new file per batch (its thread), so no committed block id is dropped.
        let path = format!("topics/writer-bench-{}.md", task.records[0].source.thread_id);
        let change = FileChange { path: TopicPath::new(&path).unwrap(), content: Some(text) };
        let (started, cpu) = (Instant::now(), cpu_time());
        stage.commit(Edit::Changes(vec![change])).map_err(|e| AgentError::new(Default::default(), e.to_string()))?;
        *self.commit.lock().unwrap() += started.elapsed();
        *self.commit_cpu.lock().unwrap() += cpu_time() - cpu;
        Ok(WriterReport::default())
    }
}

/// ws-10k: the commit bench's generated 10,000-topic workspace, opened once.
fn workspace_10k() -> PathBuf {
    let dir = root().join("ws-10k");
    let marker = root().join("ws-10k.complete");
    if !marker.exists() {
        let _ = std::fs::remove_dir_all(&dir);
        let generated = topic_workspace(0xc0_3317_be4c_0001, 10_000, 3);
        let files = generated.sources.files.iter().map(|f| (&f.path, &f.bytes)).chain(generated.topics.iter());
        for (path, bytes) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        drop(Workspace::open(&dir).unwrap());
        std::fs::write(&marker, b"").unwrap();
    }
    let copy = root().join("ws-10k-run");
    let _ = std::fs::remove_dir_all(&copy);
    assert!(std::process::Command::new("cp").arg("-a").arg(&dir).arg(&copy).status().unwrap().success());
    copy
}

fn write_passes() {
    let memory = workspace_10k();
    let sessions = root().join("pass-sessions.sqlite3");
    let _ = std::fs::remove_file(&sessions);
    let store = Arc::new(SqliteStore::open(&sessions).unwrap());
    let writer = Arc::new(BenchWriter { commit: Mutex::new(Duration::ZERO), commit_cpu: Mutex::new(Duration::ZERO) });
    let config = RuntimeConfig { trigger_tokens: 16_000, ..RuntimeConfig::default() };
    let workspace = Workspace::open(&memory).unwrap();
    let runtime = Runtime::new(workspace, store.clone(), writer.clone(), Arc::new(FixedClock(T0 + 100.0)), config);
    let mut totals = Vec::new();
    let mut commits = Vec::new();
    let (mut totals_cpu, mut commits_cpu) = (Vec::new(), Vec::new());
    for pass in 0..6 {
        // ~16k tokens: 160 turns of ~100 tokens.
        let session = format!("p{pass}");
        let nodes: Vec<Message> = (0..160)
            .map(|i| turn(&format!("n{i}"), (i > 0).then(|| format!("n{}", i - 1)).as_deref(), i, 96))
            .collect();
        store.append(&session, &nodes, T0).unwrap();
        *writer.commit.lock().unwrap() = Duration::ZERO;
        *writer.commit_cpu.lock().unwrap() = Duration::ZERO;
        let (started, cpu) = (Instant::now(), cpu_time());
        assert_eq!(runtime.hook(&session, None, true), None);
        let (total, total_cpu) = (started.elapsed(), cpu_time() - cpu);
        // The first pass pays for loading the tokenizer and the organize pass setup.
        if pass > 0 {
            totals.push(total);
            commits.push(*writer.commit.lock().unwrap());
            totals_cpu.push(total_cpu);
            commits_cpu.push(*writer.commit_cpu.lock().unwrap());
        }
    }
    let (total, commit) = (median(totals), median(commits));
    let own = total.saturating_sub(commit);
    let (total_cpu, commit_cpu) = (median(totals_cpu), median(commits_cpu));
    let own_cpu = total_cpu.saturating_sub(commit_cpu);
    println!(
        "write_pass_ws10k: pass {:.1} ms, commit {:.1} ms, runtime's own {:.1} ms = {:.2}x the commit (goal ≤ 1.5x); CPU: pass {:.1} ms, commit {:.1} ms, own {:.1} ms = {:.2}x",
        ms(total),
        ms(commit),
        ms(own),
        own.as_secs_f64() / commit.as_secs_f64(),
        ms(total_cpu),
        ms(commit_cpu),
        ms(own_cpu),
        own_cpu.as_secs_f64() / commit_cpu.as_secs_f64()
    );
}

fn store_rss_child(path: &Path) {
    let store = SqliteStore::open(path).unwrap();
    let rows = store.get_branch("s1", None).unwrap();
    assert_eq!(rows.len(), NODES_PER_SESSION);
    drop(rows);
    mark(&store, "s1", 0, 160);
    println!("{}", peak_rss_kib());
}

fn main() {
    let path = store_path();
    if std::env::var(ROLE_ENV).as_deref() == Ok("store-rss") {
        store_rss_child(&path);
        return;
    }
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let store = SqliteStore::open(&path).unwrap();
    let nodes: usize = (0..SESSIONS).map(|s| store.get_messages(&format!("s{s}")).unwrap().len()).sum();
    // Warm the tokenizer outside the timings.
    let _ = records("s0", &store.get_branch("s0", Some("n0")).unwrap(), 0).unwrap();
    // s3: all but the newest 100 turns marked, the usual shape after a few passes.
    let suffix_len = |session: &str| pending_suffix(&store, session, None, "w-0badbeef", 16_000, 0).unwrap().ids.len();
    if suffix_len("s3") != 100 {
        mark(&store, "s3", 0, NODES_PER_SESSION - 100);
    }
    for (session, shape) in [("s0", "nothing marked"), ("s3", "9,900 marked")] {
        let [wall, cpu, walk, counting] = suffix_figures(&store, session, "w-0badbeef");
        let pending = pending_suffix(&store, session, None, "w-0badbeef", 16_000, 0).unwrap();
        println!(
            "pending_suffix_10k ({shape}): {:.2} ms CPU, {:.2} ms wall (walk {:.2} ms CPU, records and o200k counting {:.2} ms CPU), {} pending of a 10k branch in a {nodes}-node store, {} nodes loaded (goal ≤ 5 ms)",
            ms(cpu),
            ms(wall),
            ms(walk),
            ms(counting),
            pending.ids.len(),
            pending.rows.len()
        );
    }
    let marks: Vec<Duration> = (0..15).map(|i| mark(&store, "s2", i * 160, 160)).collect();
    let mut next = 15;
    let mark_cpu = mean_cpu(40, || {
        mark(&store, "s2", next * 160, 160);
        next += 1;
    });
    println!(
        "mark_16k_tokens: {:.2} ms CPU, {:.2} ms wall for 160 nodes of ~100 tokens (goal ≤ 5 ms)",
        ms(mark_cpu),
        ms(median(marks))
    );
    let child =
        std::process::Command::new(std::env::current_exe().unwrap()).env(ROLE_ENV, "store-rss").output().unwrap();
    let rss: u64 = String::from_utf8_lossy(&child.stdout).trim().parse().unwrap_or(0);
    println!("store_peak_rss: {:.1} MB (goal ≤ 64 MB)", rss as f64 / 1024.0);
    if !std::env::args().any(|arg| arg == "--store-only") {
        write_passes();
    }
}
