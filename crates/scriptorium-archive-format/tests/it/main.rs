//! Integration tests of `scriptorium-archive-format` through its public API, as one binary
//! (STYLE §3.8): corpus and crasher replay, property tests, and huge or hostile inputs.

mod fuzz_replay;
mod identities;
mod limits;
mod roundtrip;
