//! `memory_grep` (spec 02 §7, §6.8): literal text in the visible files, through the
//! retrieval layer's in-process grep (never a system grep, never an internal file).

use scriptorium_retrieval::{GREP_LIMIT_DEFAULT, GrepRequest, grep};
use serde_json::Value;

use super::output::{Args, tx_error};
use super::{Caller, ToolSpec, notice};
use crate::fence::sanitize_context;
use crate::local::Host;
use crate::tier::Capability;

pub(super) const SPEC: ToolSpec = ToolSpec {
    name: "memory_grep",
    description: "Find the exact text of a query (literal, not a pattern; case-insensitive unless case_sensitive) in \
every memory file: topic notes, archived conversation records and derived views. Answers one `<path>:<line>: <text>` \
line per match. Use it for a name, a number or a phrase that ranked search misses; read around a match with memory_get.",
    input_schema: r#"{"type":"object","properties":{"query":{"type":"string","description":"The literal text to find."},"prefix":{"type":"string","description":"Only files whose workspace-relative path starts with this, for example topics/people or sources/."},"case_sensitive":{"type":"boolean","description":"Match upper and lower case exactly.","default":false}},"required":["query"]}"#,
    max_chars: 20000,
    capability: Capability::MemoryRead,
};

pub(super) fn run(host: &Host<'_>, arguments: &Value, _caller: &Caller) -> String {
    run_checked(host, arguments).unwrap_or_else(|error| tx_error(&error))
}

fn run_checked(host: &Host<'_>, arguments: &Value) -> Result<String, crate::Error> {
    let args = Args::new(arguments)?;
    // The text is literal: surrounding spaces are part of it, only a blank one is refused.
    let query = match args.string("query")? {
        Some(query) if !query.trim().is_empty() => query,
        _ => return Ok(notice("memory_grep needs a query: the text to find.")),
    };
    let request = GrepRequest {
        query: query.to_owned(),
        regex: false,
        case_sensitive: args.boolean("case_sensitive", false)?,
        prefix: args.text("prefix")?.map(str::to_owned),
        limit: GREP_LIMIT_DEFAULT,
    };
    let response = grep(host.root, &request)?;
    if response.matches.is_empty() {
        return Ok(notice(format!("No memory file contains {query:?}.")));
    }
    let mut out = String::new();
    for found in &response.matches {
        out.push_str(&format!("{}:{}: {}\n", found.path, found.line, sanitize_context(&found.text)));
    }
    if response.truncated {
        let more = response.total.saturating_sub(response.matches.len());
        out.push_str(&format!("… {more} more matching lines: narrow the query or the prefix.\n"));
    }
    Ok(out)
}
