//! The writer's restricted stage on ws-10k (10,000 topics; issue 15's goals), timed
//! directly (medians of repeated runs):
//!
//! - `stage_copy_ws10k`: making a stage (the listing of topics and derived views, and
//!   the revision it starts from; also with the revision known, as after a commit, and
//!   the two parts alone). Goal ≤ 50 ms.
//! - `tool_call_ws10k`: one `Read`, `Edit`, `Write`, `Glob` and one-file `Grep` on that
//!   stage, each one call. Goal ≤ 1 ms median.
//! - for the prompt-assembly goal (≤ 30 ms, issue 15) the structure listing of the whole
//!   stage and the diff of a one-file change are reported too, and a `Grep` of everything.
//!
//! The workspace is generated into `CARGO_TARGET_TMPDIR/writer-stage-bench/`.
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a bench binary reports its figures")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "a bench fails loudly")]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use scriptorium_benches::topics::ws10k_on_disk;
use scriptorium_transaction::Workspace;
use scriptorium_writer_runtime::Stage;
use serde_json::{Value, json};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("writer-stage-bench")
}

/// ws-10k: the commit bench's generated 10,000-topic workspace (same seed), made once.
fn workspace_10k() -> PathBuf {
    ws10k_on_disk(&root()).unwrap()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// The median of `runs` timed calls of `tool`, each checked to succeed.
fn tool(stage: &mut Stage, name: &str, runs: usize, arguments: impl Fn(usize) -> Value) -> Duration {
    let mut samples = Vec::with_capacity(runs);
    for run in 0..runs {
        let arguments = arguments(run);
        let started = Instant::now();
        let outcome = stage.execute(name, &arguments);
        samples.push(started.elapsed());
        assert!(!outcome.is_error, "{name} {arguments}: {}", outcome.content);
    }
    median(samples)
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let memory = workspace_10k();
    let workspace = Workspace::open(&memory).unwrap();

    let mut copies = Vec::new();
    let mut first = None;
    for _ in 0..11 {
        let started = Instant::now();
        let stage = Stage::new(&workspace).unwrap();
        let elapsed = started.elapsed();
        first.get_or_insert(elapsed);
        copies.push(elapsed);
        assert!(stage.files().len() >= 10_000);
    }
    println!(
        "stage_copy_ws10k: {:.1} ms median, {:.1} ms the first in this process (goal ≤ 50 ms)",
        ms(median(copies)),
        ms(first.unwrap())
    );

    let revision = workspace.revision().unwrap();
    let mut known = Vec::new();
    for _ in 0..11 {
        let started = Instant::now();
        let stage = Stage::at_revision(&workspace, revision.clone()).unwrap();
        known.push(started.elapsed());
        assert!(stage.files().len() >= 10_000);
    }
    println!("stage_copy_ws10k with the revision known (after a commit): {:.1} ms median", ms(median(known)));

    let mut revisions = Vec::new();
    let mut listings = Vec::new();
    let mut names_only = Vec::new();
    for _ in 0..11 {
        let started = Instant::now();
        workspace.revision().unwrap();
        revisions.push(started.elapsed());
        let started = Instant::now();
        let listing = scriptorium_transaction::Listing::read(
            workspace.root(),
            scriptorium_transaction::Scope::Under(&scriptorium_transaction::WRITER_STAGE_ITEMS),
        );
        listings.push(started.elapsed());
        assert!(listing.files.len() >= 10_000);
        let started = Instant::now();
        let names = scriptorium_transaction::Listing::read_names(
            workspace.root(),
            scriptorium_transaction::Scope::Under(&scriptorium_transaction::WRITER_STAGE_ITEMS),
        );
        names_only.push(started.elapsed());
        assert!(names.files.len() >= 10_000);
    }
    println!(
        "stage_copy_ws10k parts: revision {:.1} ms, listing {:.1} ms, names only {:.1} ms (medians)",
        ms(median(revisions)),
        ms(median(listings)),
        ms(median(names_only))
    );

    let mut stage = Stage::new(&workspace).unwrap();
    let topics: Vec<String> =
        stage.files().into_iter().filter(|path| path.starts_with("topics/") && path.ends_with(".md")).collect();
    let pick = |run: usize| topics[(run * 7919) % topics.len()].clone();
    let runs = 201;
    let read = tool(&mut stage, "Read", runs, |run| json!({"file_path": pick(run)}));
    let edit = tool(
        &mut stage,
        "Edit",
        runs,
        |run| json!({"file_path": pick(run), "old_string": "# Topic", "new_string": "# Topic"}),
    );
    let write = tool(
        &mut stage,
        "Write",
        runs,
        |run| json!({"file_path": format!("topics/bench/new-{run}.md"), "content": "# New\n\nA paragraph.\n"}),
    );
    let glob = tool(&mut stage, "Glob", 21, |_| json!({"pattern": "topics/bench/*.md"}));
    let grep = tool(&mut stage, "Grep", runs, |run| json!({"pattern": "Topic", "path": pick(run)}));
    println!(
        "tool_call_ws10k (median): Read {:.3} ms, Edit {:.3} ms, Write {:.3} ms, Glob {:.3} ms, Grep one file {:.3} ms (goal ≤ 1 ms)",
        ms(read),
        ms(edit),
        ms(write),
        ms(glob),
        ms(grep)
    );

    let started = Instant::now();
    let diff = stage.edit().unwrap();
    let diff_time = started.elapsed();
    assert!(diff.is_some());
    let started = Instant::now();
    let grep_all = stage.execute("Grep", &json!({"pattern": "zzz-no-such-text"}));
    let grep_all_time = started.elapsed();
    assert!(!grep_all.is_error);
    let started = Instant::now();
    let listing = stage.structure_listing().unwrap();
    let listing_time = started.elapsed();
    println!(
        "stage_ws10k: diff of {} written files {:.1} ms; Grep of every file {:.1} ms; structure listing {:.1} ms ({} lines, {} bytes)",
        runs,
        ms(diff_time),
        ms(grep_all_time),
        ms(listing_time),
        listing.lines().count(),
        listing.len()
    );
}
