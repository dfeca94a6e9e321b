//! End-to-end tests of the workspace as a user meets it: real processes, real files.
//!
//! One binary with a module per scenario (ripgrep's `tests/tests.rs` layout), so that
//! the 2-core CI links one test executable instead of many.

mod conformance;
