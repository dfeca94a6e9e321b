//! How the index holds an event: its id and content in one text buffer per file, the
//! fields that many events share (headings, speaker, metadata, dates) interned behind
//! one pointer, and a [`MemoryEvent`] rebuilt only for the rows a caller asks for.
//!
//! A `MemoryEvent` costs ~350 bytes of struct and a dozen allocations; at 1M events
//! that was most of the index's memory, while a query reads only the k result rows.

use std::collections::HashSet;
use std::hash::Hash;
use std::sync::Arc;

use scriptorium_archive_format::AuthorityTier;

use crate::event::{MemoryEvent, Trust};
use crate::filter::event_speakers;
use crate::fxhash::FxBuildHasher;

/// The fields a thread's events mostly share: headings, speaker and frame metadata.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Context {
    pub(crate) headings: Vec<String>,
    pub(crate) speaker_id: String,
    pub(crate) speaker_display: String,
    pub(crate) speaker_label: String,
    pub(crate) speaker_kind: String,
    pub(crate) principal_id: String,
    pub(crate) visibility: Option<String>,
    /// Casefolded speaker fields (sources only), for the speaker filter.
    pub(crate) speakers: Vec<String>,
}

/// An event's dates: many events share a day.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Dates {
    pub(crate) date: Option<String>,
    pub(crate) dates: Vec<String>,
}

/// An event's refs; most source events cite exactly themselves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refs {
    /// `[event_id]`.
    Own,
    /// Any other list (often empty).
    List(Box<[Box<str>]>),
}

/// What a file's events share: its path, and one buffer holding every event's id and
/// content (two allocations per file rather than two per event).
#[derive(Debug)]
pub(crate) struct FileText {
    pub(crate) path: Box<str>,
    text: Box<str>,
}

/// The ids and contents of one file's events, as they are added.
#[derive(Debug, Default)]
pub(crate) struct TextArena {
    text: String,
}

/// Where an event's id and content sit in its file's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TextSpan {
    start: u32,
    id_len: u32,
    content_len: u32,
}

impl TextArena {
    /// Add an event's id and content; `None` beyond 4 GiB of text in one file.
    pub(crate) fn push(&mut self, id: &str, content: &str) -> Option<TextSpan> {
        let start = u32::try_from(self.text.len()).ok()?;
        let span =
            TextSpan { start, id_len: u32::try_from(id.len()).ok()?, content_len: u32::try_from(content.len()).ok()? };
        start.checked_add(span.id_len)?.checked_add(span.content_len)?;
        self.text.push_str(id);
        self.text.push_str(content);
        Some(span)
    }

    pub(crate) fn finish(self, path: &str) -> Arc<FileText> {
        Arc::new(FileText { path: path.into(), text: self.text.into_boxed_str() })
    }
}

impl FileText {
    /// A file's text as the cache stored it, with its events' (id, content) lengths in
    /// order; `None` unless they cover the text exactly, on character boundaries.
    pub(crate) fn from_parts(
        path: &str,
        text: String,
        lengths: &[(u32, u32)],
    ) -> Option<(Arc<FileText>, Vec<TextSpan>)> {
        let mut spans = Vec::with_capacity(lengths.len());
        let mut start = 0u32;
        for &(id_len, content_len) in lengths {
            let id_end = start.checked_add(id_len)?;
            let end = id_end.checked_add(content_len)?;
            if !text.is_char_boundary(id_end as usize) || !text.is_char_boundary(end as usize) {
                return None; // also when beyond the end
            }
            spans.push(TextSpan { start, id_len, content_len });
            start = end;
        }
        if start as usize != text.len() {
            return None;
        }
        Some((Arc::new(FileText { path: path.into(), text: text.into_boxed_str() }), spans))
    }

    /// Every event's id and content, in slot order.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }
}

impl TextSpan {
    /// The lengths of the id and of the content.
    pub(crate) fn lengths(self) -> (u32, u32) {
        (self.id_len, self.content_len)
    }
}

/// One indexed event, compact.
#[derive(Clone, Debug)]
pub(crate) struct StoredEvent {
    pub(crate) file: Arc<FileText>,
    pub(crate) span: TextSpan,
    pub(crate) refs: Refs,
    pub(crate) context: Arc<Context>,
    pub(crate) dates: Arc<Dates>,
    pub(crate) line: usize,
    pub(crate) trust_state: Trust,
    pub(crate) speaker_trusted: bool,
    pub(crate) authority_tier: Option<AuthorityTier>,
}

