//! Derived views (spec 03 P4). Replaced by the full benchmark.
use criterion::Criterion;

fn main() {
    let mut c = Criterion::default().configure_from_args();
    c.bench_function("count_o200k", |b| b.iter(|| scriptorium_derived_views::count_o200k("hello world")));
    c.final_summary();
}
