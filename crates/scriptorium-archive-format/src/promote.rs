//! [`plan_promotion`]: the only in-place rewrite of an archive (spec 01 §2.9). Promoting
//! a pending source replaces exactly the `source-meta` line of its frame with the token
//! of the same metadata marked trusted; every other byte stays as it was. A pure plan,
//! like [`crate::plan_append`]: the caller publishes the bytes and writes the audit line.

use std::borrow::Cow;

use crate::error::{Error, ErrorCode};
use crate::ids::v2_location;
use crate::meta::{SourceMeta, TrustState};
use crate::parse::parse;

/// What promoting one source would do.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromotionPlan {
    /// The archive, workspace-relative (`sources/<provider>/_v2/<thread>.md`).
    pub path: String,
    /// The archive's new bytes, or `None` when the source is trusted already.
    pub bytes: Option<Vec<u8>>,
    /// The frame's metadata as it will read after the promotion (trusted).
    pub meta: SourceMeta,
    /// The frame's decoded speaker id, if it has one (the audit line records it).
    pub speaker_id: Option<String>,
}

/// Plan the promotion of `source_id` in its archive, whose bytes are `archive`.
///
/// Errors: `ARCHIVE_INVALID_SOURCE_ID_SHAPE` when the id has no v2 location;
/// `ARCHIVE_NOT_UTF8`; `ARCHIVE_INCOMPLETE_ARCHIVE` when the scan stops before the end
/// (the file must be whole to be rewritten); `ARCHIVE_SOURCE_NOT_FOUND` when no frame
/// holds the id; `ARCHIVE_NO_SOURCE_META` when the frame has no `source-meta` line.
pub fn plan_promotion(archive: &[u8], source_id: &str) -> Result<PromotionPlan, Error> {
    let path = v2_location(source_id).ok_or_else(|| {
        Error::new(ErrorCode::InvalidSourceIdShape, format!("source id must be provider/thread/message: {source_id}"))
    })?;
    let text = std::str::from_utf8(archive)
        .map_err(|_| Error::new(ErrorCode::NotUtf8, format!("source archive is not UTF-8: {path}")))?;
    let scan = parse(text, &path);
    if !scan.is_complete() {
        return Err(Error::new(ErrorCode::IncompleteArchive, format!("source archive is incomplete: {path}")));
    }
    let frame = scan
        .frames
        .iter()
        .find(|frame| frame.source_id == source_id)
        .ok_or_else(|| Error::new(ErrorCode::SourceNotFound, format!("source not found: {source_id}")))?;
    let (Some(meta), Some(meta_line)) = (frame.meta.as_deref(), frame.meta_line) else {
        return Err(Error::new(ErrorCode::NoSourceMeta, format!("source has no trust metadata: {source_id}")));
    };
    let speaker_id = frame.speaker_id.as_ref().map(Cow::to_string);
    let mut trusted = meta.clone();
    trusted.trust_state = TrustState::Trusted;
    if meta.trust_state == TrustState::Trusted {
        return Ok(PromotionPlan { path, bytes: None, meta: trusted, speaker_id });
    }
    let (start, end) = line_span(text, frame.start_byte, meta_line.saturating_sub(frame.frame_start))
        .ok_or_else(|| Error::new(ErrorCode::IncompleteArchive, format!("source archive is incomplete: {path}")))?;
    let mut bytes = Vec::with_capacity(archive.len());
    bytes.extend_from_slice(archive.get(..start).unwrap_or_default());
    bytes.extend_from_slice(trusted.to_line().as_bytes());
    bytes.extend_from_slice(archive.get(end..).unwrap_or_default());
    Ok(PromotionPlan { path, bytes: Some(bytes), meta: trusted, speaker_id })
}

/// The byte span (without its LF) of the line `skip` lines after the one starting at
/// `from`.
fn line_span(text: &str, from: usize, skip: usize) -> Option<(usize, usize)> {
    let mut start = from;
    for _ in 0..skip {
        start += text.get(start..)?.find('\n')? + 1;
    }
    let end = start + text.get(start..)?.find('\n').unwrap_or(text.len() - start);
    Some((start, end))
}

#[cfg(test)]
mod tests;
