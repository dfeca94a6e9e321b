//! `scriptorium serve` on ws-10k, as a process on loopback (issue 17's HTTP figures).
//!
//! 1. One-block `memory_update` through the server (`POST /api/tools/memory_update`, one
//!    `create_record` citing an existing source, each based on the revision the last one
//!    returned) against the *revision floor* measured after each one in this process: a
//!    second handle's `Workspace::revision`, whose cache is at the tree before the update,
//!    so it does what a revision after the update must minimally do (the stat walk plus
//!    re-hashing from the changed path on). Goal: the server's update ≤ 1.2× the floor.
//!    The server's CPU is read from `/proc/<pid>/task/*/schedstat`, the floor's from this
//!    process's own, so a loaded machine disturbs the ratio less than wall time.
//! 2. A load run: 32 clients mixing recall, reads, status and one-block updates for
//!    `HTTP_LOAD_SECONDS` (10); requests/s and p50/p99 per route, updates acknowledged and
//!    refused (409).
//!
//! Needs the release binary: `cargo build --release -p scriptorium-cli`, then
//! `cargo bench -p scriptorium-benches --bench http_load` (or point `SCRIPTORIUM_BIN` at
//! a binary). `HTTP_UPDATE_RUNS` sets the timed updates (30).
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a bench binary reports its figures")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "a bench fails loudly")]

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use scriptorium_benches::topics::ws10k_on_disk;
use scriptorium_transaction::Workspace;
use serde_json::{Value, json};

const DESTINATION: &str = "topics/bench/updates.md";
const CLIENTS: usize = 32;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("http-load-bench")
}

fn binary() -> PathBuf {
    let path = std::env::var_os("SCRIPTORIUM_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/scriptorium"));
    assert!(path.exists(), "{} is missing: run `cargo build --release -p scriptorium-cli` first", path.display());
    path
}

fn fresh_copy(pristine: &Path, name: &str) -> PathBuf {
    let parent = root().join(name);
    let _ = std::fs::remove_dir_all(&parent);
    std::fs::create_dir_all(&parent).unwrap();
    let target = parent.join("memory");
    assert!(Command::new("cp").arg("-a").arg(pristine).arg(&target).status().unwrap().success());
    target
}

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

struct Server {
    child: Child,
    addr: SocketAddr,
    token: String,
}

impl Server {
    fn start(workspace: &Path) -> Server {
        let home = workspace.parent().unwrap();
        let mut child = Command::new(binary())
            .args(["serve", "--addr", "127.0.0.1:0", "--workspace"])
            .arg(workspace)
            .env("HOME", home)
            .env("SCRIPTORIUM_CONFIG", home.join("no-config.toml"))
            .env_remove("SCRIPTORIUM_BACKEND")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let addr = loop {
            let line = lines.next().expect("serve printed its address").unwrap();
            if let Some(addr) = line.strip_prefix("scriptorium serve: listening on http://") {
                break addr.parse().unwrap();
            }
        };
        // Keep draining stderr so the server never blocks on it.
        std::thread::spawn(move || for _ in lines {});
        let token = std::fs::read_to_string(workspace.join(".scriptorium/http-token")).unwrap().trim().to_owned();
        Server { child, addr, token }
    }

    fn call(&self, method: &str, target: &str, body: Option<&Value>) -> (u16, Value) {
        let mut stream = TcpStream::connect(self.addr).unwrap();
        let text = body.map(Value::to_string).unwrap_or_default();
        let head = format!(
            "{method} {target} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.addr,
            self.token,
            text.len()
        );
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(text.as_bytes()).unwrap();
        let mut bytes = Vec::new();
        stream.read_to_end(&mut bytes).unwrap();
        let split = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let status = std::str::from_utf8(&bytes[..split]).unwrap().split(' ').nth(1).unwrap().parse().unwrap();
        (status, serde_json::from_slice(&bytes[split + 4..]).unwrap_or(Value::Null))
    }

    /// The server's on-CPU nanoseconds so far, every thread.
    fn cpu_ns(&self) -> u64 {
        tasks_cpu(&format!("/proc/{}/task", self.child.id()))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let _ = self.child.wait();
    }
}

