//! The events a retrieval index reads from one source file (spec 01 §2.6, 02 §6.1):
//! one per valid frame of a v2 archive, or what the legacy reader finds in an older one.

use crate::fields::split_record_header;
use crate::ids::is_v2_source_path;
use crate::legacy::legacy_events;
use crate::meta::{AuthorityTier, SourceMeta, TrustState};
use crate::parse::{Frame, parse};
use crate::retrieval_text::{clean_retrieval_text, first_iso_date};
use crate::speaker::SpeakerView;

/// One searchable event of a source file, in the shape of the reference's `MemoryEvent`.
///
/// This is the one definition of the event record's fields: the retrieval layer's
/// `MemoryEvent` is `SourceEvent<Trust>`, the same record with its own trust type
/// (which adds `unknown` for topic events), reached through [`SourceEvent::map_trust`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceEvent<T = TrustState> {
    /// The source id of a frame or runtime record, or `lex_<16 hex>` for an
    /// anonymous legacy line (see [`crate::anonymous_event_id`]).
    pub event_id: String,
    /// The workspace-relative path of the file.
    pub path: String,
    /// The 1-based line number of the record's header line (of the line itself for
    /// an anonymous legacy event).
    pub line: usize,
    /// The Markdown heading path above the event (always empty in v2 archives).
    pub headings: Vec<String>,
    /// The first `YYYY-MM-DD` of the content, if any.
    pub date: Option<String>,
    /// The event's dates: the first date alone, or nothing.
    pub dates: Vec<String>,
    /// The cleaned record text, header included (see [`crate::clean_retrieval_text`]).
    pub content: String,
    /// What the event stands for: its source id, or the benchmark refs it cites.
    pub refs: Vec<String>,
    /// The raw speaker id (empty when unknown or display-only).
    pub speaker_id: String,
    /// The normalized display name (empty when unknown).
    pub speaker_display: String,
    /// `display (id)` or whichever half is known (empty when unknown).
    pub speaker_label: String,
    /// Whether the speaker fields come from a trusted v2 `speaker-id` line.
    pub speaker_trusted: bool,
    /// Whether the event may be recalled (legacy events are always trusted); a consumer
    /// may carry its own trust type here (see [`SourceEvent::map_trust`]).
    pub trust_state: T,
    /// The speaker kind from the frame metadata (`unknown` by default).
    pub speaker_kind: String,
    /// The principal from the frame metadata (`unknown` by default).
    pub principal_id: String,
    /// The authority tier from the frame metadata.
    pub authority_tier: Option<AuthorityTier>,
    /// Reserved for visibility labels, which are not implemented: always `None`.
    pub visibility: Option<String>,
}

impl SourceEvent {
    /// An event with the given identity and content, no speaker, and the metadata a
    /// frame without `source-meta` reads as (trusted, `unknown`, no tier).
    pub(crate) fn new(path: &str, line: usize, event_id: String, content: String, refs: Vec<String>) -> Self {
        let date = first_iso_date(&content).map(str::to_owned);
        let SourceMeta { authority_tier, principal_id, speaker_kind, trust_state } = SourceMeta::default();
        SourceEvent {
            event_id,
            path: path.to_owned(),
            line,
            headings: Vec::new(),
            dates: date.iter().cloned().collect(),
            date,
            content,
            refs,
            speaker_id: String::new(),
            speaker_display: String::new(),
            speaker_label: String::new(),
            speaker_trusted: false,
            trust_state,
            speaker_kind,
            principal_id,
            authority_tier,
            visibility: None,
        }
    }
}

impl<T> SourceEvent<T> {
    /// The same event with its trust state mapped through `f`, every other field moved as is.
    pub fn map_trust<U>(self, f: impl FnOnce(T) -> U) -> SourceEvent<U> {
        SourceEvent {
            trust_state: f(self.trust_state),
            event_id: self.event_id,
            path: self.path,
            line: self.line,
            headings: self.headings,
            date: self.date,
            dates: self.dates,
            content: self.content,
            refs: self.refs,
            speaker_id: self.speaker_id,
            speaker_display: self.speaker_display,
            speaker_label: self.speaker_label,
            speaker_trusted: self.speaker_trusted,
            speaker_kind: self.speaker_kind,
            principal_id: self.principal_id,
            authority_tier: self.authority_tier,
            visibility: self.visibility,
        }
    }

    /// Whether the event lives under `sources/` (speaker filters only ever match these).
    pub fn is_source(&self) -> bool {
        self.path.starts_with("sources/")
    }

    /// Fill the speaker fields from a speaker view.
    pub(crate) fn set_speaker(&mut self, speaker: SpeakerView) {
        self.speaker_id = speaker.speaker_id;
        self.speaker_display = speaker.speaker_display;
        self.speaker_label = speaker.speaker_label;
    }
}

/// The retrieval events of one source file, given its workspace-relative path.
///
/// A v2 archive (per [`crate::is_v2_source_path`]) yields one event per frame of its
/// valid prefix, and nothing else: text after a bad frame is never read. Any other
/// file goes through the legacy reader (runtime records, benchmark turns, loose lines
/// citing `D<conv>:<turn>`), whose events are trusted but never carry a trusted speaker.
///
/// ```
/// use scriptorium_archive_format::source_events;
///
/// let text = "# D1\n\n<a id=\"d1-1\"></a>\n[2024-01-02] user: I adopted a cat. [D1:1]\n";
/// let events = source_events("sources/D1.md", text);
/// assert_eq!(events.len(), 1);
/// assert_eq!(events[0].refs, ["D1:1"]);
/// assert_eq!(events[0].line, 4);
/// ```
pub fn source_events(relative_path: &str, text: &str) -> Vec<SourceEvent> {
    if is_v2_source_path(relative_path) {
        parse(text, relative_path).frames.iter().map(|frame| frame_event(relative_path, frame)).collect()
    } else {
        legacy_events(relative_path, text)
    }
}

fn frame_event(path: &str, frame: &Frame<'_>) -> SourceEvent {
    let content = clean_retrieval_text(frame.record_text);
    let mut event = SourceEvent::new(
        path,
        frame.record_start + 1,
        frame.source_id.to_owned(),
        content,
        vec![frame.source_id.to_owned()],
    );
    let SourceMeta { authority_tier, principal_id, speaker_kind, trust_state } = frame.effective_meta();
    // Speaker fields are believed only from the v2 speaker line, never from the body.
    if let Some(speaker_id) = &frame.speaker_id {
        let header_line = frame.record_text.split('\n').next().unwrap_or_default();
        let label = split_record_header(header_line).map_or("", |header| header.label);
        event.set_speaker(SpeakerView::from_frame(speaker_id, label));
        event.speaker_trusted = trust_state == TrustState::Trusted;
    }
    event.trust_state = trust_state;
    event.speaker_kind = speaker_kind;
    event.principal_id = principal_id;
    event.authority_tier = authority_tier;
    event
}

#[cfg(test)]
mod tests;
