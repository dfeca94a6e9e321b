//! `core.md`: the always-in-context block rendered from `topics/core.md` under an
//! o200k_base token budget (spec 01 §7.1, 02 §4.8).

use std::collections::BTreeSet;

use crate::paths::{retarget_links, topics_to_root};
use crate::pyspace::{is_space, rstrip};
use crate::tokens::count_o200k;

/// The token budget of `core.md` (`MemoryConfig.core_max_tokens`, not user-configurable).
pub const CORE_TOKEN_BUDGET: usize = 2000;

/// What a render kept and left out; the caller keeps it in the runtime directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoreReport {
    /// The sum of the kept chunks' token counts (the blank lines between them not counted).
    pub tokens_used: usize,
    /// The budget the render ran under.
    pub budget: usize,
    /// Block ids left out, in file order: pending blocks, then every chunk after the
    /// first one that did not fit.
    pub left_out: Vec<String>,
}

/// A rendered `core.md` and its report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreRender {
    /// The bytes of the root `core.md`.
    pub text: String,
    /// What was kept and left out.
    pub report: CoreReport,
}

/// A chunk of `topics/core.md` and the block id it carries, if any.
struct Chunk {
    text: String,
    block_id: Option<String>,
}

/// Render `core.md` from the text of `topics/core.md`, leaving out the `pending` block
/// ids and stopping at the first chunk that does not fit `budget`.
pub fn render_core(topic_core: &str, pending: &BTreeSet<String>, budget: usize) -> CoreRender {
    let text = retarget_links(topic_core, topics_to_root);
    let mut kept: Vec<String> = Vec::new();
    let mut report = CoreReport { tokens_used: 0, budget, left_out: Vec::new() };
    let mut full = false;
    for chunk in chunks(&text) {
        if full {
            report.left_out.extend(chunk.block_id);
            continue;
        }
        if let Some(id) = chunk.block_id.as_ref().filter(|id| pending.contains(*id)) {
            report.left_out.push(id.clone());
            continue;
        }
        let size = count_o200k(&chunk.text);
        if report.tokens_used + size > budget {
            full = true;
            report.left_out.extend(chunk.block_id);
            continue;
        }
        report.tokens_used += size;
        kept.push(chunk.text);
    }
    let mut out = rstrip(&kept.join("\n\n")).to_owned();
    out.push('\n');
    CoreRender { text: out, report }
}

/// Split on `\n\s*\n`, strip LFs from each end, skip empty chunks, and attach each
/// footnote definition chunk to the chunk above it. The block id is the paragraph's:
/// taking it after the merge would never find one, since the merged chunk ends in the
/// definition, and pending blocks would slip into `core.md`.
fn chunks(text: &str) -> Vec<Chunk> {
    let mut out: Vec<Chunk> = Vec::new();
    for piece in split_blank_lines(text) {
        let piece = piece.trim_matches('\n');
        if piece.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if is_definition(piece) => {
                last.text.push_str("\n\n");
                last.text.push_str(piece);
            }
            _ => out.push(Chunk { text: piece.to_owned(), block_id: block_id(piece) }),
        }
    }
    out
}

/// Python's `re.split(r"\n\s*\n", text)`: each separator runs from an LF to the last LF
/// of the whitespace that follows it.
fn split_blank_lines(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut at = 0;
    while let Some(found) = text.get(at..).and_then(|rest| rest.find('\n')) {
        let lf = at + found;
        let after = lf + 1;
        let run: usize = text.get(after..).unwrap_or("").chars().take_while(|&c| is_space(c)).map(char::len_utf8).sum();
        match text.get(after..after + run).and_then(|ws| ws.rfind('\n')) {
            Some(last) => {
                pieces.push(text.get(start..lf).unwrap_or(""));
                start = after + last + 1;
                at = start;
            }
            None => at = after,
        }
    }
    pieces.push(text.get(start..).unwrap_or(""));
    pieces
}

/// Whether the left-stripped chunk starts with `[^FID]:`.
fn is_definition(chunk: &str) -> bool {
    let Some(rest) = chunk.trim_start().strip_prefix("[^") else {
        return false;
    };
    let id_len = rest.find("]:").unwrap_or(0);
    id_len > 0 && rest.get(..id_len).is_some_and(|id| !id.contains([']', '[']) && !id.contains(is_space))
}

/// The match of `\s\^([A-Za-z0-9-]+)\s*$` (`$` also before a final LF, as in Python).
fn block_id(chunk: &str) -> Option<String> {
    let body = rstrip(chunk);
    let start = body.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).map_or(0, |at| at + 1);
    let id = body.get(start..)?;
    let before = body.get(..start)?;
    let caret = before.strip_suffix('^')?;
    (!id.is_empty() && caret.ends_with(is_space)).then(|| id.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_python_re_split() {
        assert_eq!(split_blank_lines("a\n\nb\n \n\nc\nd"), ["a", "b", "c\nd"]);
        assert_eq!(split_blank_lines("a\nb"), ["a\nb"]);
    }

    #[test]
    fn block_id_is_the_trailing_caret_run() {
        assert_eq!(block_id("Text.[^e-1] ^abc-1").as_deref(), Some("abc-1"));
        assert_eq!(block_id("Text.[^e-1] ^abc \n").as_deref(), Some("abc"));
        assert_eq!(block_id("Text^abc"), None);
        assert_eq!(block_id("# Core"), None);
    }

    #[test]
    fn pending_and_over_budget_chunks_are_left_out() {
        let topic = "# Core\n\nA.[^e-1] ^aaaa\n\n[^e-1]: Time: `undated`; Sources: [x](../sources/x.md#s)\n\nB. ^bbbb\n\nC. ^cccc\n";
        let pending: BTreeSet<String> = ["aaaa".to_owned()].into();
        let render = render_core(topic, &pending, 1000);
        assert_eq!(render.text, "# Core\n\nB. ^bbbb\n\nC. ^cccc\n");
        assert_eq!(render.report.left_out, ["aaaa"]);
        let tight = render_core(topic, &BTreeSet::new(), count_o200k("# Core"));
        assert_eq!(tight.text, "# Core\n");
        assert_eq!(tight.report.left_out, ["aaaa", "bbbb", "cccc"]);
        assert_eq!(render_core(topic, &BTreeSet::new(), 0).text, "\n");
    }
}
