//! The byte primitives of the cache file: LEB128 varints, length-prefixed strings, and
//! a checksum over the payload.
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

/// An append-only byte buffer with the cache's encodings.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    pub(crate) bytes: Vec<u8>,
}

impl Writer {
    pub(crate) fn u64(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.bytes.push((value as u8) | 0x80);
            value >>= 7;
        }
        self.bytes.push(value as u8);
    }

    pub(crate) fn usize(&mut self, value: usize) {
        self.u64(value as u64);
    }

    /// A signed value, zig-zag encoded (timestamps before 1970 stay small).
    pub(crate) fn i64(&mut self, value: i64) {
        self.u64(((value << 1) ^ (value >> 63)) as u64);
    }

    pub(crate) fn bool(&mut self, value: bool) {
        self.bytes.push(u8::from(value));
    }

    pub(crate) fn str(&mut self, value: &str) {
        self.usize(value.len());
        self.bytes.extend_from_slice(value.as_bytes());
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

/// A cursor over cache bytes.
#[derive(Debug)]
pub(crate) struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { rest: bytes }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    pub(crate) fn take(&mut self, len: usize) -> Result<&'a [u8], Damaged> {
        if len > self.rest.len() {
            return Err(Damaged("truncated"));
        }
        let (head, tail) = self.rest.split_at(len);
        self.rest = tail;
        Ok(head)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, Damaged> {
        let (&first, tail) = self.rest.split_first().ok_or(Damaged("truncated"))?;
        self.rest = tail;
        Ok(first)
    }

    pub(crate) fn u64(&mut self) -> Result<u64, Damaged> {
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

    pub(crate) fn u32(&mut self) -> Result<u32, Damaged> {
        u32::try_from(self.u64()?).map_err(|_| Damaged("number out of range"))
    }

    pub(crate) fn usize(&mut self) -> Result<usize, Damaged> {
        usize::try_from(self.u64()?).map_err(|_| Damaged("number out of range"))
    }

    /// A count of items that each take at least one byte: never more than the bytes left.
    pub(crate) fn count(&mut self) -> Result<usize, Damaged> {
        let count = self.usize()?;
        if count > self.rest.len() {
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

    pub(crate) fn str(&mut self) -> Result<&'a str, Damaged> {
        let len = self.usize()?;
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
