//! Seeded corpus generators for the benchmarks.
