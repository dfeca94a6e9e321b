//! Unit tests of `batch`.
