//! Arbitrary records: appended to an empty archive, they parse back to the same ids, text, speakers and meta.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| scriptorium_archive_format::fuzz::check_records(data));
