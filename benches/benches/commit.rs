//! The transaction commit path (spec 03 P9, P10). Replaced by the full benchmark.
use criterion::Criterion;

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let dir = std::env::temp_dir().join("scriptorium-commit-bench");
    c.bench_function("open", |b| b.iter(|| scriptorium_transaction::Workspace::open(&dir)));
    c.final_summary();
}
