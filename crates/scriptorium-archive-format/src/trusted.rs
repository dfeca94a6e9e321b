//! The trusted-id set of one source file (spec 01 §3.6), which core rendering uses to
//! decide which citations it may show.

use std::collections::BTreeSet;

use crate::ids::is_v2_source_path;
use crate::meta::TrustState;
use crate::parse::parse;
use crate::retrieval_text::digit_run;

const SOURCE_ID_OPEN: &str = "<!-- source-id:";
const COMMENT_CLOSE: &str = " -->";
const BENCHMARK_ANCHOR_OPEN: &str = "<a id=\"d";
const ANCHOR_CLOSE: &str = "\"></a>";

/// The source ids a file vouches for, sorted and without duplicates.
///
/// A v2 archive vouches for the frames of its valid prefix whose metadata is trusted
/// or absent. Any other file is read loosely: every `<!-- source-id:X -->` anywhere in
/// the text, and every benchmark anchor `<a id="d<conv>-<turn>"></a>` as `D<conv>:<turn>`.
///
/// ```
/// use scriptorium_archive_format::trusted_source_ids;
///
/// let text = "# D1\n\n<a id=\"d1-1\"></a>\n[2024-01-02] user: hi [D1:1]\n";
/// assert_eq!(trusted_source_ids("sources/D1.md", text), ["D1:1"]);
/// ```
pub fn trusted_source_ids(relative_path: &str, text: &str) -> Vec<String> {
    let ids: BTreeSet<String> = if is_v2_source_path(relative_path) {
        parse(text, relative_path)
            .frames
            .iter()
            .filter(|frame| frame.effective_meta().trust_state == TrustState::Trusted)
            .map(|frame| frame.source_id.to_owned())
            .collect()
    } else {
        text.split('\n').flat_map(|line| comment_source_ids(line).chain(benchmark_anchor_ids(line))).collect()
    };
    ids.into_iter().collect()
}

/// Python `re.findall(r"<!-- source-id:(.+?) -->", line)`.
fn comment_source_ids(line: &str) -> impl Iterator<Item = String> + '_ {
    let mut rest = line;
    std::iter::from_fn(move || {
        loop {
            let open = rest.find(SOURCE_ID_OPEN)?;
            let value_start = open + SOURCE_ID_OPEN.len();
            let value = rest.get(value_start..).unwrap_or_default();
            // `.+?` takes at least one character before the closing ` -->`.
            let first_len = value.chars().next().map_or(0, char::len_utf8);
            match value.get(first_len..).and_then(|tail| tail.find(COMMENT_CLOSE)) {
                Some(found) if first_len > 0 => {
                    let id = value.get(..first_len + found).unwrap_or_default().to_owned();
                    rest = value.get(first_len + found + COMMENT_CLOSE.len()..).unwrap_or_default();
                    return Some(id);
                }
                _ => rest = value,
            }
        }
    })
}

/// Python `re.findall(r'<a id="d(\d+)-(\d+)"></a>', line)`, each as `D<conv>:<turn>`.
fn benchmark_anchor_ids(line: &str) -> impl Iterator<Item = String> + '_ {
    line.match_indices(BENCHMARK_ANCHOR_OPEN).filter_map(|(open, _)| {
        let rest = line.get(open + BENCHMARK_ANCHOR_OPEN.len()..)?;
        let conv_len = digit_run(rest);
        let after_conv = rest.get(conv_len..)?.strip_prefix('-')?;
        let turn_len = digit_run(after_conv);
        let after_turn = after_conv.get(turn_len..)?;
        if conv_len == 0 || turn_len == 0 || !after_turn.starts_with(ANCHOR_CLOSE) {
            return None;
        }
        Some(format!("D{}:{}", rest.get(..conv_len)?, after_conv.get(..turn_len)?))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::source_anchor;

    #[test]
    fn legacy_files_vouch_for_every_comment_and_benchmark_anchor() {
        let text = "<!-- source-id:p/t/m2 --> and <!-- source-id:p/t/m1 -->\n\
                    <!-- source-id: -->\n<!-- source-id:p/t/m2 -->\n\
                    <a id=\"d3-14\"></a><a id=\"d3-\"></a><a id=\"dx-1\"></a><a id=\"d2-7\"> </a>\n";
        assert_eq!(trusted_source_ids("sources/p/t.md", text), ["D3:14", "p/t/m1", "p/t/m2"]);
    }

    #[test]
    fn a_comment_value_is_at_least_one_character() {
        assert_eq!(comment_source_ids("<!-- source-id: --> -->").collect::<Vec<_>>(), [" -->"]);
        assert_eq!(comment_source_ids("<!-- source-id:a b -->").collect::<Vec<_>>(), ["a b"]);
    }

    #[test]
    fn v2_files_vouch_only_for_trusted_frames_of_the_valid_prefix() {
        let path = "sources/p/_v2/t.md";
        let frame = |id: &str, meta: Option<&str>| {
            let meta_line = meta.map(|token| format!("<!-- source-meta:{token} -->\n")).unwrap_or_default();
            format!(
                "<a id=\"{}\"></a>\n<!-- source-id:{id} -->\n{meta_line}<!-- record-lines:1 -->\n[] user: x\n",
                source_anchor(id)
            )
        };
        let pending = "eyJhdXRob3JpdHlfdGllciI6bnVsbCwicHJpbmNpcGFsX2lkIjoidGVsZWdyYW06NzciLCJzcGVha2VyX2tpbmQiOiJodW1hbiIsInRydXN0X3N0YXRlIjoicGVuZGluZyIsInZlcnNpb24iOjF9";
        let text = format!(
            "{}\n\n{}\n{}\ngarbage\n{}",
            crate::FORMAT_MARKER,
            frame("p/t/m2", None),
            frame("p/t/m1", Some(pending)),
            frame("p/t/m3", None)
        );
        assert_eq!(trusted_source_ids(path, &text), ["p/t/m2"]);
        // The same bytes at a legacy path are read loosely: every comment counts.
        assert_eq!(trusted_source_ids("sources/p/t.md", &text), ["p/t/m1", "p/t/m2", "p/t/m3"]);
    }
}
