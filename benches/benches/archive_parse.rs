//! P1 (spec 03): full-validation v2 archive parse throughput, single thread, on a seeded
//! ~20 MB set of canonical archives. Goal ≥ 200 MB/s; the Python reference does 12.4 MB/s.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use scriptorium_archive_format::parse_bytes;
use scriptorium_benches::{archive_set, reference_sized_set};

fn parse_set(c: &mut Criterion) {
    let set = reference_sized_set();
    let mut group = c.benchmark_group("archive_parse");
    group.throughput(Throughput::Bytes(set.total_bytes() as u64));
    group.sample_size(20);
    let name = format!("set_{}MB_{}files_{}frames", set.total_bytes() >> 20, set.files.len(), set.total_frames());
    group.bench_function(name, |b| {
        b.iter(|| {
            let mut frames = 0;
            for file in &set.files {
                let parsed = parse_bytes(black_box(&file.bytes), &file.path);
                assert!(parsed.stop.is_none());
                frames += parsed.frames.len();
            }
            black_box(frames)
        });
    });

    // One large thread: the same work without per-file overhead.
    let big = archive_set(7, 8 << 20, 8 << 20);
    let file = big.files.first().expect("one file");
    group.throughput(Throughput::Bytes(file.bytes.len() as u64));
    group.bench_function(format!("one_file_{}MB_{}frames", file.bytes.len() >> 20, file.frames), |b| {
        b.iter(|| black_box(parse_bytes(black_box(&file.bytes), &file.path).frames.len()));
    });
    group.finish();
}

criterion_group!(benches, parse_set);
criterion_main!(benches);
