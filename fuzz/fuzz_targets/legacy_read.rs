//! Any bytes as a legacy archive: the reader and the record lookup never panic and agree.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| scriptorium_archive_format::fuzz::check_legacy(data));
