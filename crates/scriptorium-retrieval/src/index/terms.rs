//! The term dictionary: every term's text in one buffer, numbered in the order terms
//! were added, and found through an open-addressing table of those numbers.
//!
//! A map of owned strings cost one allocation per term (~700k at 1M events) on every
//! build and every cache load, and a lookup compared the key with a term found only
//! through that allocation. Here a table entry holds the high half of the term's hash
//! beside its number, so a probe compares text only when the hashes agree, and loading
//! appends to two vectors.

/// Numbered terms, each once.
#[derive(Clone, Default)]
pub(crate) struct Terms {
    /// Every term's text, one after the other.
    text: String,
    /// Per term number, where its text ends in `text` (it starts where the previous one ends).
    ends: Vec<u32>,
    /// Linear probing over a power-of-two table; 0 is an empty entry, else the high 32
    /// bits of the term's hash, then its number + 1.
    table: Vec<u64>,
}

impl std::fmt::Debug for Terms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terms").field("len", &self.ends.len()).field("bytes", &self.text.len()).finish()
    }
}

/// The smallest table, in entries.
const MIN_TABLE: usize = 16;

/// FxHash's multiplier (see `crate::fxhash`).
const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// A 32-bit hash of a term: FxHash over 8-byte words (the last one zero-padded, the
/// length mixed in first), folded and multiplied once more, since FxHash's last multiply
/// leaves the last bytes only in the high bits and numbered or sorted neighbouring terms
/// differ there. Written out rather than through `Hasher`, whose padding copy of the
/// last word was a call per token.
fn hash_of(term: &str) -> u32 {
    let mix = |hash: u64, word: u64| (hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    let mut chunks = term.as_bytes().chunks_exact(8);
    let mut hash = mix(0, term.len() as u64);
    for chunk in &mut chunks {
        hash = mix(hash, <[u8; 8]>::try_from(chunk).map_or(0, u64::from_le_bytes));
    }
    let tail = chunks.remainder().iter().rev().fold(0u64, |word, &byte| (word << 8) | u64::from(byte));
    hash = mix(hash, tail);
    ((hash ^ (hash >> 32)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as u32
}

impl Terms {
    /// Room for `terms` terms holding `bytes` bytes of text in all.
    pub(crate) fn with_capacity(terms: usize, bytes: usize) -> Self {
        Terms { text: String::with_capacity(bytes), ends: Vec::with_capacity(terms), ..Terms::default() }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// The text of term `id` (empty for a number not given out).
    pub(crate) fn text(&self, id: u32) -> &str {
        let id = id as usize;
        let start = id.checked_sub(1).and_then(|before| self.ends.get(before)).map_or(0, |end| *end as usize);
        let end = self.ends.get(id).map_or(start, |end| *end as usize);
        self.text.get(start..end).unwrap_or_default()
    }

    /// Every term with its number, in number order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, &str)> {
        (0..self.ends.len()).map(|id| id as u32).map(|id| (id, self.text(id)))
    }

    /// The number of `term`, if it has one.
    pub(crate) fn get(&self, term: &str) -> Option<u32> {
        self.find(term, hash_of(term))
    }

    /// [`Terms::get`] for a term whose hash is `hash`.
    fn find(&self, term: &str, hash: u32) -> Option<u32> {
        let mask = self.table.len().checked_sub(1)?;
        let mut at = self.home(hash);
        loop {
            let entry = *self.table.get(at)?;
            if entry == 0 {
                return None;
            }
            let id = (entry as u32).wrapping_sub(1);
            if (entry >> 32) as u32 == hash && self.text(id) == term {
                return Some(id);
            }
            at = (at + 1) & mask;
        }
    }

    /// The number of `term`, given the next free number if it had none; whether it is
    /// new. `None` only when the text or the numbers would outgrow `u32`.
    pub(crate) fn insert(&mut self, term: &str) -> Option<(u32, bool)> {
        let hash = hash_of(term);
        if let Some(id) = self.find(term, hash) {
            return Some((id, false));
        }
        let id = u32::try_from(self.ends.len()).ok().filter(|id| *id < u32::MAX)?;
        let end = u32::try_from(self.text.len()).ok()?.checked_add(u32::try_from(term.len()).ok()?)?;
        if (self.ends.len() + 1) * 4 > self.table.len() * 3 {
            self.grow();
        }
        self.text.push_str(term);
        self.ends.push(end);
        self.place(hash, id);
        Some((id, true))
    }

    /// Add `term`, known to be new, without indexing it: [`Terms::index_all`] must
    /// follow before any lookup. `None` when the text or the numbers would outgrow `u32`.
    pub(crate) fn push_unindexed(&mut self, term: &str) -> Option<u32> {
        let id = u32::try_from(self.ends.len()).ok().filter(|id| *id < u32::MAX)?;
        let end = u32::try_from(self.text.len()).ok()?.checked_add(u32::try_from(term.len()).ok()?)?;
        self.text.push_str(term);
        self.ends.push(end);
        Some(id)
    }

    /// Index every term afresh (after [`Terms::push_unindexed`]). Entries are placed in
    /// the order of their home entries, so that filling the table walks it once instead
    /// of jumping to a random entry per term (loading a cache is mostly this).
    pub(crate) fn index_all(&mut self) {
        let mut order: Vec<u64> =
            self.iter().map(|(id, text)| (u64::from(hash_of(text)) << 32) | u64::from(id)).collect();
        order.sort_unstable();
        self.table = Vec::new();
        self.table.resize(table_len_for(self.ends.len()), 0);
        for entry in order {
            self.place((entry >> 32) as u32, entry as u32);
        }
    }

    /// Give back memory reserved beyond what the terms need.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
    }

    /// Where probing for `hash` starts: its top bits, as many as the table needs.
    fn home(&self, hash: u32) -> usize {
        let bits = self.table.len().trailing_zeros();
        if bits == 0 { 0 } else { (u64::from(hash) >> (32 - bits.min(32))) as usize }
    }

    /// Put term `id` with `hash` into the first empty entry from its home.
    fn place(&mut self, hash: u32, id: u32) {
        let mask = self.table.len().wrapping_sub(1);
        let mut at = self.home(hash);
        while let Some(entry) = self.table.get_mut(at) {
            if *entry == 0 {
                *entry = (u64::from(hash) << 32) | u64::from(id + 1);
                return;
            }
            at = (at + 1) & mask;
        }
    }

    /// Double the table, re-placing every entry by the hash it keeps.
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.table);
        self.table.resize((old.len() * 2).max(MIN_TABLE), 0);
        for entry in old.into_iter().filter(|entry| *entry != 0) {
            self.place((entry >> 32) as u32, (entry as u32).wrapping_sub(1));
        }
    }
}

