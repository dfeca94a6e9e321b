//! Source frames by their handle (`sources/<provider>/_v2/<thread>.md#source-<16 hex>`,
//! or a legacy archive's `sources/<p>/<t>.md#source-…` / `sources/D<c>.md#d<c>-<t>`), and
//! the frames a block's footnotes cite: what a reader opens to see the evidence.

use std::path::Path;

use scriptorium_archive_format::{is_v2_source_path, legacy_record, parse_bytes, source_anchor};
use scriptorium_topic_markdown::TopicDocument;

use crate::error::{Error, ErrorCode};

/// One source frame as a reader sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameView {
    /// The archive's workspace-relative path.
    pub path: String,
    /// The frame's anchor, `source-<16 hex>`.
    pub anchor: String,
    /// The source id (`provider/thread/message`).
    pub source_id: String,
    /// The speaker id, when the frame names one.
    pub speaker_id: Option<String>,
    /// `trusted` or `pending` (a legacy record is `trusted`, spec 01 §3.2).
    pub trust_state: &'static str,
    /// A record of a pre-v2 archive: its speaker is never verified.
    pub legacy: bool,
    /// `owner`, `paired`, … when recorded.
    pub authority_tier: Option<&'static str>,
    /// The verbatim record (header line `[time] role: …` first).
    pub text: String,
}

/// One link of a footnote definition and the frame it resolves to.
#[derive(Debug)]
pub struct Citation {
    /// The footnote id (`e-…`).
    pub footnote: String,
    /// The link target as written in the topic file.
    pub target: String,
    /// The frame, or why the link names none.
    pub frame: Result<FrameView, Error>,
}

/// The frame named by `handle`: a workspace-relative archive path and `#source-<16 hex>`
/// (a legacy archive's record by its anchor, a benchmark turn by `#d<c>-<t>`).
///
/// Errors: `PATH_OUTSIDE_WORKSPACE` for a path that leaves the workspace or names an
/// internal file; `INVALID_ARGUMENT` when the file is missing or not a source archive,
/// or holds no frame with that anchor.
pub fn frame(root: &Path, handle: &str) -> Result<FrameView, Error> {
    let (raw, anchor) = handle.split_once('#').ok_or_else(|| {
        Error::new(ErrorCode::InvalidArgument, "a source handle is PATH#source-<16 hex>").with_path(handle)
    })?;
    let relative = crate::tools::get::path::relative(raw)?;
    if !relative.starts_with("sources/") {
        return Err(
            Error::new(ErrorCode::InvalidArgument, format!("{relative} is not a source archive")).with_path(raw)
        );
    }
    let file = crate::tools::get::path::on_disk(root, &relative, raw)?;
    let bytes = std::fs::read(&file)
        .map_err(|error| Error::new(ErrorCode::Io, format!("cannot read {relative}: {error}")).with_path(raw))?;
    let missing =
        || Error::new(ErrorCode::InvalidArgument, format!("no frame #{anchor} in {relative}")).with_path(handle);
    if !is_v2_source_path(&relative) {
        let text = String::from_utf8_lossy(&bytes);
        let record = legacy_record(&relative, &text, anchor).ok_or_else(missing)?;
        let source_id = record.source_id.unwrap_or_else(|| benchmark_ref(anchor));
        return Ok(FrameView {
            path: relative,
            anchor: anchor.to_owned(),
            source_id,
            speaker_id: None,
            trust_state: "trusted",
            legacy: true,
            authority_tier: None,
            text: record.record_text,
        });
    }
    let parsed = parse_bytes(&bytes, &relative);
    let found = parsed.frames.iter().find(|frame| source_anchor(frame.source_id) == anchor).ok_or_else(missing)?;
    let meta = found.effective_meta();
    Ok(FrameView {
        path: relative,
        anchor: anchor.to_owned(),
        source_id: found.source_id.to_owned(),
        speaker_id: found.speaker_id.as_deref().map(str::to_owned),
        trust_state: meta.trust_state.as_str(),
        legacy: false,
        authority_tier: meta.authority_tier.map(|tier| tier.as_str()),
        text: found.record_text.to_owned(),
    })
}

/// A benchmark anchor `d<c>-<t>` as the ref its turn carries, `D<c>:<t>`.
fn benchmark_ref(anchor: &str) -> String {
    anchor.get(1..).map(|rest| format!("D{}", rest.replacen('-', ":", 1))).unwrap_or_default()
}

/// Every source link of the footnote definitions in `text` (a block as
/// [`get`](super::get) shows it), resolved against the topic file at `topic_path`.
pub fn cited_frames(root: &Path, topic_path: &str, text: &str) -> Vec<Citation> {
    let document = TopicDocument::from_text(topic_path, text);
    let mut out = Vec::new();
    for (_, definition) in document.definitions() {
        for link in &definition.links {
            let frame = frame(root, &resolve(topic_path, &link.target));
            out.push(Citation { footnote: definition.id.clone(), target: link.target.clone(), frame });
        }
    }
    out
}

/// A link target written in the file at `from`, as a workspace-relative handle: relative
/// targets are read from the file's directory, `..` climbing out of it.
fn resolve(from: &str, target: &str) -> String {
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for part in target.split('/') {
        match part {
            "." | "" => {}
            // Climbing above the root is kept, for the path check to refuse.
            ".." if parts.last().is_some_and(|last| *last != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn targets_resolve_from_the_topic_directory() {
        assert_eq!(resolve("topics/prefs.md", "../sources/a/_v2/t.md#source-1"), "sources/a/_v2/t.md#source-1");
        assert_eq!(resolve("topics/people/mei.md", "../../sources/x.md#s"), "sources/x.md#s");
        assert_eq!(resolve("topics/a.md", "../../../etc/passwd"), "../../etc/passwd");
        assert_eq!(resolve("topics/a.md", "./../sources/x.md"), "sources/x.md");
    }
}
