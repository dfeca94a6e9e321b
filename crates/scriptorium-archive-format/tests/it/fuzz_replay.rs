//! Replays the committed fuzz corpus and crashers on stable, without cargo-fuzz
//! (gitoxide `gix-index/tests/index/fuzzed.rs`), plus the golden archives, through the
//! same `fuzz::check_*` invariants the fuzz targets assert.

use std::fs;
use std::path::{Path, PathBuf};

use scriptorium_archive_format::fuzz;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every regular file under `dir`, recursively, in path order; none when `dir` is absent.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Run `check` on every corpus file and every committed crasher of `target`.
fn replay(target: &str, check: fn(&[u8])) -> usize {
    let fuzz_dir = repo_root().join("fuzz");
    let corpus = files_under(&fuzz_dir.join("corpus").join(target));
    assert!(!corpus.is_empty(), "the seed corpus of {target} is committed");
    let artifacts = files_under(&fuzz_dir.join("artifacts").join(target));
    for path in corpus.iter().chain(&artifacts) {
        let data = fs::read(path).expect("readable corpus file");
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(outcome.is_ok(), "fuzz invariant broken by {}", path.display());
    }
    corpus.len() + artifacts.len()
}

#[test]
fn archive_parse_corpus_and_artifacts() {
    assert!(replay("archive_parse", fuzz::check_bytes) >= 10);
}

#[test]
fn legacy_read_corpus_and_artifacts() {
    assert!(replay("legacy_read", fuzz::check_legacy) >= 3);
}

#[test]
fn archive_roundtrip_corpus_and_artifacts() {
    assert!(replay("archive_roundtrip", fuzz::check_records) >= 3);
    // The same bytes are also hostile archive input.
    replay("archive_roundtrip", fuzz::check_bytes);
}

#[test]
fn golden_archives_keep_every_invariant() {
    let vectors = repo_root().join("tests/vectors/archive_parse");
    let archives: Vec<PathBuf> =
        files_under(&vectors).into_iter().filter(|p| p.file_name().is_some_and(|n| n == "archive.md")).collect();
    assert!(archives.len() >= 40, "the golden archive_parse vectors are present");
    for path in archives {
        let data = fs::read(&path).expect("readable vector");
        let outcome = std::panic::catch_unwind(|| fuzz::check_bytes(&data));
        assert!(outcome.is_ok(), "fuzz invariant broken by {}", path.display());
    }
}

/// What the reference writer produced is canonical: re-rendering its frames gives its
/// bytes back exactly.
#[test]
fn reference_writer_output_is_canonical() {
    let expected = repo_root().join("tests/vectors/archive_write");
    let written: Vec<PathBuf> = files_under(&expected)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md") && p.to_string_lossy().contains("/_v2/"))
        .collect();
    assert!(written.len() >= 5, "the golden archive_write outputs are present");
    for path in written {
        let data = fs::read(&path).expect("readable vector");
        let text = path.to_string_lossy();
        let relative = &text[text.find("sources/").expect("under sources/")..];
        assert!(fuzz::check_bytes_at(&data, relative), "{} is not canonical", path.display());
    }
}

/// The canonical flag is not vacuous: the two second spellings the grammar accepts
/// re-render differently, and a hand-made canonical archive re-renders exactly.
#[test]
fn canonical_flag_tells_second_spellings_apart() {
    let vectors = repo_root().join("tests/vectors/archive_parse");
    let read = |case: &str| fs::read(vectors.join(case).join("archive.md")).expect("readable vector");
    let path = "sources/openprogram/_v2/thread-x.md";
    assert!(fuzz::check_bytes_at(&read("hand-valid"), path));
    assert!(!fuzz::check_bytes_at(&read("hand-record-lines-leading-zero"), path));
    assert!(!fuzz::check_bytes_at(&read("hand-meta-legacy-origin-scope"), path));
}
