//! Integration tests of the writer runtime through its public API, on real SQLite files,
//! real workspaces and real child processes.

mod backfill;
mod branches;
mod crash;
mod failures;
mod import;
mod llm_anthropic;
mod llm_openai;
mod model_server;
mod model_writer;
mod promote;
mod stage;
mod store;
mod support;
mod unpaired;
mod watcher;
mod writing;
