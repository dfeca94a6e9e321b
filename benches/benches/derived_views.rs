//! Derived views (spec 03 P4, issue 6), on seeded workspaces whose archives come from the
//! real writer and whose topics cite their frames:
//!
//! - `core_render_warm`: `render_core` of a 256 KB `topics/core.md` at the 2000-token
//!   budget, tokenizer already built (goal ≤ 5 ms); `core_views_warm` is the whole derive
//!   step for a workspace holding just that master (parse, pending check, render).
//! - `full_rebuild`: every view of a 10,000-topic-file workspace (10 blocks a file) from
//!   scratch (report); `DERIVED_VIEWS_FILES=<n>` picks another size.
//! - `incremental_one_topic`: a [`ViewsCache`] kept across builds and driven as the
//!   transaction drives it (`build_delta` with the committed revision and the one changed
//!   path, the returned views installed, `installed` with the new revision), one topic
//!   file edited between builds (goal ≤ 20 ms).
//! - cold CLI: `scriptorium core` on the 256 KB master in a fresh process, tokenizer init
//!   included (goal ≤ 300 ms), timed over repeated spawns like hyperfine. It needs the
//!   release binary (`cargo build --release -p scriptorium-cli`); the workspace is left
//!   in the temp directory and the line printed names it, so
//!   `hyperfine 'target/release/scriptorium core --workspace DIR'` reruns it.
#![allow(clippy::print_stdout, reason = "a bench binary reports its figures on stdout")]

use std::collections::{BTreeMap, BTreeSet};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::Criterion;
use scriptorium_archive_format::{source_anchor, v2_location};
use scriptorium_benches::topics::topic_workspace;
use scriptorium_benches::{SplitMix64, archive_set};
use scriptorium_derived_views::{CORE_TOKEN_BUDGET, DerivedViews, ViewsCache, count_o200k, render_core};

const RUNTIME_DIR: &str = ".scriptorium";
const CORE_BYTES: usize = 256 << 10;
/// Topic files of the large workspace; `DERIVED_VIEWS_FILES=<n>` sets another size.
const TOPIC_FILES: usize = 10_000;
const BLOCKS_PER_FILE: usize = 10;
const ENGLISH: &[&str] = &[
    "Craig",
    "prefers",
    "green",
    "tea",
    "the",
    "sensor",
    "reads",
    "humidity",
    "every",
    "minute",
    "budget",
    "review",
    "deploy",
    "Friday",
    "backup",
    "nightly",
    "garden",
    "kitchen",
    "printer",
    "invoice",
    "<|endoftext|>",
    "fn",
    "main()",
];
const CHINESE: &[&str] =
    &["预算", "超了", "百分之二十", "咖啡", "每天", "早上", "传感器", "湿度", "周五", "发布", "备份", "厨房"];

/// A `topics/core.md` of about `target` bytes: paragraphs of English or Chinese prose,
/// each with its footnote definition right below it (as the writer lays out core), every
/// one citing a frame of `sources`.
fn core_workspace(seed: u64, target: usize) -> BTreeMap<String, Vec<u8>> {
    let sources = archive_set(seed ^ 0x5eed, 1 << 20, 256 << 10);
    let frames = sources.source_ids();
    let mut rng = SplitMix64::new(seed);
    let mut text = String::from("# Core\n");
    let mut n = 0usize;
    while text.len() < target {
        text.push('\n');
        let words = 6 + rng.below(20);
        if rng.chance(30) {
            (0..words).for_each(|_| text.push_str(rng.pick(CHINESE)));
        } else {
            let sentence: Vec<&str> = (0..words).map(|_| rng.pick(ENGLISH)).collect();
            text.push_str(&sentence.join(" "));
            text.push('.');
        }
        let id = frames.get(rng.below(frames.len())).map(String::as_str).unwrap_or_default();
        let location = v2_location(id).unwrap_or_default();
        text.push_str(&format!("[^e-{n:x}] ^{:08x}\n\n", 0x1000_0000 + n));
        text.push_str(&format!(
            "[^e-{n:x}]: Time: `2026-0{}-1{}`; Sources: [{id}](../{location}#{})\n",
            1 + rng.below(9),
            rng.below(10),
            source_anchor(id)
        ));
        n += 1;
    }
    let mut staged: BTreeMap<String, Vec<u8>> = sources.files.into_iter().map(|file| (file.path, file.bytes)).collect();
    staged.insert("topics/core.md".to_owned(), text.into_bytes());
    staged
}

fn topic_files() -> usize {
    std::env::var("DERIVED_VIEWS_FILES").ok().and_then(|n| n.parse().ok()).unwrap_or(TOPIC_FILES)
}

