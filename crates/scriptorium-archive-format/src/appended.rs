//! [`appended_source_ids`]: what an append adds to a v2 archive, for the caches that keep
//! what citations resolve to across it (the transaction's committed topics, the derived
//! views).

use crate::ids::is_v2_source_path;
use crate::parse::{Frame, parse_bytes};

/// The source ids of the frames that `new` adds to the v2 archive at `relative_path`
/// that held `old` (empty for a new file): `Some` only when `new` is `old` with bytes
/// appended and every frame of `old` scans from `new` as it did, so that every id that
/// resolved before resolves to the same frame, with the same metadata. A frame `old`
/// ended inside of counts as added; a frame a scan no longer reaches means `None`.
///
/// ```
/// use scriptorium_archive_format::{MemoryTree, SourceRecord, appended_source_ids, plan_append};
///
/// let record = |id: &str| SourceRecord::new("openprogram", "t", id, 1, "user", "hi");
/// let path = "sources/openprogram/_v2/t.md";
/// let mut tree = MemoryTree::new();
/// tree.apply(&plan_append(&[record("m1")], &tree)?);
/// let old = tree.get(path).expect("written").to_vec();
/// tree.apply(&plan_append(&[record("m2")], &tree)?);
/// let new = tree.get(path).expect("written");
/// assert_eq!(appended_source_ids(path, &old, new), Some(vec!["openprogram/t/m2".to_owned()]));
/// assert_eq!(appended_source_ids(path, new, &old), None);
/// # Ok::<(), scriptorium_archive_format::Error>(())
/// ```
pub fn appended_source_ids(relative_path: &str, old: &[u8], new: &[u8]) -> Option<Vec<String>> {
    if !is_v2_source_path(relative_path) || !new.starts_with(old) {
        return None;
    }
    let before = parse_bytes(old, relative_path).frames;
    let after = parse_bytes(new, relative_path).frames;
    let (kept, added) = after.split_at_checked(before.len())?;
    let same = kept.iter().zip(&before).all(|(kept, old)| same_but_terminator(kept, old));
    same.then(|| added.iter().map(|frame| frame.source_id.to_owned()).collect())
}

/// Whether two frames are the same but for where the terminator line ends: an archive's
/// last terminator may lack its LF, which the bytes appended after it supply.
fn same_but_terminator(a: &Frame<'_>, b: &Frame<'_>) -> bool {
    a.source_id == b.source_id
        && a.encoded_speaker_id == b.encoded_speaker_id
        && a.speaker_id == b.speaker_id
        && a.meta == b.meta
        && a.frame_start == b.frame_start
        && a.meta_line == b.meta_line
        && a.record_start == b.record_start
        && a.record_end == b.record_end
        && a.record_text == b.record_text
        && a.start_byte == b.start_byte
        && a.record_byte == b.record_byte
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATH: &str = "sources/openprogram/_v2/t.md";

    fn frame(id: &str, text: &str) -> String {
        format!(
            "<a id=\"{}\"></a>\n<!-- source-id:openprogram/t/{id} -->\n<!-- record-lines:1 -->\n[2024] user: {text}\n",
            crate::source_anchor(&format!("openprogram/t/{id}"))
        )
    }

    #[test]
    fn an_append_adds_the_new_frames_and_nothing_else_counts() {
        let one = format!("{}\n\n{}", crate::FORMAT_MARKER, frame("m1", "hi"));
        // The last terminator without its LF: the append supplies it.
        let two = format!("{one}\n{}\n", frame("m2", "there"));
        assert_eq!(appended_source_ids(PATH, one.as_bytes(), two.as_bytes()), Some(vec!["openprogram/t/m2".into()]));
        assert_eq!(appended_source_ids(PATH, b"", two.as_bytes()).map(|ids| ids.len()), Some(2));
        assert_eq!(appended_source_ids(PATH, two.as_bytes(), two.as_bytes()), Some(vec![]));
        // Not an append: a rewrite, a shorter file, a legacy archive.
        assert_eq!(appended_source_ids(PATH, two.as_bytes(), one.as_bytes()), None);
        let rewritten = two.replace("hi", "ho");
        assert_eq!(appended_source_ids(PATH, one.as_bytes(), rewritten.as_bytes()), None);
        assert_eq!(appended_source_ids("sources/D1.md", one.as_bytes(), two.as_bytes()), None);
        // Bytes that turn the last record into a longer line make its frame unreachable.
        let glued = format!("{one}more text\n\n");
        assert_eq!(appended_source_ids(PATH, one.as_bytes(), glued.as_bytes()), None);
    }
}
