//! Integration tests of the writer runtime through its public API, on real SQLite files,
//! real workspaces and real child processes.

mod branches;
mod crash;
mod failures;
mod stage;
mod store;
mod support;
mod unpaired;
mod watcher;
mod writing;
