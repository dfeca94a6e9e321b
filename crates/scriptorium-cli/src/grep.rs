//! `scriptorium grep`: a literal text, or with `--regex` a Python-syntax pattern, in the
//! visible workspace files (spec 02 §6.8), printed as `path:line: text` for people or as
//! the tool's JSON shape.

use std::path::PathBuf;

use clap::Args;
use scriptorium_backend_api::layers::retrieval::{GREP_LIMIT_DEFAULT, GREP_LIMIT_MAX, GrepRequest, grep};
use serde_json::json;

use crate::Outcome;
use crate::error::CliError;
use crate::output::{print, print_json};
use crate::search::retrieval_error;
use crate::workspace::Workspace;

/// Arguments of `grep`.
#[derive(Debug, Args)]
pub(crate) struct GrepArgs {
    /// The literal text to find (with --regex, the pattern).
    pub(crate) text: String,
    /// Read the text as a regex in Python `re` syntax; lookaround, backreferences and
    /// possessive quantifiers are refused (CLI_BAD_QUERY naming RETRIEVAL_INVALID_PATTERN).
    #[arg(long)]
    pub(crate) regex: bool,
    /// The workspace root (default: `$SCRIPTORIUM_WORKSPACE`, else the platform data
    /// directory + `scriptorium/memory`).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// Print `{matches: [{path, line, text}], total, truncated}` as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    /// Match case exactly (default: case-insensitive).
    #[arg(long)]
    pub(crate) case_sensitive: bool,
    /// Only files whose workspace-relative path starts with P.
    #[arg(long, value_name = "P")]
    pub(crate) path_prefix: Option<String>,
    /// The most matches to print (1 to 200; anything else is INVALID_ARGUMENT).
    #[arg(long, value_name = "N", default_value_t = GREP_LIMIT_DEFAULT)]
    pub(crate) limit: usize,
}

/// Run `grep`.
pub(crate) fn run(args: &GrepArgs) -> Result<Outcome, CliError> {
    if !(1..=GREP_LIMIT_MAX).contains(&args.limit) {
        return Err(CliError::invalid_argument(format!("--limit must be 1 to {GREP_LIMIT_MAX}, not {}", args.limit)));
    }
    let workspace = Workspace::locate(args.workspace.as_deref())?;
    let request = GrepRequest {
        query: args.text.clone(),
        regex: args.regex,
        case_sensitive: args.case_sensitive,
        prefix: args.path_prefix.clone(),
        limit: args.limit,
    };
    let response = grep(&workspace.root, &request).map_err(retrieval_error)?;
    if args.json {
        let matches: Vec<_> =
            response.matches.iter().map(|m| json!({ "path": m.path, "line": m.line, "text": m.text })).collect();
        print_json(&json!({ "matches": matches, "total": response.total, "truncated": response.truncated }))?;
        return Ok(Outcome::Clean);
    }
    if response.matches.is_empty() {
        print(&format!("no matches for {:?}\n", args.text))?;
        return Ok(Outcome::Clean);
    }
    let mut out = String::new();
    for m in &response.matches {
        out.push_str(&format!("{}:{}: {}\n", m.path, m.line, m.text));
    }
    if response.truncated {
        let more = response.total - response.matches.len();
        out.push_str(&format!("… {more} more matching lines (raise --limit, at most 200)\n"));
    }
    print(&out)?;
    Ok(Outcome::Clean)
}
