//! Any bytes: the v2 scanner never panics and keeps its stop, prefix and round-trip invariants.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| scriptorium_archive_format::fuzz::check_bytes(data));