/// A table length that holds `terms` entries at most three quarters full.
fn table_len_for(terms: usize) -> usize {
    (terms.saturating_mul(4) / 3 + 1).next_power_of_two().max(MIN_TABLE)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn terms_keep_their_numbers_through_growth() {
        let mut terms = Terms::default();
        let mut expected = HashMap::new();
        // Enough terms to grow the table many times, with shared prefixes and CJK.
        for n in 0..5000u32 {
            let term = if n % 3 == 0 { format!("京都{n}") } else { format!("term{n}") };
            assert_eq!(terms.insert(&term), Some((n, true)));
            expected.insert(term, n);
        }
        assert_eq!(terms.insert(""), Some((5000, true)));
        assert_eq!(terms.insert("term1"), Some((1, false)));
        assert_eq!(terms.len(), 5001);
        for (term, id) in &expected {
            assert_eq!(terms.get(term), Some(*id));
            assert_eq!(terms.text(*id), term);
        }
        assert_eq!(terms.get(""), Some(5000));
        assert_eq!(terms.get("term5000"), None);
        assert_eq!(terms.get("京都"), None);
        assert_eq!(terms.text(6000), "");
        assert_eq!(terms.iter().count(), 5001);
        for (term, id) in &expected {
            assert_eq!(terms.insert(term), Some((*id, false)), "{term}");
        }
        assert!(terms.iter().all(|(id, text)| terms.get(text) == Some(id)));
    }

    #[test]
    fn probes_stay_short_for_sorted_numbered_terms() {
        let mut terms = Terms::default();
        let words: Vec<String> = (0..200_000u32).map(|n| format!("w{n:07}")).collect();
        for word in &words {
            assert!(terms.insert(word).is_some());
        }
        let mask = terms.table.len() - 1;
        // Total displacement of every entry from its home: linear probing at most 3/4
        // full averages 2.5 probes on random hashes; clustering would show as far more.
        let displaced: usize = (terms.table.iter().enumerate())
            .filter(|(_, entry)| **entry != 0)
            .map(|(at, entry)| at.wrapping_sub(terms.home((entry >> 32) as u32)) & mask)
            .sum();
        assert!(displaced < words.len() * 3, "{displaced}");
    }

    #[test]
    fn an_empty_dictionary_finds_nothing() {
        let terms = Terms::default();
        assert_eq!(terms.get("a"), None);
        assert_eq!(terms.get(""), None);
        let reserved = Terms::with_capacity(1000, 10);
        assert_eq!(reserved.get("a"), None);
    }

    #[test]
    fn terms_indexed_at_once_are_found_as_if_inserted() {
        let mut bulk = Terms::with_capacity(3000, 0);
        for n in 0..3000u32 {
            assert_eq!(bulk.push_unindexed(&format!("t{}", n * 7919 % 3001)), Some(n));
        }
        assert_eq!(bulk.get("t1"), None, "not indexed yet");
        bulk.index_all();
        for n in 0..3000u32 {
            assert_eq!(bulk.get(&format!("t{}", n * 7919 % 3001)), Some(n));
        }
        assert_eq!(bulk.get("t3000x"), None);
        // Inserting after a bulk index grows the table as usual.
        for n in 3000..6000u32 {
            assert_eq!(bulk.insert(&format!("u{n}")), Some((n, true)));
        }
        assert!((0..6000).all(|id| bulk.get(bulk.text(id)) == Some(id)));
    }
}
