//! `scriptorium serve` under load, bounded and on loopback only: 32 clients for 3 s (20 s
//! with `SCRIPTORIUM_LOAD_SECONDS=20`) mixing recall, reads, status and one-block updates
//! against one server. Every acknowledged update must be in the final workspace and in
//! the history, every failure must be `CONCURRENT_UPDATE` with its 409, no 5xx, and
//! `check` must be clean after. Prints requests/s and p99 per route.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::serve_client::{BoxError, Server};
use crate::serve_routes::{example_server, herbs};
use crate::{TempDir, run, scriptorium};

/// Concurrent clients.
const CLIENTS: usize = 32;

/// What one client saw.
#[derive(Default)]
struct Seen {
    /// Route → latencies.
    latencies: BTreeMap<&'static str, Vec<Duration>>,
    /// `(commit message, content)` of every acknowledged update, in order.
    acked: Vec<(String, String)>,
    /// Refused updates (409 `CONCURRENT_UPDATE`).
    conflicts: usize,
    /// Anything else that is not a success: route, status, body.
    unexpected: Vec<String>,
}

fn path_of(client: usize) -> String {
    format!("topics/load/c{client:02}.md")
}

fn client(server: &Server, client: usize, base: &str, deadline: Instant) -> Seen {
    let mut seen = Seen::default();
    let path = path_of(client);
    let mut n = 0usize;
    while Instant::now() < deadline {
        n += 1;
        let mut timed = |route: &'static str, method: &str, target: &str, body: Option<&serde_json::Value>| {
            let started = Instant::now();
            let reply = server.call(method, target, body);
            seen.latencies.entry(route).or_default().push(started.elapsed());
            reply.map_err(|err| err.to_string())
        };
        let outcome: Result<(), String> = (|| {
            match n % 4 {
                0 => {
                    let reply = timed("recall", "GET", "/api/memory/recall?q=tomatoes%20basil", None)?;
                    if reply.status != 200 {
                        return Err(format!("recall {} {}", reply.status, reply.text()));
                    }
                }
                1 => {
                    let target = format!("/api/memory/topics/{}", path.trim_start_matches("topics/"));
                    let reply = timed("read", "GET", &target, None)?;
                    if reply.status != 200 {
                        return Err(format!("read {} {}", reply.status, reply.text()));
                    }
                }
                _ => {
                    let status = timed("status", "POST", "/api/tools/memory_status", Some(&json!({})))?;
                    let revision = status.json()["revision"].as_str().map(str::to_owned).ok_or("no revision")?;
                    let content = base.replace("Load note.", &format!("Load note {client} {n}."));
                    let message = format!("load c{client} n{n}");
                    let update = json!({
                        "base_revision": revision,
                        "changes": [{"path": path, "action": "write", "content": content}],
                        "commit_message": message,
                    });
                    let reply = timed("update", "POST", "/api/tools/memory_update", Some(&update))?;
                    match (reply.status, reply.code().as_deref()) {
                        (200, _) => seen.acked.push((message, content)),
                        (409, Some("CONCURRENT_UPDATE")) => seen.conflicts += 1,
                        _ => return Err(format!("update {} {}", reply.status, reply.text())),
                    }
                }
            }
            Ok(())
        })();
        if let Err(error) = outcome {
            seen.unexpected.push(error);
        }
    }
    seen
}

fn p99(sorted: &[Duration]) -> Duration {
    let at = ((sorted.len() as f64) * 0.99).ceil() as usize;
    sorted[at.saturating_sub(1).min(sorted.len() - 1)]
}

#[test]
#[allow(clippy::print_stdout, reason = "the load figures are the report (run with --nocapture)")]
fn thirty_two_clients_lose_no_update() -> Result<(), BoxError> {
    let seconds: u64 = std::env::var("SCRIPTORIUM_LOAD_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(3);
    let dir = TempDir::new()?;
    let server = example_server(&dir, &[])?;
    // One topic file per client, installed as owner edits, read back normalized.
    let mut bases = Vec::new();
    for c in 0..CLIENTS {
        let target = format!("/api/memory/topics/load/c{c:02}.md");
        let put = server.call("PUT", &target, Some(&json!({"content": herbs("Load note.")})))?;
        assert_eq!(put.status, 200, "{}", put.text());
        bases.push(server.get(&target)?.json()["content"].as_str().ok_or("content")?.to_owned());
    }
    let server = Arc::new(server);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let results = Arc::new(Mutex::new(Vec::new()));
    std::thread::scope(|scope| {
        for (c, base) in bases.iter().enumerate() {
            let (server, results) = (Arc::clone(&server), Arc::clone(&results));
            scope.spawn(move || {
                let seen = client(&server, c, base, deadline);
                results.lock().map(|mut all| all.push((c, seen))).ok();
            });
        }
    });
    let elapsed = started.elapsed().as_secs_f64();
    let results = std::mem::take(&mut *results.lock().map_err(|_| "poisoned")?);
    assert_eq!(results.len(), CLIENTS);

    let mut latencies: BTreeMap<&str, Vec<Duration>> = BTreeMap::new();
    let (mut acked, mut conflicts) = (0, 0);
    for (_, seen) in &results {
        assert!(
            seen.unexpected.is_empty(),
            "unexpected answers: {:?}",
            &seen.unexpected[..seen.unexpected.len().min(5)]
        );
        for (route, list) in &seen.latencies {
            latencies.entry(route).or_default().extend(list);
        }
        acked += seen.acked.len();
        conflicts += seen.conflicts;
    }
    let total: usize = latencies.values().map(Vec::len).sum();
    println!(
        "serve_load: {CLIENTS} clients, {elapsed:.1} s, {total} requests, {:.0} req/s; updates acked {acked}, 409 {conflicts}",
        total as f64 / elapsed
    );
    for (route, list) in &mut latencies {
        list.sort_unstable();
        println!(
            "serve_load: {route:<7} {:>6} requests {:>7.0} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms",
            list.len(),
            list.len() as f64 / elapsed,
            list[list.len() / 2].as_secs_f64() * 1e3,
            p99(list).as_secs_f64() * 1e3
        );
    }
    assert!(acked > 0, "no update was acknowledged");

    // Every acknowledged update is in the final files and in the history.
    let history = server.get("/api/memory/history?limit=10000")?.json();
    let messages: BTreeSet<&str> =
        history.as_array().ok_or("history")?.iter().filter_map(|entry| entry["message"].as_str()).collect();
    for (c, seen) in &results {
        for (message, _) in &seen.acked {
            assert!(messages.contains(message.as_str()), "acknowledged {message:?} is not in the history");
        }
        let on_disk = std::fs::read_to_string(server.workspace.join(path_of(*c)))?;
        let expected = seen.acked.last().map_or(&bases[*c], |(_, content)| content);
        assert_eq!(&on_disk, expected, "client {c}'s last acknowledged update is not what the file holds");
    }

    let workspace = server.workspace.clone();
    let server = Arc::into_inner(server).ok_or("server still shared")?;
    assert_eq!(server.terminate()?, Some(0));
    let home = dir.path();
    let check = run(scriptorium(home).arg("check").arg("--workspace").arg(&workspace))?;
    assert_eq!(check.code, Some(0), "check after the load: {}{}", check.stdout, check.stderr);
    Ok(())
}
