//! Integration tests of the public API, in one binary (matklad's "one `it` binary").
//!
//! - `vectors`: reference output (golden vectors) parses, indexes and stays normalized.
//! - `roundtrip`: generated topic trees round-trip and normalize idempotently (proptest).
//! - `mutation`: mutated valid topics are valid or fail with enumerated codes (spec T10).
//! - `fuzz_replay`: the committed fuzz corpus and artifacts pass the fuzz checks.

mod fuzz_replay;
mod generate;
mod mutation;
mod roundtrip;
mod support;
mod vectors;
