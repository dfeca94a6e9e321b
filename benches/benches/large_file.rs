//! Memory and time on a workspace with one huge topic file: peak RSS and wall time of
//! `check`, `status`, `search` and an unrelated one-line `update`, each run as the real
//! release `scriptorium` binary in a child process under GNU `time`.
//!
//! Goal: peak RSS ≤ 4 × the topic bytes + 100 MB for every verb, and the update ≤ 10 s.
//!
//! The workspace (seeded, cached in `CARGO_TARGET_TMPDIR/large-file-bench/`) holds one
//! topic file of `LARGE_BENCH_BLOCKS` blocks (default 583,000 lean blocks, about 50 MB) and four
//! small ones, citing 4 MiB of canonical v2 archives; a first `update` through the binary
//! builds its derived views. Each measured run starts from a fresh copy of it.
//!
//! The binary is `SCRIPTORIUM_BIN`, else `scriptorium` next to this bench's directory
//! (`target/release/`): build it first with `cargo build --release -p scriptorium-cli`.
//! `LARGE_BENCH_VERBS` picks the verbs (default `check,status,search,update`).
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a bench binary reports its figures")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "a bench fails loudly")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use scriptorium_benches::topics::{toggle_first_paragraph, topic_workspace_sized};

const SEED: u64 = 0x0001_a46e_f11e_0004;
const BLOCKS: usize = 583_000;
const SMALL_FILES: usize = 4;
const SMALL_BLOCKS: usize = 6;
const ARCHIVE_BYTES: usize = 4 << 20;
/// Lean blocks (about 90 bytes each) citing one of this many footnotes per file.
const SHARED_FOOTNOTES: usize = 64;
/// The small file the unrelated update edits (the huge one is `t0000.md`).
const EDITED: &str = "topics/infra/t0002.md";
const MARK: &str = "Edited ";

fn blocks_wanted() -> usize {
    std::env::var("LARGE_BENCH_BLOCKS").ok().and_then(|n| n.parse().ok()).unwrap_or(BLOCKS)
}

fn binary() -> PathBuf {
    if let Some(path) = std::env::var_os("SCRIPTORIUM_BIN") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().unwrap();
    let release = exe.parent().and_then(Path::parent).expect("target/release/deps/<bench>");
    let binary = release.join("scriptorium");
    assert!(binary.exists(), "{} is missing: run `cargo build --release -p scriptorium-cli`", binary.display());
    binary
}

fn cache_root() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("large-file-bench")
}

/// Peak RSS (MB) and wall seconds of `scriptorium ARGS` in `dir`, from GNU `time`.
fn measured(args: &[&str], workspace: &Path) -> (f64, f64, String) {
    let report = workspace.with_extension("time");
    let output = Command::new("/usr/bin/time")
        .args(["-f", "%e %M", "-o"])
        .arg(&report)
        .arg(binary())
        .args(args)
        .arg("--workspace")
        .arg(workspace)
        .output()
        .expect("GNU time at /usr/bin/time");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    // `check` exits 1 on findings; any other failure is a broken run.
    let code = output.status.code().unwrap_or(-1);
    assert!(code == 0 || (code == 1 && args[0] == "check"), "{args:?} failed ({code}): {stdout}{}", {
        String::from_utf8_lossy(&output.stderr)
    });
    let text = std::fs::read_to_string(&report).unwrap();
    let last = text.lines().last().unwrap_or_default();
    let mut fields = last.split_whitespace().map(|v| v.parse::<f64>().expect("time's figures"));
    let (secs, kib) = (fields.next().unwrap(), fields.next().unwrap());
    (kib / 1024.0, secs, stdout)
}

/// A one-line edit of the small file `EDITED` through `scriptorium update`.
fn update(workspace: &Path) -> (f64, f64) {
    let path = workspace.join(EDITED);
    let content = toggle_first_paragraph(&std::fs::read(&path).unwrap(), MARK).expect("a generated topic");
    let changes = workspace.with_extension("changes.json");
    let json = format!("[{{\"path\": {:?}, \"action\": \"write\", \"content\": {}}}]", EDITED, json_string(&content));
    std::fs::write(&changes, json).unwrap();
    let (mb, secs, _) = measured(&["update", "--changes", changes.to_str().unwrap()], workspace);
    (mb, secs)
}

fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The pristine workspace: generated, written, derived views built by a first update.
fn pristine(blocks: usize) -> (PathBuf, usize) {
    let dir = cache_root().join(format!("pristine-{SEED:016x}-{blocks}"));
    let marker = dir.join(".bench-complete");
    let sizes: Vec<usize> = std::iter::once(blocks).chain([SMALL_BLOCKS; SMALL_FILES]).collect();
    if !marker.exists() {
        let started = Instant::now();
        let _ = std::fs::remove_dir_all(&dir);
        let generated = topic_workspace_sized(SEED, &sizes, ARCHIVE_BYTES, SHARED_FOOTNOTES);
        let files = generated.sources.files.iter().map(|f| (&f.path, &f.bytes)).chain(generated.topics.iter());
        for (path, bytes) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        let (mb, secs) = update(&dir);
        let (mb2, secs2) = update(&dir);
        std::fs::write(&marker, b"").unwrap();
        eprintln!(
            "large-file: generated {} in {:.1} s (first update {secs:.1} s / {mb:.0} MB, second {secs2:.1} s / {mb2:.0} MB)",
            dir.display(),
            started.elapsed().as_secs_f64()
        );
    }
    let topic_bytes = walk_bytes(&dir.join("topics"));
    (dir, topic_bytes)
}

fn walk_bytes(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| {
                    let path = entry.path();
                    if path.is_dir() { walk_bytes(&path) } else { entry.metadata().map_or(0, |m| m.len() as usize) }
                })
                .sum()
        })
        .unwrap_or(0)
}

fn fresh_copy(pristine: &Path, name: &str) -> PathBuf {
    let target = cache_root().join(name);
    let _ = std::fs::remove_dir_all(&target);
    let status = Command::new("cp").arg("-a").arg(pristine).arg(&target).status().unwrap();
    assert!(status.success(), "cp -a failed");
    target
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let blocks = blocks_wanted();
    let (pristine, topic_bytes) = pristine(blocks);
    let goal_mb = 4.0 * topic_bytes as f64 / (1024.0 * 1024.0) + 100.0;
    println!(
        "large-file: {blocks} blocks in one file + {SMALL_FILES} small files, {:.1} MB of topics; \
         goal peak RSS ≤ {goal_mb:.0} MB, update ≤ 10 s; binary {}",
        topic_bytes as f64 / (1024.0 * 1024.0),
        binary().display()
    );
    let verbs = std::env::var("LARGE_BENCH_VERBS").unwrap_or_else(|_| "check,status,search,update".to_owned());
    let workspace = fresh_copy(&pristine, "run");
    for verb in verbs.split(',') {
        let figures: Vec<(String, f64, f64)> = match verb {
            "check" | "status" => {
                let (mb, secs, _) = measured(&[verb], &workspace);
                vec![(verb.to_owned(), mb, secs)]
            }
            "search" => {
                let _ = std::fs::remove_file(workspace.join(".scriptorium/retrieval-index.bin"));
                let (mb, secs, _) = measured(&["search", "budget tracker"], &workspace);
                let (mb2, secs2, _) = measured(&["search", "budget tracker"], &workspace);
                vec![("search (cold)".to_owned(), mb, secs), ("search (cached)".to_owned(), mb2, secs2)]
            }
            "update" => {
                let (mb, secs) = update(&workspace);
                vec![("update".to_owned(), mb, secs)]
            }
            other => panic!("unknown verb {other}"),
        };
        for (name, mb, secs) in figures {
            let ok = mb <= goal_mb && (name != "update" || secs <= 10.0);
            println!(
                "large-file: {name:<16} peak RSS {mb:>7.0} MB, {secs:>6.2} s  {}",
                if ok { "(goal met)" } else { "(goal missed)" }
            );
        }
    }
}
