//! Shared support for the end-to-end tests and the conformance runner.

pub mod conformance;
