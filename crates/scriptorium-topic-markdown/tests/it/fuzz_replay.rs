//! Replays the committed fuzz corpus and crash artifacts of the `topic_parse` target
//! through the same checks the fuzz target runs, on stable and without cargo-fuzz.

use std::path::Path;

use scriptorium_topic_markdown::fuzz::check_topic_bytes;

fn replay(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let mut count = 0;
    for entry in entries.flatten() {
        let bytes = std::fs::read(entry.path()).expect("corpus file is readable");
        check_topic_bytes(&bytes);
        count += 1;
    }
    count
}

#[test]
fn corpus_and_artifacts_pass_the_checks() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let corpus = fuzz.join("corpus/topic_parse");
    let seeds = replay(&corpus);
    replay(&fuzz.join("artifacts/topic_parse"));
    if corpus.is_dir() {
        assert!(seeds >= 8, "only {seeds} seeds in {}", corpus.display());
    }
}
