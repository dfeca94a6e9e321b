//! `MemoryEvent`: one searchable unit of the workspace (spec 02 §6.1), built from a
//! topic claim, a v2 source frame or a legacy source record.

use scriptorium_archive_format::{SourceEvent, TrustState, is_v2_source_path, source_anchor};
use scriptorium_topic_markdown::TopicEvent;
use scriptorium_transaction::{FileClass, classify};

/// The trust state an event carries in the index (spec 02 §5).
///
/// Source events carry their archived state. Topic events start `Unknown` and are
/// resolved after the whole workspace is read: `Trusted` iff every cited source is a
/// known trusted source event, else `Pending`; a topic event citing nothing stays `Unknown`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Trust {
    /// Usable everywhere.
    Trusted,
    /// Held back from recall until the owner promotes its sources.
    Pending,
    /// A topic event that cites no source.
    Unknown,
}

impl Trust {
    /// The string form the reference reports (`trusted`, `pending`, `unknown`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Trust::Trusted => "trusted",
            Trust::Pending => "pending",
            Trust::Unknown => "unknown",
        }
    }
}

impl From<TrustState> for Trust {
    fn from(state: TrustState) -> Self {
        match state {
            TrustState::Pending => Trust::Pending,
            // `TrustState` is non-exhaustive; anything that is not pending was archived as usable.
            _ => Trust::Trusted,
        }
    }
}

/// Where an event comes from, decided by its file's path alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// A topic file (`topics/**.md`).
    Topic,
    /// A v2 source archive (`sources/<provider>/_v2/<thread>.md`).
    V2Source,
    /// Any other file under `sources/`: a legacy archive.
    LegacySource,
}

impl FileKind {
    /// The kind of the workspace-relative `path`, or `None` for a path that is not memory
    /// by the transaction layer's listing rule ([`classify`]).
    pub fn of(path: &str) -> Option<FileKind> {
        match classify(path.as_bytes()) {
            FileClass::Topic => Some(FileKind::Topic),
            FileClass::Source => {
                Some(if is_v2_source_path(path) { FileKind::V2Source } else { FileKind::LegacySource })
            }
            _ => None,
        }
    }
}

/// One searchable event, in the shape of the reference's `MemoryEvent`: the archive
/// layer's event record (which owns the field list), carrying retrieval's [`Trust`].
///
/// Its `event_id` is `<block id>:<n>` for a topic claim, the source id of a frame or
/// runtime record, `ev_…` for a legacy topic event marker, `lex_<16 hex>` for an anonymous line.
pub type MemoryEvent = SourceEvent<Trust>;

/// The metadata value of a field the reference fills with `"unknown"`.
const UNKNOWN: &str = "unknown";

/// A topic event with no speaker, trust `Unknown` until resolution.
pub(crate) fn topic_event(event_id: String, path: &str, line: usize, headings: Vec<String>) -> MemoryEvent {
    MemoryEvent {
        event_id,
        path: path.to_owned(),
        line,
        headings,
        date: None,
        dates: Vec::new(),
        content: String::new(),
        refs: Vec::new(),
        speaker_id: String::new(),
        speaker_display: String::new(),
        speaker_label: String::new(),
        speaker_trusted: false,
        trust_state: Trust::Unknown,
        speaker_kind: UNKNOWN.to_owned(),
        principal_id: UNKNOWN.to_owned(),
        authority_tier: None,
        visibility: None,
    }
}

/// The index event of an archived source event: the same record, its trust read as [`Trust`].
pub fn source_memory_event(event: SourceEvent) -> MemoryEvent {
    event.map_trust(Trust::from)
}

/// The index event of a topic claim, trust `Unknown` until resolution.
pub(crate) fn topic_memory_event(event: TopicEvent) -> MemoryEvent {
    let mut out = topic_event(event.event_id, &event.path, event.line, event.headings);
    out.date = Some(event.date).filter(|date| !date.is_empty());
    out.dates = event.dates;
    out.content = event.content;
    out.refs = event.refs;
    out
}

/// Where a hit points inside its file, as every surface prints it: `#^<block id>` for a
/// topic claim (decision 3: no `:<n>` claim suffix), `#source-<16 hex>` for a source
/// record with an id, `:<line>` for an anonymous (`lex_…`) event.
pub fn hit_anchor(event: &MemoryEvent) -> String {
    let anonymous = event.event_id.starts_with("lex_");
    if !event.is_source() {
        match event.event_id.rsplit_once(':') {
            Some((block, _)) if !anonymous => format!("#^{block}"),
            _ => format!(":{}", event.line),
        }
    } else if anonymous {
        format!(":{}", event.line)
    } else {
        format!("#{}", source_anchor(&event.event_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_kind_follows_the_path() {
        assert_eq!(FileKind::of("topics/people/dave.md"), Some(FileKind::Topic));
        assert_eq!(FileKind::of("sources/telegram/_v2/group-100.md"), Some(FileKind::V2Source));
        assert_eq!(FileKind::of("sources/telegram/group-100.md"), Some(FileKind::LegacySource));
        assert_eq!(FileKind::of("sources/D1.md"), Some(FileKind::LegacySource));
        assert_eq!(FileKind::of("timeline/2024.md"), None);
        assert_eq!(FileKind::of("topics/.git/x.md"), None);
    }

    #[test]
    fn topic_events_start_unknown_without_speaker() {
        let event = topic_event("abc:1".into(), "topics/x.md", 3, vec!["X".into()]);
        assert_eq!(event.trust_state, Trust::Unknown);
        assert_eq!(event.speaker_kind, "unknown");
        assert!(!event.is_source());
        assert_eq!(Trust::Pending.as_str(), "pending");
        assert_eq!(Trust::from(TrustState::Trusted), Trust::Trusted);
    }

    #[test]
    fn hit_anchors_follow_the_event_class() {
        let anchor = |id: &str, path: &str| hit_anchor(&topic_event(id.into(), path, 7, Vec::new()));
        // A topic claim links to its block, whatever its claim suffix (decision 3).
        assert_eq!(anchor("f888f60e:1", "topics/x.md"), "#^f888f60e");
        assert_eq!(anchor("f888f60e:12", "topics/a/b.md"), "#^f888f60e");
        // Anonymous events, and a topic id without a claim part, point at their line.
        assert_eq!(anchor("lex_3f:1", "topics/x.md"), ":7");
        assert_eq!(anchor("f888f60e", "topics/x.md"), ":7");
        assert_eq!(anchor("lex_9a", "sources/D1.md"), ":7");
        // A source record links to its frame anchor.
        let id = "telegram/group-100/m1";
        assert_eq!(anchor(id, "sources/telegram/_v2/group-100.md"), format!("#{}", source_anchor(id)));
    }
}
