//! Integration tests of the backend contract on real workspaces on disk.

mod contract;
mod support;
mod tools_write;
