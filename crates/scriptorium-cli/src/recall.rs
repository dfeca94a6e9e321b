//! `scriptorium recall QUERY…`: the backend's automatic per-turn recall (spec 02 §1.5)
//! as the model would see it, the fenced `<memory-context>` block, with the configured
//! method, top-k and source setting (`--json` adds the hits it was made of).

use std::path::PathBuf;

use clap::Args;
use scriptorium_backend_api::config;
use scriptorium_backend_api::inspect;
use serde_json::json;

use crate::Outcome;
use crate::error::CliError;
use crate::output::{print, print_json};
use crate::workspace::Workspace;

/// Arguments of `recall`.
#[derive(Debug, Args)]
pub(crate) struct RecallArgs {
    /// The words of the user's turn (joined with spaces).
    #[arg(value_name = "QUERY", required = true, num_args = 1..)]
    pub(crate) query: Vec<String>,
    /// The workspace root (default as for `check`).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// The configuration file (default `$SCRIPTORIUM_CONFIG`, else the user's config.toml).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Print `{ok, query, text, hits}` as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Run `recall`.
pub(crate) fn run(args: &RecallArgs) -> Result<Outcome, CliError> {
    let config_path = args.config.as_deref().map(crate::workspace::expand_home);
    let loaded = config::load(config_path.as_deref(), &|name| std::env::var(name).ok());
    for warning in &loaded.warnings {
        eprintln!("scriptorium recall: config warning: {}", warning.message);
    }
    // `memory.backend = none` was refused before this verb ran (`disabled.rs`).
    let workspace = Workspace::locate(args.workspace.as_deref())?;
    let query = args.query.join(" ");
    let spinner =
        crate::progress::index_is_cold(&workspace.root).then(|| crate::progress::spinner("building the search index"));
    let recalled = inspect::recall(&workspace.root, &query, &loaded.config);
    if let Some(spinner) = spinner {
        spinner.finish_and_clear();
    }
    let (text, hits) = recalled.map_err(|error| crate::facade::error(&error))?;
    if args.json {
        let hits: Vec<_> =
            hits.iter().map(|hit| json!({"path": hit.path, "anchor": hit.anchor, "content": hit.content})).collect();
        print_json(&json!({"ok": true, "query": query, "text": text, "hits": hits}))?;
        return Ok(Outcome::Clean);
    }
    if text.is_empty() {
        print(&format!("nothing recalled for {query:?}\n"))?;
    } else {
        print(&format!("{text}\n"))?;
    }
    Ok(Outcome::Clean)
}
