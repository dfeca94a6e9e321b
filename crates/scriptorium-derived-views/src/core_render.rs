//! `core.md`: the always-in-context block rendered from `topics/core.md` under an
//! o200k_base token budget (spec 01 §7.1, 02 §4.8).

use std::collections::BTreeSet;

use crate::paths::{retarget_links, topics_to_root};
use crate::pyspace::{is_space, rstrip};
use crate::tokens::count_o200k;

/// The token budget of `core.md` (`MemoryConfig.core_max_tokens`, not user-configurable).
pub const CORE_TOKEN_BUDGET: usize = 2000;

/// What a render kept and left out; the derive step keeps it in the runtime directory
/// (see [`CoreReport::to_json`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoreReport {
    /// The sum of the kept chunks' token counts (the blank lines between them not counted).
    pub tokens_used: usize,
    /// The budget the render ran under.
    pub budget: usize,
    /// Block ids of the kept chunks, in file order.
    pub rendered: Vec<String>,
    /// Block ids left out, in file order, each with why.
    pub left_out: Vec<LeftOut>,
}

/// A `topics/core.md` block that did not reach `core.md`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftOut {
    /// The block id.
    pub block_id: String,
    /// Why it was left out.
    pub reason: LeftOutReason,
}

/// Why a block was left out of `core.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LeftOutReason {
    /// It cites a source outside the trusted-id set (spec 01 §3.6).
    Pending,
    /// It did not fit, or came after the first chunk that did not fit.
    OverBudget,
}

impl LeftOutReason {
    /// The stable string form used in the report file: `pending`, `over_budget`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::OverBudget => "over_budget",
        }
    }
}

impl CoreReport {
    /// The left-out block ids alone, in file order.
    pub fn left_out_ids(&self) -> Vec<&str> {
        self.left_out.iter().map(|left| left.block_id.as_str()).collect()
    }
}

/// A rendered `core.md` and its report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreRender {
    /// The bytes of the root `core.md`.
    pub text: String,
    /// What was kept and left out.
    pub report: CoreReport,
}

/// A chunk of `topics/core.md` (its paragraph and the definition pieces attached to it,
/// borrowed from the master) and the block id it carries, if any.
struct Chunk<'t> {
    parts: Vec<&'t str>,
    block_id: Option<&'t str>,
}

impl Chunk<'_> {
    /// The chunk's text with its links moved from `topics/` to the root (§7.1 step 1).
    /// Moving links per chunk equals moving them in the whole file first: a link target
    /// holds no whitespace, so no link crosses a chunk boundary, and chunk boundaries,
    /// definition markers and block ids are never inside a target. Only chunks that may
    /// be kept pay for it.
    fn text(&self) -> String {
        retarget_links(&self.parts.join("\n\n"), topics_to_root)
    }
}

/// Render `core.md` from the text of `topics/core.md`, leaving out the `pending` block
/// ids and stopping at the first chunk that does not fit `budget`.
pub fn render_core(topic_core: &str, pending: &BTreeSet<String>, budget: usize) -> CoreRender {
    let mut kept: Vec<String> = Vec::new();
    let mut report = CoreReport { tokens_used: 0, budget, ..CoreReport::default() };
    let mut full = false;
    let leave_out = |report: &mut CoreReport, id: Option<&str>, reason| {
        report.left_out.extend(id.map(|block_id| LeftOut { block_id: block_id.to_owned(), reason }));
    };
    for chunk in chunks(topic_core) {
        if full {
            leave_out(&mut report, chunk.block_id, LeftOutReason::OverBudget);
            continue;
        }
        if chunk.block_id.is_some_and(|id| pending.contains(id)) {
            leave_out(&mut report, chunk.block_id, LeftOutReason::Pending);
            continue;
        }
        let text = chunk.text();
        let size = count_o200k(&text);
        if report.tokens_used + size > budget {
            full = true;
            leave_out(&mut report, chunk.block_id, LeftOutReason::OverBudget);
            continue;
        }
        report.tokens_used += size;
        report.rendered.extend(chunk.block_id.map(str::to_owned));
        kept.push(text);
    }
    let mut out = rstrip(&kept.join("\n\n")).to_owned();
    out.push('\n');
    CoreRender { text: out, report }
}

/// Split on `\n\s*\n`, strip LFs from each end, skip empty chunks, and attach each
/// footnote definition chunk to the chunk above it. The block id is the paragraph's:
/// taking it after the merge would never find one, since the merged chunk ends in the
/// definition, and pending blocks would slip into `core.md`.
fn chunks(text: &str) -> Vec<Chunk<'_>> {
    let mut out: Vec<Chunk<'_>> = Vec::new();
    for piece in split_blank_lines(text) {
        let piece = piece.trim_matches('\n');
        if piece.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if is_definition(piece) => last.parts.push(piece),
            _ => out.push(Chunk { parts: vec![piece], block_id: block_id(piece) }),
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
fn block_id(chunk: &str) -> Option<&str> {
    let body = rstrip(chunk);
    let start = body.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).map_or(0, |at| at + 1);
    let id = body.get(start..)?;
    let before = body.get(..start)?;
    let caret = before.strip_suffix('^')?;
    (!id.is_empty() && caret.ends_with(is_space)).then_some(id)
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
        assert_eq!(block_id("Text.[^e-1] ^abc-1"), Some("abc-1"));
        assert_eq!(block_id("Text.[^e-1] ^abc \n"), Some("abc"));
        assert_eq!(block_id("Text^abc"), None);
        assert_eq!(block_id("# Core"), None);
    }

    #[test]
    fn pending_and_over_budget_chunks_are_left_out() {
        let topic = "# Core\n\nA.[^e-1] ^aaaa\n\n[^e-1]: Time: `undated`; Sources: [x](../sources/x.md#s)\n\nB. ^bbbb\n\nC. ^cccc\n";
        let pending: BTreeSet<String> = ["aaaa".to_owned()].into();
        let render = render_core(topic, &pending, 1000);
        assert_eq!(render.text, "# Core\n\nB. ^bbbb\n\nC. ^cccc\n");
        assert_eq!(render.report.left_out_ids(), ["aaaa"]);
        assert_eq!(render.report.left_out[0].reason, LeftOutReason::Pending);
        assert_eq!(render.report.rendered, ["bbbb", "cccc"]);
        let tight = render_core(topic, &BTreeSet::new(), count_o200k("# Core"));
        assert_eq!(tight.text, "# Core\n");
        assert_eq!(tight.report.left_out_ids(), ["aaaa", "bbbb", "cccc"]);
        assert!(tight.report.left_out.iter().all(|left| left.reason == LeftOutReason::OverBudget));
        assert!(tight.report.rendered.is_empty());
        assert_eq!(render_core(topic, &BTreeSet::new(), 0).text, "\n");
    }
}
