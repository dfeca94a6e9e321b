//! P2 (spec 03): topic parse + validate + normalize with every source link resolved,
//! on a seeded workspace of topic files citing canonical v2 archives. Goals: ≥ 30 MB/s
//! of topic bytes (the Python reference does 0.59 MB/s on 200 files / 20,000 blocks),
//! and a 10,000-block workspace validated end to end in ≤ 150 ms.
//!
//! Every iteration builds a fresh [`SourceResolver`], so it pays for resolving the
//! archives too: each distinct archive is read and scanned once, anchor → id cached.
//!
//! `TOPIC_VALIDATE_ONCE=<n>` skips criterion and runs the 20,000-block normalize `n`
//! times (for `perf stat -e instructions` or callgrind: subtract a run with `n = 0`).
#![allow(clippy::print_stdout, reason = "a bench binary reports its figures on stdout")]

use std::collections::BTreeMap;
use std::hint::black_box;

use criterion::{Criterion, Throughput};
use scriptorium_benches::topics::{TopicWorkspace, topic_workspace};
use scriptorium_topic_markdown::{
    Baseline, MemorySources, Mode, NormalizeOptions, SourceResolver, normalize, parse_tree,
};

/// The Python reference's `parse_topic_tree(strict=True)` (spec 03 §B5).
const PYTHON_MB_PER_S: f64 = 0.59;

struct Prepared {
    workspace: TopicWorkspace,
    sources: MemorySources,
    baseline: Baseline,
}

/// Build the workspace and check that it is what the bench claims: strictly valid,
/// and already in normal form.
fn prepare(files: usize, blocks_per_file: usize) -> Prepared {
    let workspace = topic_workspace(0x70b1_c5ee_d5ee_d001 ^ files as u64, files, blocks_per_file);
    let sources: MemorySources = workspace.sources.files.iter().map(|f| (f.path.clone(), f.bytes.clone())).collect();
    let resolver = SourceResolver::new(&sources);
    let units = match parse_tree(&workspace.topics, &resolver, Mode::Strict).check() {
        Ok(units) => units,
        Err(violations) => panic!("generated workspace is invalid: {violations}"),
    };
    assert!(units.len() >= workspace.blocks, "{} units for {} blocks", units.len(), workspace.blocks);
    let baseline = Baseline::from_units(units);
    let normalized = normalize(&workspace.topics, &baseline, &resolver, &NormalizeOptions::default())
        .unwrap_or_else(|violations| panic!("generated workspace does not normalize: {violations}"));
    assert!(normalized.files == workspace.topics, "generated workspace is not in normal form");
    Prepared { workspace, sources, baseline }
}

#[inline(never)]
fn normalize_once(prepared: &Prepared) -> usize {
    let resolver = SourceResolver::new(&prepared.sources);
    let topics: &BTreeMap<String, Vec<u8>> = black_box(&prepared.workspace.topics);
    match normalize(topics, &prepared.baseline, &resolver, &NormalizeOptions::default()) {
        Ok(normalized) => normalized.units.len(),
        Err(violations) => panic!("{violations}"),
    }
}

#[inline(never)]
fn validate_once(prepared: &Prepared) -> usize {
    let resolver = SourceResolver::new(&prepared.sources);
    let parsed = parse_tree(black_box(&prepared.workspace.topics), &resolver, Mode::Strict);
    assert!(parsed.violations().is_empty());
    parsed.units().len()
}

fn describe(name: &str, prepared: &Prepared) -> String {
    let w = &prepared.workspace;
    format!(
        "{name}_{}files_{}blocks_{}KB_{}archives",
        w.topics.len(),
        w.blocks,
        w.topic_bytes() >> 10,
        w.sources.files.len()
    )
}

fn bench(c: &mut Criterion) {
    let reference = prepare(200, 100);
    let bytes = reference.workspace.topic_bytes();
    println!(
        "topic_validate: {bytes} topic bytes, {} archive bytes; Python reference {PYTHON_MB_PER_S} MB/s \
         (goal ≥ 30 MB/s, 50×)",
        reference.workspace.sources.total_bytes()
    );
    let mut group = c.benchmark_group("topic_validate");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function(describe("normalize", &reference), |b| b.iter(|| black_box(normalize_once(&reference))));
    group.bench_function(describe("strict_parse", &reference), |b| b.iter(|| black_box(validate_once(&reference))));
    drop(reference);

    // Goal (b): 10,000 blocks validated end to end in ≤ 150 ms.
    let small = prepare(100, 100);
    group.throughput(Throughput::Bytes(small.workspace.topic_bytes() as u64));
    group.bench_function(describe("strict_parse", &small), |b| b.iter(|| black_box(validate_once(&small))));
    group.bench_function(describe("normalize", &small), |b| b.iter(|| black_box(normalize_once(&small))));
    group.finish();
}

fn main() {
    if let Ok(n) = std::env::var("TOPIC_VALIDATE_ONCE") {
        let n: usize = n.parse().unwrap_or(1);
        let prepared = prepare(200, 100);
        let units: usize = (0..n).map(|_| normalize_once(&prepared)).sum();
        println!("{n} runs, {units} units, {} topic bytes each", prepared.workspace.topic_bytes());
        return;
    }
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
}
