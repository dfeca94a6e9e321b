//! Any bytes as up to four topic files: parse, render and normalize keep their invariants.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| scriptorium_topic_markdown::fuzz::check_topic_bytes(data));
