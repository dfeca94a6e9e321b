//! The byte primitives of the cache file: LEB128 varints, length-prefixed strings, and
//! checksums over the payload's parts.
//!
//! A payload is made of parts that are read independently (on two threads when the
//! machine has them): `[length of part 1, u64 LE][part 1][part 2]`. Each part has its
//! own checksum, and the header holds the checksum of the parts' checksums
//! ([`combined`]).
//!
//! The reader never trusts a count: every length is checked against the bytes left
//! before anything is reserved, so a damaged or hostile cache fails to decode (and is
//! rebuilt) instead of allocating gigabytes or panicking.

use std::hash::Hasher as _;

use crate::fxhash::FxHasher;

/// Why a cache could not be decoded. The cache is then ignored and rebuilt, so the
/// reason is only reported, never matched on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Damaged(pub(crate) &'static str);

/// A 64-bit checksum of `bytes` (FxHash over 8-byte words, plus the length). It catches
/// torn writes and flipped bits, not deliberate forgery: a forged cache can only make
/// this workspace's own search wrong, and anyone who can write `.scriptorium/` can
/// rewrite the memory files themselves.
pub(crate) fn checksum(bytes: &[u8]) -> u64 {
    let mut hasher = FxHasher::default();
    hasher.write(bytes);
    hasher.write_u64(bytes.len() as u64);
    hasher.finish()
}

/// The checksum a cache header states for parts with checksums `sums`, in order.
pub(crate) fn combined(sums: &[u64]) -> u64 {
    let bytes: Vec<u8> = sums.iter().flat_map(|sum| sum.to_le_bytes()).collect();
    checksum(&bytes)
}

/// The bytes before part 1: its length.
pub(crate) const PART_PREFIX: usize = 8;

/// A payload's two parts (see the module documentation), or `None` when its prefix
/// does not fit it.
#[cfg(test)]
pub(crate) fn split_parts(payload: &[u8]) -> Option<(&[u8], &[u8])> {
    let (prefix, rest) = payload.split_first_chunk::<PART_PREFIX>()?;
    let first = usize::try_from(u64::from_le_bytes(*prefix)).ok()?;
    (first <= rest.len()).then(|| rest.split_at(first))
}

/// The checksum of a whole payload held in memory, as [`combined`] states it (a payload
/// whose prefix does not fit it gets the checksum of no parts).
#[cfg(test)]
pub(crate) fn payload_checksum(payload: &[u8]) -> u64 {
    match split_parts(payload) {
        Some((first, second)) => combined(&[checksum(first), checksum(second)]),
        None => combined(&[]),
    }
}

/// Each part's length and checksum, in order.
pub(crate) type PartSums = Vec<(u64, u64)>;

/// Bytes a streaming [`Writer`] or [`Reader`] moves to or from its file at a time: a
/// multiple of 8, so that the checksum of the pieces equals that of the whole.
const CHUNK: usize = 1 << 20;

/// An append-only byte buffer with the cache's encodings, in parts ([`Writer::end_part`]);
/// with a file, it streams to it (the index is never held twice, as index and as bytes).
#[derive(Debug, Default)]
pub(crate) struct Writer {
    pub(crate) bytes: Vec<u8>,
    sink: Option<std::fs::File>,
    hasher: FxHasher,
    /// Bytes of the current part already written to the file.
    flushed: u64,
    /// Without a file: where the current part starts in `bytes`.
    part_start: usize,
    /// The finished parts.
    parts: PartSums,
    failed: Option<std::io::Error>,
}

impl Writer {
    /// A writer appending to `file` from its current position.
    pub(crate) fn to_file(file: std::fs::File) -> Self {
        Writer { sink: Some(file), ..Writer::default() }
    }

    /// Write the buffered bytes (all when `all`, else a multiple of 8) to the file.
    fn flush(&mut self, all: bool) {
        let Some(file) = self.sink.as_mut() else { return };
        let len = if all { self.bytes.len() } else { self.bytes.len() & !7 };
        let Some(part) = self.bytes.get(..len) else { return };
        if self.failed.is_none()
            && let Err(err) = std::io::Write::write_all(file, part)
        {
            self.failed = Some(err);
        }
        self.hasher.write(part);
        self.flushed += len as u64;
        self.bytes.drain(..len);
    }