/// The large workspace (10,000 files unless set) as the derive step sees it: topics and sources.
fn large_workspace() -> BTreeMap<String, Vec<u8>> {
    let workspace = topic_workspace(0xd1ff_5eed_0006, topic_files(), BLOCKS_PER_FILE);
    let mut staged: BTreeMap<String, Vec<u8>> =
        workspace.sources.files.into_iter().map(|file| (file.path, file.bytes)).collect();
    staged.extend(workspace.topics);
    staged
}

/// Apply a build's files to the stage, as an install does.
fn install(staged: &mut BTreeMap<String, Vec<u8>>, files: BTreeMap<String, Option<Vec<u8>>>) {
    for (path, bytes) in files {
        match bytes {
            Some(bytes) => staged.insert(path, bytes),
            None => staged.remove(&path),
        };
    }
}

fn bench_core(c: &mut Criterion, staged: &BTreeMap<String, Vec<u8>>) {
    let master = String::from_utf8_lossy(&staged["topics/core.md"]).into_owned();
    let views = DerivedViews::default().build(staged, RUNTIME_DIR).unwrap_or_else(|e| panic!("core workspace: {e}"));
    let report = views.core_report.unwrap_or_else(|| panic!("no core report"));
    assert!(report.left_out.len() > 100, "the budget must cut the 256 KB master");
    println!(
        "core: {} KB master, {} tokens rendered of {}, {} blocks rendered, {} left out",
        master.len() >> 10,
        report.tokens_used,
        report.budget,
        report.rendered.len(),
        report.left_out.len()
    );
    let pending = Default::default();
    count_o200k("warm the tokenizer");
    let mut group = c.benchmark_group("derived_views");
    group.bench_function("core_render_warm_256KB", |b| {
        b.iter(|| black_box(render_core(black_box(&master), &pending, CORE_TOKEN_BUDGET)))
    });
    group.sample_size(20);
    group.bench_function("core_views_warm_256KB", |b| {
        b.iter(|| black_box(DerivedViews::default().build(black_box(staged), RUNTIME_DIR)))
    });
    group.finish();
}

fn bench_large(c: &mut Criterion) {
    let started = Instant::now();
    let mut staged = large_workspace();
    let topic_bytes: usize = staged.iter().filter(|(p, _)| p.starts_with("topics/")).map(|(_, b)| b.len()).sum();
    println!(
        "large workspace: {} topic files, {} blocks, {} KB of topics, generated in {:.1} s",
        topic_files(),
        topic_files() * BLOCKS_PER_FILE,
        topic_bytes >> 10,
        started.elapsed().as_secs_f64()
    );
    let first = DerivedViews::default().build(&staged, RUNTIME_DIR).unwrap_or_else(|e| panic!("large: {e}"));
    install(&mut staged, first.files);

    let mut group = c.benchmark_group("derived_views");
    group.sample_size(10);
    let files = topic_files();
    group.bench_function(format!("full_rebuild_{files}_topics"), |b| {
        b.iter(|| black_box(DerivedViews::default().build(black_box(&staged), RUNTIME_DIR)))
    });

    // Two versions of one topic file, swapped in turn: each build sees one changed file.
    let path = staged.keys().find(|p| p.starts_with("topics/")).cloned().unwrap_or_default();
    let original = staged[&path].clone();
    let text = String::from_utf8_lossy(&original);
    let edited = text.replacen(". ", ", and more. ", 1).into_bytes();
    assert_ne!(edited, original, "the edit must change the file");
    // As the transaction drives it: the committed revision and the changed path handed
    // over, the returned views installed and the new revision reported.
    let cache = ViewsCache::new(DerivedViews::default());
    let _ = cache.build_delta(&staged, RUNTIME_DIR, "r0", &BTreeSet::new());
    cache.installed("r1");
    let changed = BTreeSet::from([path.clone()]);
    let mut round = 1_u64;
    group.bench_function(format!("incremental_one_topic_{files}_topics"), |b| {
        b.iter(|| {
            round += 1;
            staged.insert(path.clone(), if round.is_multiple_of(2) { edited.clone() } else { original.clone() });
            let built = cache.build_delta(&staged, RUNTIME_DIR, &format!("r{}", round - 1), &changed);
            install(&mut staged, built.unwrap_or_else(|e| panic!("incremental: {e}")).files);
            cache.installed(&format!("r{round}"));
        })
    });
    group.finish();
    let stats = cache.stats();
    assert_eq!((stats.topics_parsed, stats.topics_reused), (1, files - 1), "one topic re-parsed");
    assert!(stats.views_patched, "the views were patched, not rendered from every unit");
}

