//! The workspace structure listing the writer's prompt ends with (spec 02 §10.3): every
//! visible stage file, and under each topic file one indented line per block,
//! `^<id>  [<nearest heading>]  <prose without citations, ≤90 chars>`, within a size
//! limit a model's context can hold ([`LISTING_BUDGET_BYTES`]).

use scriptorium_topic_markdown::TopicDocument;
use scriptorium_transaction::{Error as TxError, FileClass, classify};

use super::Stage;

/// A block's prose is cut to this many characters in the listing.
pub const LISTING_PROSE_CHARS: usize = 90;

/// The listing's size limit in bytes (about 16,000 tokens). Spec 02 §10.3 lists every
/// block of every file, which on ws-10k is 3.9 MB, about 1.2 million tokens: more than
/// any model's context. Within the limit the listing is the spec's; past it, block
/// lines stop (then file lines), and a last line says what is left out and how to see it.
pub const LISTING_BUDGET_BYTES: usize = 64 * 1024;

/// The core topic, whose blocks are listed first when the budget is short.
const CORE_TOPIC: &str = "topics/core.md";

impl Stage {
    /// The structure listing of the stage as it is now, within [`LISTING_BUDGET_BYTES`]:
    /// one line per file in path order, each topic file followed by its blocks indented
    /// by two spaces. The prompt puts it after a blank line and `Current workspace
    /// structure:` (`prompt.rs`).
    pub fn structure_listing(&self) -> Result<String, TxError> {
        self.structure_listing_within(LISTING_BUDGET_BYTES)
    }

    /// [`Stage::structure_listing`] within `budget` bytes. Every file line comes first in
    /// the budget; the block lines of `topics/core.md`, then of the other topic files in
    /// path order, fill what is left, a whole file at a time (so a listed file shows all
    /// its blocks). When the file lines alone do not fit, each folder is one line with its
    /// file count. When something is left out, a last line says so.
    pub fn structure_listing_within(&self, budget: usize) -> Result<String, TxError> {
        let files = self.files();
        let path_bytes: usize = files.iter().map(|path| path.len() + 1).sum();
        if path_bytes > budget {
            return Ok(paths_only(&files, budget));
        }
        let mut room = budget - path_bytes;
        let mut order: Vec<&String> =
            files.iter().filter(|path| classify(path.as_bytes()) == FileClass::Topic).collect();
        order.sort_by_key(|path| path.as_str() != CORE_TOPIC);
        let mut blocks: std::collections::HashMap<&str, String> = std::collections::HashMap::new();
        let mut left_out = 0usize;
        for path in order {
            if room == 0 {
                left_out += 1;
                continue;
            }
            let lines = self.block_lines(path)?;
            if lines.len() > room {
                // Listing half a file's blocks would hide the rest without saying so.
                left_out += 1;
                room = 0;
                continue;
            }
            room -= lines.len();
            blocks.insert(path.as_str(), lines);
        }
        let mut out = String::with_capacity(budget.min(1 << 20));
        for path in &files {
            out.push_str(path);
            out.push('\n');
            if let Some(lines) = blocks.get(path.as_str()) {
                out.push_str(lines);
            }
        }
        if left_out > 0 {
            out.push_str(&format!(
                "(blocks of {left_out} more topic files are not listed, to keep this short: Read a file to see them, Grep to find text)\n"
            ));
        }
        Ok(out)
    }

    /// The block lines of one topic file, each with its line break.
    fn block_lines(&self, path: &str) -> Result<String, TxError> {
        let bytes = self.read(path).map_err(super::tools::ToolError::into_tx)?;
        let mut out = String::new();
        // A file that is not UTF-8 is listed without blocks (no block can be read from it).
        let Ok(document) = TopicDocument::parse(path, &bytes) else { return Ok(out) };
        for (_, paragraph) in document.paragraphs() {
            let Some(id) = paragraph.block_id() else { continue };
            let heading = paragraph.headings.last().map(String::as_str).unwrap_or_default();
            let prose = shorten(&paragraph.content());
            out.push_str(&format!("  ^{id}  [{heading}]  {prose}\n"));
        }
        Ok(out)
    }
}

/// When even the file lines do not fit: one line per folder with the number of files
/// directly in it, in the order folders first appear, as far as they fit.
fn paths_only(files: &[String], budget: usize) -> String {
    let mut folders: Vec<(&str, usize)> = Vec::new();
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for path in files {
        let folder = path.rsplit_once('/').map_or("", |(folder, _)| folder);
        let at = *index.entry(folder).or_insert_with(|| {
            folders.push((folder, 0));
            folders.len() - 1
        });
        if let Some((_, count)) = folders.get_mut(at) {
            *count += 1;
        }
    }
    let mut out = String::new();
    let mut shown = 0;
    for (folder, count) in &folders {
        let line =
            if folder.is_empty() { format!("./ ({count} files)\n") } else { format!("{folder}/ ({count} files)\n") };
        if out.len() + line.len() > budget {
            break;
        }
        out.push_str(&line);
        shown += 1;
    }
    let hidden = folders.len() - shown;
    let more = if hidden > 0 { format!(" and {hidden} more folders") } else { String::new() };
    out.push_str(&format!(
        "(folders{more} with their file counts; files and blocks are not listed, to keep this short: Glob to list a folder, Grep to find text)\n"
    ));
    out
}

/// `text` with its whitespace collapsed, cut to [`LISTING_PROSE_CHARS`] characters (the
/// last one an ellipsis when it is cut).
fn shorten(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= LISTING_PROSE_CHARS {
        return collapsed;
    }
    let mut cut: String = collapsed.chars().take(LISTING_PROSE_CHARS - 1).collect();
    cut.push('…');
    cut
}