    fn pushed(&mut self) {
        if self.sink.is_some() && self.bytes.len() >= CHUNK {
            self.flush(false);
        }
    }

    /// End the current part: later bytes start the next one, with its own checksum.
    pub(crate) fn end_part(&mut self) {
        if self.sink.is_some() {
            self.flush(true);
            self.hasher.write_u64(self.flushed);
            self.parts.push((self.flushed, self.hasher.finish()));
            (self.hasher, self.flushed) = (FxHasher::default(), 0);
        } else {
            let part = self.bytes.get(self.part_start..).unwrap_or_default();
            self.parts.push((part.len() as u64, checksum(part)));
            self.part_start = self.bytes.len();
        }
    }

    /// The file (if any) and each part's length and checksum (bytes after the last
    /// [`Writer::end_part`] make one more part); the first write error.
    pub(crate) fn finish(mut self) -> std::io::Result<(Option<std::fs::File>, PartSums)> {
        let pending = if self.sink.is_some() {
            self.flushed > 0 || !self.bytes.is_empty()
        } else {
            self.part_start < self.bytes.len()
        };
        if pending {
            self.end_part();
        }
        if let Some(err) = self.failed {
            return Err(err);
        }
        Ok((self.sink, self.parts))
    }

    /// The payload written to memory: the length of part 1, then the bytes
    /// (see the module documentation).
    #[cfg(test)]
    pub(crate) fn into_payload(mut self) -> Vec<u8> {
        if self.part_start < self.bytes.len() || self.parts.is_empty() {
            self.end_part();
        }
        let first = self.parts.first().map_or(0, |(len, _)| *len);
        [&first.to_le_bytes()[..], &self.bytes].concat()
    }

    /// Part 1 and the rest of what was written to memory (`None` with a file).
    pub(crate) fn memory_parts(&self) -> Option<(&[u8], &[u8])> {
        if self.sink.is_some() {
            return None;
        }
        let first = self.parts.first().map_or(self.bytes.len(), |(len, _)| *len as usize);
        self.bytes.split_at_checked(first)
    }

    pub(crate) fn u64(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.bytes.push((value as u8) | 0x80);
            value >>= 7;
        }
        self.bytes.push(value as u8);
        self.pushed();
    }

    pub(crate) fn usize(&mut self, value: usize) {
        self.u64(value as u64);
    }

    /// A signed value, zig-zag encoded (timestamps before 1970 stay small).
    pub(crate) fn i64(&mut self, value: i64) {
        self.u64(((value << 1) ^ (value >> 63)) as u64);
    }

    pub(crate) fn bool(&mut self, value: bool) {
        self.u64(u64::from(value));
    }

    pub(crate) fn str(&mut self, value: &str) {
        self.usize(value.len());
        self.bytes.extend_from_slice(value.as_bytes());
        self.pushed();
    }

    /// A value as 4 bytes, little-endian (for checksums, which a varint would lengthen).
    pub(crate) fn fixed_u32(&mut self, value: u32) {
        self.raw(&value.to_le_bytes());
    }

    /// Bytes as they are (their length is written before them).
    pub(crate) fn raw(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
        self.pushed();
    }

    pub(crate) fn strings(&mut self, values: &[String]) {
        self.usize(values.len());
        for value in values {
            self.str(value);
        }
    }

    pub(crate) fn option_str(&mut self, value: Option<&str>) {
        match value {
            None => self.bool(false),
            Some(text) => {
                self.bool(true);
                self.str(text);
            }
        }
    }
}

/// A cursor over cache bytes, read from a file a chunk at a time (the whole file is
/// never in memory beside the index it decodes to), checksummed as it goes.
pub(crate) struct Reader<'a> {
    buf: Vec<u8>,
    at: usize,
    source: Option<&'a mut (dyn std::io::Read + Send)>,
    /// Bytes still in the source.
    left: u64,
    hasher: FxHasher,
    len: u64,
}

impl std::fmt::Debug for Reader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader").field("at", &self.at).field("left", &self.left).finish_non_exhaustive()
    }
}

impl<'a> Reader<'a> {
    /// A reader over bytes in memory.
    #[cfg(test)]
    pub(crate) fn new(bytes: &[u8]) -> Self {
        let mut hasher = FxHasher::default();
        hasher.write(bytes);
        Reader { buf: bytes.to_vec(), at: 0, source: None, left: 0, hasher, len: bytes.len() as u64 }
    }

