//! Unpredictable numbers without a dependency: std's `RandomState` is keyed from the
//! operating system's random source, so hashing a counter with it gives values that are
//! good enough for lock jitter, journal names and workspace ids (none is a secret).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh pseudo-random 64-bit value.
pub(crate) fn u64() -> u64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_nanos()));
    hasher.write_u32(std::process::id());
    hasher.finish()
}

/// A value in `0..bound` (0 when `bound` is 0); the modulo bias is irrelevant here.
pub(crate) fn below(bound: u64) -> u64 {
    u64().checked_rem(bound).unwrap_or(0)
}