impl StoredEvent {
    pub(crate) fn event_id(&self) -> &str {
        let start = self.span.start as usize;
        self.file.text.get(start..start + self.span.id_len as usize).unwrap_or_default()
    }

    pub(crate) fn content(&self) -> &str {
        let start = self.span.start as usize + self.span.id_len as usize;
        self.file.text.get(start..start + self.span.content_len as usize).unwrap_or_default()
    }

    pub(crate) fn path(&self) -> &str {
        &self.file.path
    }

    /// Whether the event has refs (rule `source_grounded`).
    pub(crate) fn has_refs(&self) -> bool {
        match &self.refs {
            Refs::Own => true,
            Refs::List(list) => !list.is_empty(),
        }
    }

    /// Every ref, in order.
    pub(crate) fn refs(&self) -> impl Iterator<Item = &str> {
        let list: &[Box<str>] = match &self.refs {
            Refs::Own => &[],
            Refs::List(list) => list,
        };
        let own = matches!(self.refs, Refs::Own).then(|| self.event_id());
        own.into_iter().chain(list.iter().map(|r| &**r))
    }

    pub(crate) fn date(&self) -> Option<&str> {
        self.dates.date.as_deref()
    }

    /// The event as callers see it.
    pub(crate) fn to_event(&self) -> MemoryEvent {
        let context = &*self.context;
        MemoryEvent {
            event_id: self.event_id().to_owned(),
            path: self.path().to_owned(),
            line: self.line,
            headings: context.headings.clone(),
            date: self.dates.date.clone(),
            dates: self.dates.dates.clone(),
            content: self.content().to_owned(),
            refs: self.refs().map(str::to_owned).collect(),
            speaker_id: context.speaker_id.clone(),
            speaker_display: context.speaker_display.clone(),
            speaker_label: context.speaker_label.clone(),
            speaker_trusted: self.speaker_trusted,
            trust_state: self.trust_state,
            speaker_kind: context.speaker_kind.clone(),
            principal_id: context.principal_id.clone(),
            authority_tier: self.authority_tier,
            visibility: context.visibility.clone(),
        }
    }
}

/// Shares equal contexts and dates among events.
#[derive(Debug, Default)]
pub(crate) struct Interner {
    contexts: HashSet<Arc<Context>, FxBuildHasher>,
    dates: HashSet<Arc<Dates>, FxBuildHasher>,
}

impl Interner {
    pub(crate) fn context(&mut self, context: Context) -> Arc<Context> {
        intern(&mut self.contexts, context)
    }

    pub(crate) fn dates(&mut self, dates: Dates) -> Arc<Dates> {
        intern(&mut self.dates, dates)
    }

    /// The compact form of `event`, whose id and content are at `span` of `file`.
    pub(crate) fn store(&mut self, event: MemoryEvent, file: &Arc<FileText>, span: TextSpan) -> StoredEvent {
        let speakers = event_speakers(&event);
        let refs = if event.refs.len() == 1 && event.refs.first() == Some(&event.event_id) {
            Refs::Own
        } else {
            Refs::List(event.refs.into_iter().map(String::into_boxed_str).collect())
        };
        StoredEvent {
            context: self.context(Context {
                headings: event.headings,
                speaker_id: event.speaker_id,
                speaker_display: event.speaker_display,
                speaker_label: event.speaker_label,
                speaker_kind: event.speaker_kind,
                principal_id: event.principal_id,
                visibility: event.visibility,
                speakers,
            }),
            dates: self.dates(Dates { date: event.date, dates: event.dates }),
            file: Arc::clone(file),
            span,
            refs,
            line: event.line,
            trust_state: event.trust_state,
            speaker_trusted: event.speaker_trusted,
            authority_tier: event.authority_tier,
        }
    }

    /// Forget values no event holds any more.
    pub(crate) fn prune(&mut self) {
        self.contexts.retain(|value| Arc::strong_count(value) > 1);
        self.dates.retain(|value| Arc::strong_count(value) > 1);
    }
}

fn intern<T: Hash + Eq>(set: &mut HashSet<Arc<T>, FxBuildHasher>, value: T) -> Arc<T> {
    match set.get(&value) {
        Some(shared) => Arc::clone(shared),
        None => {
            let shared = Arc::new(value);
            set.insert(Arc::clone(&shared));
            shared
        }
    }
}
