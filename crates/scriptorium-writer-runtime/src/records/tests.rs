//! Unit tests of `records`.