    /// A reader over the next `len` bytes of `source`.
    pub(crate) fn streaming(source: &'a mut (dyn std::io::Read + Send), len: u64) -> Self {
        Reader { buf: Vec::new(), at: 0, source: Some(source), left: len, hasher: FxHasher::default(), len }
    }

    /// How many bytes are left.
    pub(crate) fn remaining(&self) -> usize {
        let buffered = self.buf.len().saturating_sub(self.at);
        buffered.saturating_add(usize::try_from(self.left).unwrap_or(usize::MAX))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The checksum of all the bytes, once they are all read (see [`checksum`]).
    pub(crate) fn checksum(&self) -> Option<u64> {
        let mut hasher = self.hasher;
        hasher.write_u64(self.len);
        (self.left == 0).then(|| hasher.finish())
    }

    /// Make `len` bytes available from `at`.
    fn fill(&mut self, len: usize) -> Result<(), Damaged> {
        let have = self.buf.len().saturating_sub(self.at);
        if have >= len {
            return Ok(());
        }
        if (len - have) as u64 > self.left {
            return Err(Damaged("truncated"));
        }
        let Some(source) = self.source.as_mut() else { return Err(Damaged("truncated")) };
        self.buf.drain(..self.at);
        self.at = 0;
        // A multiple of 8 unless it is the rest of the source (see `CHUNK`).
        let want = (len - have).max(CHUNK).next_multiple_of(8) as u64;
        let pull = usize::try_from(want.min(self.left)).map_err(|_| Damaged("truncated"))?;
        let start = self.buf.len();
        self.buf.resize(start + pull, 0);
        let fresh = self.buf.get_mut(start..).unwrap_or_default();
        source.read_exact(fresh).map_err(|_| Damaged("truncated"))?;
        self.hasher.write(fresh);
        self.left -= pull as u64;
        Ok(())
    }

    pub(crate) fn take(&mut self, len: usize) -> Result<&[u8], Damaged> {
        self.fill(len)?;
        let part = self.buf.get(self.at..self.at + len).ok_or(Damaged("truncated"))?;
        self.at += len;
        Ok(part)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, Damaged> {
        if self.at >= self.buf.len() {
            self.fill(1)?;
        }
        let byte = *self.buf.get(self.at).ok_or(Damaged("truncated"))?;
        self.at += 1;
        Ok(byte)
    }

    #[inline]
    pub(crate) fn u64(&mut self) -> Result<u64, Damaged> {
        // Most numbers in a cache are below 128: one byte, already buffered.
        if let Some(&byte) = self.buf.get(self.at)
            && byte < 0x80
        {
            self.at += 1;
            return Ok(u64::from(byte));
        }
        self.long_u64()
    }

    fn long_u64(&mut self) -> Result<u64, Damaged> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8()?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(Damaged("varint too long"))
    }

    pub(crate) fn fixed_u32(&mut self) -> Result<u32, Damaged> {
        let bytes = self.take(4)?;
        Ok(u32::from_le_bytes(bytes.try_into().map_err(|_| Damaged("truncated"))?))
    }

    pub(crate) fn u32(&mut self) -> Result<u32, Damaged> {
        u32::try_from(self.u64()?).map_err(|_| Damaged("number out of range"))
    }

    pub(crate) fn usize(&mut self) -> Result<usize, Damaged> {
        usize::try_from(self.u64()?).map_err(|_| Damaged("number out of range"))
    }

    /// A count of items that each take at least one byte: never more than the bytes left.
    pub(crate) fn count(&mut self) -> Result<usize, Damaged> {
        let count = self.usize()?;
        if count > self.remaining() {
            return Err(Damaged("count beyond the end"));
        }
        Ok(count)
    }

    pub(crate) fn i64(&mut self) -> Result<i64, Damaged> {
        let raw = self.u64()?;
        Ok(((raw >> 1) as i64) ^ -((raw & 1) as i64))
    }

    pub(crate) fn bool(&mut self) -> Result<bool, Damaged> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(Damaged("bad flag")),
        }
    }

    pub(crate) fn str(&mut self) -> Result<&str, Damaged> {
        let len = self.usize()?;
        if len > self.remaining() {
            return Err(Damaged("truncated"));
        }
        std::str::from_utf8(self.take(len)?).map_err(|_| Damaged("string not UTF-8"))
    }

    pub(crate) fn string(&mut self) -> Result<String, Damaged> {
        self.str().map(str::to_owned)
    }

    pub(crate) fn strings(&mut self) -> Result<Vec<String>, Damaged> {
        let count = self.count()?;
        (0..count).map(|_| self.string()).collect()
    }

    pub(crate) fn option_string(&mut self) -> Result<Option<String>, Damaged> {
        if self.bool()? { self.string().map(Some) } else { Ok(None) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip() {
        let mut out = Writer::default();
        for value in [0u64, 1, 127, 128, 300, u64::MAX] {
            out.u64(value);
        }
        for value in [0i64, -1, 1, i64::MIN, i64::MAX] {
            out.i64(value);
        }
        out.str("héllo");
        out.option_str(None);
        out.strings(&["a".to_owned(), String::new()]);
        let mut input = Reader::new(&out.bytes);
        for value in [0u64, 1, 127, 128, 300, u64::MAX] {
            assert_eq!(input.u64(), Ok(value));
        }
        for value in [0i64, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(input.i64(), Ok(value));
        }
        assert_eq!(input.str(), Ok("héllo"));
        assert_eq!(input.option_string(), Ok(None));
        assert_eq!(input.strings(), Ok(vec!["a".to_owned(), String::new()]));
        assert!(input.is_empty());
    }

    /// Parts streamed to a file (in chunks, the first part's length not a multiple of 8)
    /// get the checksums the same parts get in memory, and read back alike.
    #[test]
    fn streamed_parts_match_parts_in_memory() {
        let write = |out: &mut Writer| {
            (0..(CHUNK as u64 / 3)).for_each(|n| out.u64(n * 31));
            out.str("part one ends here");
            out.end_part();
            (0..(CHUNK as u64 / 2)).for_each(|n| out.u64(n ^ 0x55));
        };
        let mut memory = Writer::default();
        write(&mut memory);
        let (first, second) = memory.memory_parts().expect("in memory");
        let sums = [checksum(first), checksum(second)];
        let (first_len, second_len) = (first.len() as u64, second.len() as u64);
        let payload = memory.into_payload();
        assert_eq!(payload_checksum(&payload), combined(&sums));
        assert_ne!(first_len % 8, 0, "the test should cover an unaligned part end");

        let path = std::env::temp_dir().join(format!("scriptorium-codec-parts-{}", std::process::id()));
        let mut streamed = Writer::to_file(std::fs::File::create(&path).expect("create"));
        write(&mut streamed);
        let (_, parts) = streamed.finish().expect("written");
        assert_eq!(parts, [(first_len, sums[0]), (second_len, sums[1])]);
        let bytes = std::fs::read(&path).expect("read");
        let _ = std::fs::remove_file(&path);
        assert_eq!(bytes, payload.get(PART_PREFIX..).expect("prefix"));

        let (mut first, mut second) = split_parts(&payload).expect("two parts");
        let mut input = Reader::streaming(&mut first, first_len);
        (0..(CHUNK as u64 / 3)).for_each(|n| assert_eq!(input.u64(), Ok(n * 31)));
        assert_eq!(input.str(), Ok("part one ends here"));
        assert_eq!(input.checksum(), Some(sums[0]));
        let mut input = Reader::streaming(&mut second, second_len);
        (0..(CHUNK as u64 / 2)).for_each(|n| assert_eq!(input.u64(), Ok(n ^ 0x55)));
        assert_eq!(input.checksum(), Some(sums[1]));
        assert!(split_parts(&[1, 0, 0, 0, 0, 0, 0, 0]).is_none());
        assert!(split_parts(&[0; 7]).is_none());
    }

    #[test]
    fn lies_about_lengths_are_damage() {
        let mut out = Writer::default();
        out.usize(1_000_000);
        assert_eq!(Reader::new(&out.bytes).count(), Err(Damaged("count beyond the end")));
        assert_eq!(Reader::new(&out.bytes).str(), Err(Damaged("truncated")));
        assert_eq!(Reader::new(&[0xff; 11]).u64(), Err(Damaged("varint too long")));
        assert_eq!(Reader::new(&[2]).bool(), Err(Damaged("bad flag")));
        assert_ne!(checksum(b"abc"), checksum(b"abd"));
    }
}
