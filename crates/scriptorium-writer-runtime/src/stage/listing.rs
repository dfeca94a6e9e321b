//! The workspace structure listing the writer's prompt ends with (spec 02 §10.3): every
//! visible stage file, and under each topic file one indented line per block,
//! `^<id>  [<nearest heading>]  <prose without citations, ≤90 chars>`.

use scriptorium_topic_markdown::TopicDocument;
use scriptorium_transaction::{Error as TxError, FileClass, classify};

use super::Stage;

/// A block's prose is cut to this many characters in the listing.
pub const LISTING_PROSE_CHARS: usize = 90;

impl Stage {
    /// The structure listing of the stage as it is now: one line per file in path
    /// order, each topic file followed by its blocks indented by two spaces. The prompt
    /// puts it after a blank line and `Current workspace structure:` (`prompt.rs`).
    pub fn structure_listing(&self) -> Result<String, TxError> {
        let mut out = String::new();
        for path in self.files() {
            out.push_str(&path);
            out.push('\n');
            if classify(path.as_bytes()) != FileClass::Topic {
                continue;
            }
            let bytes = self.read(&path).map_err(super::tools::ToolError::into_tx)?;
            // A file that is not UTF-8 is listed without blocks (no block can be read from it).
            let Ok(document) = TopicDocument::parse(&path, &bytes) else { continue };
            for (_, paragraph) in document.paragraphs() {
                let Some(id) = paragraph.block_id() else { continue };
                let heading = paragraph.headings.last().map(String::as_str).unwrap_or_default();
                let prose = shorten(&paragraph.content());
                out.push_str(&format!("  ^{id}  [{heading}]  {prose}\n"));
            }
        }
        Ok(out)
    }
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