fn tasks_cpu(dir: &str) -> u64 {
    let Ok(tasks) = std::fs::read_dir(dir) else { return 0 };
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

fn edit(n: usize, source: &str, revision: &str) -> Value {
    json!({"base_revision": revision, "memory_changes": [{
        "op": "create_record", "content": format!("Benchmark fact number {n} about the garden sensor."),
        "time": "2024-05-01", "sources": [{"source": source, "label": "garden"}],
        "destination": {"topic_path": DESTINATION, "headings": ["Bench"], "position": "end"}}]})
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    sorted[(((sorted.len() as f64) * q).ceil() as usize).saturating_sub(1).min(sorted.len() - 1)]
}

fn update_figures(pristine: &Path, source: &str) {
    let runs: usize = std::env::var("HTTP_UPDATE_RUNS").ok().and_then(|n| n.parse().ok()).unwrap_or(30);
    let dir = fresh_copy(pristine, "update");
    let server = Server::start(&dir);
    let observer = Workspace::open(&dir).unwrap();
    let mut revision = observer.revision().unwrap();
    let (mut wall, mut cpu, mut floor_wall, mut floor_cpu) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for n in 0..3 + runs {
        let (c0, w0) = (server.cpu_ns(), Instant::now());
        let (status, answer) = server.call("POST", "/api/tools/memory_update", Some(&edit(n, source, &revision)));
        let (w, c) = (w0.elapsed(), server.cpu_ns() - c0);
        assert_eq!(status, 200, "{answer}");
        let after = answer["revision"].as_str().unwrap().to_owned();
        let (f0, fw) = (tasks_cpu("/proc/self/task"), Instant::now());
        revision = observer.revision().unwrap();
        let (fw, fc) = (fw.elapsed(), tasks_cpu("/proc/self/task") - f0);
        assert_eq!(revision, after, "the floor hashed another tree");
        // The first updates warm Git history, every view and the committed-topics cache.
        if n >= 3 {
            wall.push(w);
            cpu.push(Duration::from_nanos(c));
            floor_wall.push(fw);
            floor_cpu.push(Duration::from_nanos(fc));
        }
    }
    for v in [&mut wall, &mut cpu, &mut floor_wall, &mut floor_cpu] {
        v.sort_unstable();
    }
    let median = |v: &[Duration]| quantile(v, 0.5);
    println!(
        "http_update: {runs} one-block memory_update via HTTP on ws-10k: wall p50 {:.1} ms p99 {:.1} ms, server CPU p50 {:.1} ms",
        ms(median(&wall)),
        ms(quantile(&wall, 0.99)),
        ms(median(&cpu))
    );
    println!(
        "http_update: revision floor (stat walk + re-hash from the changed path): wall p50 {:.1} ms, CPU p50 {:.1} ms",
        ms(median(&floor_wall)),
        ms(median(&floor_cpu))
    );
    for (kind, a, b) in [("wall", median(&wall), median(&floor_wall)), ("cpu", median(&cpu), median(&floor_cpu))] {
        let ratio = a.as_secs_f64() / b.as_secs_f64().max(1e-9);
        let verdict = if ratio <= 1.2 { "meets" } else { "MISSES" };
        println!("http_update: {kind:<4} server update / floor = {ratio:.2} (goal ≤ 1.2: {verdict})");
    }
}

/// One client's latencies per route, then its acknowledged updates, conflicts and other failures.
type ClientTally = (BTreeMap<&'static str, Vec<Duration>>, usize, usize, usize);

fn load_figures(pristine: &Path, source: &str) {
    let seconds: u64 = std::env::var("HTTP_LOAD_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
    let dir = fresh_copy(pristine, "load");
    let server = Server::start(&dir);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let all: Vec<ClientTally> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let server = &server;
                scope.spawn(move || {
                    let (mut lat, mut acked, mut conflicts, mut other) = (BTreeMap::new(), 0, 0, 0);
                    let mut n = 0;
                    while Instant::now() < deadline {
                        n += 1;
                        let mut timed = |route: &'static str, method: &str, target: &str, body: Option<&Value>| {
                            let t = Instant::now();
                            let reply = server.call(method, target, body);
                            lat.entry(route).or_insert_with(Vec::new).push(t.elapsed());
                            reply
                        };
                        match n % 4 {
                            0 => {
                                let (s, _) = timed("recall", "GET", "/api/memory/recall?q=garden%20sensor", None);
                                other += usize::from(s != 200);
                            }
                            1 => {
                                let (s, _) = timed("read", "GET", "/api/memory/topics/people/t0000.md", None);
                                other += usize::from(s != 200);
                            }
                            _ => {
                                let (_, status) = timed("status", "POST", "/api/tools/memory_status", Some(&json!({})));
                                let revision = status["revision"].as_str().unwrap_or_default().to_owned();
                                let body = edit(c * 1_000_000 + n, source, &revision);
                                match timed("update", "POST", "/api/tools/memory_update", Some(&body)) {
                                    (200, _) => acked += 1,
                                    (409, _) => conflicts += 1,
                                    _ => other += 1,
                                }
                            }
                        }
                    }
                    (lat, acked, conflicts, other)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let elapsed = started.elapsed().as_secs_f64();
    let mut latencies: BTreeMap<&str, Vec<Duration>> = BTreeMap::new();
    let (mut acked, mut conflicts, mut other) = (0, 0, 0);
    for (lat, a, c, o) in all {
        for (route, list) in lat {
            latencies.entry(route).or_default().extend(list);
        }
        (acked, conflicts, other) = (acked + a, conflicts + c, other + o);
    }
    let total: usize = latencies.values().map(Vec::len).sum();
    println!(
        "http_load: {CLIENTS} clients on ws-10k for {elapsed:.1} s: {total} requests, {:.0} req/s; updates acked {acked}, 409 {conflicts}, other failures {other}",
        total as f64 / elapsed
    );
    for (route, list) in &mut latencies {
        list.sort_unstable();
        println!(
            "http_load: {route:<7} {:>6} requests {:>7.1} req/s  p50 {:>8.2} ms  p99 {:>8.2} ms",
            list.len(),
            list.len() as f64 / elapsed,
            ms(quantile(list, 0.5)),
            ms(quantile(list, 0.99))
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a plain `cargo test` of benches passes nothing to run.
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return;
    }
    let pristine = ws10k_on_disk(&root()).unwrap();
    let source = some_source(&pristine);
    update_figures(&pristine, &source);
    load_figures(&pristine, &source);
}
