//! The writer agent's prompts on ws-10k with a 16k-token batch (issue 15's goals):
//!
//! - `prompt_assembly_ws10k`: everything before the first model call of a write run —
//!   the stage, its structure listing and the write task around the batch. Goal ≤ 30 ms.
//! - prompt sizes in o200k tokens for the three tasks (write, organize, repair) and the
//!   system contract, so a user can see what a run costs before the model answers.
//!
//! The workspace is generated into `CARGO_TARGET_TMPDIR/writer-prompts-bench/`.
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a bench binary reports its figures")]
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a bench fails loudly")]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use scriptorium_archive_format::{SourceRecord, render_observed_batch};
use scriptorium_benches::topics::ws10k_on_disk;
use scriptorium_derived_views::count_o200k;
use scriptorium_transaction::Workspace;
use scriptorium_writer_runtime::{SYSTEM_CONTRACT, Stage, organize_task, repair_task, write_task};

/// ws-10k, made once.
fn workspace_10k() -> PathBuf {
    ws10k_on_disk(&PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("writer-prompts-bench")).unwrap()
}

/// About 16,000 tokens of conversation: 40 turns of about 400 tokens.
fn batch() -> String {
    let records: Vec<SourceRecord> = (0..40)
        .map(|n| {
            let text = format!("Turn {n}: {}", "we talked about the budget tracker and the garden again. ".repeat(40));
            let mut record = SourceRecord::new("openprogram", "bench", format!("m{n}"), n, "user", text);
            record.timestamp = Some("2026-08-09T10:15:00+08:00".to_owned());
            record
        })
        .collect();
    render_observed_batch(&records)
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let workspace = Workspace::open(workspace_10k()).unwrap();
    let observed = batch();
    let mut samples: Vec<Duration> = Vec::new();
    let mut prompt = String::new();
    for _ in 0..11 {
        let started = Instant::now();
        let stage = Stage::new(&workspace).unwrap();
        let listing = stage.structure_listing().unwrap();
        prompt = write_task(&observed, &listing);
        samples.push(started.elapsed());
    }
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "prompt_assembly_ws10k: {:.1} ms median, {:.1} ms max of 11 (goal ≤ 30 ms); batch {} tokens",
        ms(samples[5]),
        ms(samples[10]),
        count_o200k(&observed)
    );

    let stage = Stage::new(&workspace).unwrap();
    let listing = stage.structure_listing().unwrap();
    let topics: Vec<String> = stage.files().into_iter().filter(|path| path.starts_with("topics/")).collect();
    let organize = organize_task(&topics, &listing);
    let repair = repair_task(&prompt, "INVALID_TOPIC_FORMAT: undefined footnote [^e2] (topics/a.md:3)");
    println!(
        "prompt_tokens_ws10k: system {}, write {} (listing {}), organize {}, repair {}",
        count_o200k(SYSTEM_CONTRACT),
        count_o200k(&prompt),
        count_o200k(&listing),
        count_o200k(&organize),
        count_o200k(&repair)
    );
}
