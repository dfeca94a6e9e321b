//! Unit tests of `failure`.
