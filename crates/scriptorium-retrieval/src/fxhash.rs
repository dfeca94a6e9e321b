//! The term dictionary's hasher: rustc's FxHash, a multiply-rotate hash over 8-byte words.
//!
//! Building the index hashes every token of every event once; with std's SipHash that
//! lookup was the largest single cost of a build. Terms are short and the dictionary is
//! rebuilt from the workspace, so a keyed hash buys nothing here; a workspace crafted to
//! collide only slows its own indexing.

use std::hash::{BuildHasherDefault, Hasher};

/// rustc's `FxHasher` constant (a 64-bit odd multiplier with good bit mixing).
const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// FxHash state.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FxHasher {
    hash: u64,
}

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            if let Some(head) = word.get_mut(..rest.len()) {
                head.copy_from_slice(rest);
            }
            self.add(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 56));
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A `HashMap` hasher builder for [`FxHasher`].
pub(crate) type FxBuildHasher = BuildHasherDefault<FxHasher>;

#[cfg(test)]
mod tests {
    use std::hash::{BuildHasher, Hash};

    use super::*;

    fn hash(value: &str) -> u64 {
        FxBuildHasher::default().hash_one(value)
    }

    #[test]
    fn equal_strings_hash_equal_and_near_strings_differ() {
        assert_eq!(hash("berlin"), hash("berlin"));
        let words = ["a", "b", "ab", "ba", "berlin", "berlim", "京都", "都京", "abcdefgh", "abcdefghi", ""];
        let hashes: std::collections::HashSet<u64> = words.iter().map(|w| hash(w)).collect();
        assert_eq!(hashes.len(), words.len());
    }

    #[test]
    fn trailing_zero_bytes_change_the_hash() {
        let mut a = FxHasher::default();
        a.write(b"ab");
        let mut b = FxHasher::default();
        b.write(b"ab\0");
        assert_ne!(a.finish(), b.finish());
        let mut c = FxHasher::default();
        "x".hash(&mut c);
        assert_ne!(c.finish(), 0);
    }
}
