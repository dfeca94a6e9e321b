//! A fixed-size set of event slots: which events are live, which are candidates.

/// A set of `u32` slot numbers below a fixed length.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    /// An empty set able to hold `0..len`.
    pub(crate) fn with_len(len: usize) -> Self {
        BitSet { words: vec![0; len.div_ceil(64)] }
    }

    /// Grow so that `0..len` fits; new members are absent.
    pub(crate) fn grow(&mut self, len: usize) {
        let words = len.div_ceil(64);
        if words > self.words.len() {
            self.words.resize(words, 0);
        }
    }

    pub(crate) fn contains(&self, slot: u32) -> bool {
        let slot = slot as usize;
        self.words.get(slot / 64).is_some_and(|word| word & (1 << (slot % 64)) != 0)
    }

    /// Add or remove `slot`; a slot beyond the length is ignored (callers grow first).
    pub(crate) fn set(&mut self, slot: u32, present: bool) {
        let slot = slot as usize;
        if let Some(word) = self.words.get_mut(slot / 64) {
            if present {
                *word |= 1 << (slot % 64);
            } else {
                *word &= !(1 << (slot % 64));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_contains_and_grow() {
        let mut set = BitSet::with_len(70);
        set.set(0, true);
        set.set(69, true);
        set.set(200, true);
        assert!(set.contains(0) && set.contains(69));
        assert!(!set.contains(1) && !set.contains(200));
        set.grow(201);
        set.set(200, true);
        assert!(set.contains(200));
        set.set(69, false);
        assert!(!set.contains(69));
    }
}
