//! `memory_browse` (spec 02 §7): the visible files of the workspace's one listing
//! (topics, sources and derived views), at most 200, each topic file with its number of
//! blocks (decision 7).

use scriptorium_topic_markdown::TopicDocument;
use scriptorium_transaction::FileClass;
use serde_json::Value;

use super::output::{Args, tx_error};
use super::{Caller, ToolSpec, notice};
use crate::error::Error;
use crate::local::Host;
use crate::tier::Capability;

pub(super) const SPEC: ToolSpec = ToolSpec {
    name: "memory_browse",
    description: "List the files of long-term memory: topic notes (with how many blocks each holds), archived \
conversation records under sources/, and derived views such as timeline/ and core.md. Pass a prefix such as \
topics/people to list part of it. Read a file with memory_get.",
    input_schema: r#"{"type":"object","properties":{"prefix":{"type":"string","description":"Only files whose workspace-relative path starts with this, for example topics/ or topics/people."}}}"#,
    max_chars: 30000,
    capability: Capability::MemoryRead,
};

/// The most files one listing shows.
const MAX_ENTRIES: usize = 200;

pub(super) fn run(host: &Host<'_>, arguments: &Value, _caller: &Caller) -> String {
    run_checked(host, arguments).unwrap_or_else(|error| tx_error(&error))
}

fn run_checked(host: &Host<'_>, arguments: &Value) -> Result<String, Error> {
    let args = Args::new(arguments)?;
    let prefix = args.text("prefix")?.map(|prefix| prefix.trim_start_matches('/')).unwrap_or_default();
    let listed = host.warm.listed(host.root)?;
    let files: Vec<(&str, FileClass)> = listed
        .files
        .iter()
        .filter(|(path, _)| path.starts_with(prefix))
        .map(|(path, class)| (path.as_str(), *class))
        .collect();
    if files.is_empty() {
        return Ok(notice(if prefix.is_empty() {
            "Memory is empty so far. It fills itself: the background writer records what matters from \
             conversations, and memory_update saves something on request."
                .to_owned()
        } else {
            format!("No memory file path starts with {prefix:?}; memory_browse without a prefix lists every file.")
        }));
    }
    let mut out = format!("{} file(s):\n\n", files.len());
    for (path, class) in files.iter().take(MAX_ENTRIES) {
        out.push_str("  ");
        out.push_str(path);
        if *class == FileClass::Topic {
            let blocks = listed.blocks(path, || block_count(host, path));
            out.push_str(&format!(" ({blocks} block{})", if blocks == 1 { "" } else { "s" }));
        }
        out.push('\n');
    }
    if files.len() > MAX_ENTRIES {
        out.push_str(&format!(
            "… {} more not shown: pass a longer prefix (for example topics/people) to list them.\n",
            files.len() - MAX_ENTRIES
        ));
    }
    Ok(out)
}

/// The blocks (paragraphs with a block id) of a topic file; 0 when it cannot be read.
fn block_count(host: &Host<'_>, path: &str) -> usize {
    let Ok(bytes) = std::fs::read(host.root.join(path)) else { return 0 };
    let text = String::from_utf8_lossy(&bytes);
    TopicDocument::from_text(path, &text).paragraphs().filter(|(_, paragraph)| paragraph.block_id().is_some()).count()
}
