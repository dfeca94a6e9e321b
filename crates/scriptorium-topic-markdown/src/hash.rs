//! A fast hasher for the crate's string-keyed maps (the multiply-rotate scheme of
//! rustc's FxHash, eight bytes at a time).
//!
//! SipHash showed up at several percent of a parse; the keys here are ids and paths
//! from the user's own files, so flooding resistance buys nothing.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// FxHash-style state: rotate, xor a word, multiply.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Fx(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Fx {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let mut tail = [0u8; 8];
        let rest = chunks.remainder();
        if let Some(slot) = tail.get_mut(..rest.len()) {
            slot.copy_from_slice(rest);
        }
        self.add(u64::from_le_bytes(tail) ^ (rest.len() as u64) << 56);
    }
}

/// A `HashMap` with [`Fx`].
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;
/// A `HashSet` with [`Fx`].
pub(crate) type FastSet<K> = HashSet<K, BuildHasherDefault<Fx>>;