/// The release `scriptorium` binary next to this bench's `deps/` directory.
fn cli_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let binary = exe.parent()?.parent()?.join("scriptorium");
    binary.is_file().then_some(binary)
}

fn write_workspace(root: &Path, staged: &BTreeMap<String, Vec<u8>>) -> std::io::Result<()> {
    for (path, bytes) in staged {
        let target = root.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(target, bytes)?;
    }
    Ok(())
}

/// Spawn `scriptorium core` `runs` times on a fresh copy of the core workspace.
fn cold_cli(staged: &BTreeMap<String, Vec<u8>>, runs: usize) {
    let Some(binary) = cli_binary() else {
        println!("cold CLI: no release binary; run `cargo build --release -p scriptorium-cli` first");
        return;
    };
    let root = std::env::temp_dir().join(format!("scriptorium-bench-core-{}", std::process::id()));
    if let Err(error) = write_workspace(&root, staged) {
        println!("cold CLI: cannot write {}: {error}", root.display());
        return;
    }
    let mut times: Vec<Duration> = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let out = Command::new(&binary).arg("core").arg("--workspace").arg(&root).output();
        times.push(started.elapsed());
        match out {
            Ok(out) if out.status.success() => {}
            Ok(out) => panic!("scriptorium core failed: {}", String::from_utf8_lossy(&out.stderr)),
            Err(error) => panic!("cannot run {}: {error}", binary.display()),
        }
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let median = times.get(runs / 2).copied().unwrap_or_default();
    println!(
        "cold CLI `scriptorium core` on the 256 KB master, {runs} runs: min {:.1} ms, median {:.1} ms, max {:.1} ms \
         (goal ≤ 300 ms); rerun: hyperfine '{} core --workspace {}'",
        ms(times[0]),
        ms(median),
        ms(times[runs - 1]),
        binary.display(),
        root.display()
    );
}

/// `DERIVED_VIEWS_ONCE=<n>`: skip criterion, build the large workspace once from scratch
/// and then `n` one-topic incremental builds (each adding a block, installed as the
/// transaction does), printing each time and, beside it, the time to copy the staged map,
/// which the transaction does before every derive (for `perf record`).
fn once(n: usize) {
    let mut staged = large_workspace();
    let started = Instant::now();
    let first = DerivedViews::default().build(&staged, RUNTIME_DIR).unwrap_or_else(|e| panic!("large: {e}"));
    println!("full build: {:.1} ms", started.elapsed().as_secs_f64() * 1e3);
    install(&mut staged, first.files);
    let cache = ViewsCache::new(DerivedViews::default());
    let _ = cache.build_delta(&staged, RUNTIME_DIR, "r0", &BTreeSet::new());
    cache.installed("r0");
    let path = staged.keys().find(|p| p.starts_with("topics/")).cloned().unwrap_or_default();
    let changed = BTreeSet::from([path.clone()]);
    for round in 0..n {
        let mut bytes = staged[&path].clone();
        bytes.extend_from_slice(
            format!("\nMore {round}.[^e-x] ^ffff{round:04}\n\n[^e-x]: Time: `2026-01-01`; Sources: [s](x)\n")
                .as_bytes(),
        );
        staged.insert(path.clone(), bytes);
        // What the transaction does before the derive step: hand over a copy of every file.
        let started = Instant::now();
        let copy = black_box(staged.clone());
        let copied = started.elapsed();
        drop(copy);
        let started = Instant::now();
        let built = cache
            .build_delta(&staged, RUNTIME_DIR, &format!("r{round}"), &changed)
            .unwrap_or_else(|e| panic!("incremental: {e}"));
        let derive = started.elapsed();
        let view_bytes: usize = built.files.values().flatten().map(Vec::len).sum();
        println!(
            "incremental build: {:.1} ms ({} KB of views returned); copying the staged map: {:.1} ms",
            derive.as_secs_f64() * 1e3,
            view_bytes >> 10,
            copied.as_secs_f64() * 1e3
        );
        install(&mut staged, built.files);
        cache.installed(&format!("r{}", round + 1));
    }
}

fn main() {
    if let Ok(n) = std::env::var("DERIVED_VIEWS_ONCE") {
        once(n.parse().unwrap_or(1));
        return;
    }
    let mut criterion = Criterion::default().configure_from_args();
    let core = core_workspace(0xc0de_c0de_0006, CORE_BYTES);
    if std::env::var_os("DERIVED_VIEWS_SKIP_CLI").is_none() {
        cold_cli(&core, 20);
    }
    bench_core(&mut criterion, &core);
    if std::env::var_os("DERIVED_VIEWS_SKIP_LARGE").is_none() {
        bench_large(&mut criterion);
    }
    criterion.final_summary();
}
