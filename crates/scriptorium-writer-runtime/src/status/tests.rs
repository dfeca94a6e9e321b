//! Unit tests of `status`.
