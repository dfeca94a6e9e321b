//! Search filters (spec 02 §6.4): path prefix, date window, speaker, and whether
//! sources are searched at all. Filters pick the candidate set before scoring.

use scriptorium_archive_format::is_v2_source_path;
use scriptorium_archive_format::normalize_identity_part;
use scriptorium_archive_format::text::is_space;
use scriptorium_topic_markdown::{ErrorCode as TopicCode, TimeWindow};

use crate::error::{Error, ErrorCode};
use crate::event::MemoryEvent;
use crate::tokenize::casefold;

/// What a search is restricted to. The default restricts nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filters {
    /// Keep events whose path starts with this prefix, normalized by
    /// [`normalize_path_prefix`] (a v2 archive also matches through its logical path).
    pub path_prefix: Option<String>,
    /// Keep events with a date overlapping the calendar interval from this bound on
    /// (`YYYY`, `YYYY-MM` or `YYYY-MM-DD`, surrounding whitespace ignored; blank is no bound).
    pub date_from: Option<String>,
    /// Keep events with a date overlapping the calendar interval up to the end of this bound
    /// (read as `date_from` is).
    pub date_to: Option<String>,
    /// Keep source events whose speaker id, display name or label case-folds to this
    /// speaker (trimmed or identity-normalized); topic events never match.
    pub speaker: Option<String>,
    /// Whether source events may be returned at all (`false` searches `topics/` only).
    pub include_sources: bool,
}

impl Default for Filters {
    fn default() -> Self {
        Filters { path_prefix: None, date_from: None, date_to: None, speaker: None, include_sources: true }
    }
}

/// Normalize a path prefix: trim whitespace, then slashes; a first segment other than
/// `topics` or `sources` gets `topics/` in front. `None` when nothing is left.
///
/// ```
/// use scriptorium_retrieval::normalize_path_prefix;
///
/// assert_eq!(normalize_path_prefix(" /health/ ").as_deref(), Some("topics/health"));
/// assert_eq!(normalize_path_prefix("sources/slack").as_deref(), Some("sources/slack"));
/// assert_eq!(normalize_path_prefix(" / "), None);
/// ```
pub fn normalize_path_prefix(raw: &str) -> Option<String> {
    let trimmed = raw.trim_matches(is_space).trim_matches('/');
    if trimmed.is_empty() {
        return None;
    }
    let first = trimmed.split('/').next().unwrap_or_default();
    Some(if first == "topics" || first == "sources" { trimmed.to_owned() } else { format!("topics/{trimmed}") })
}

/// Whether an event at `path` matches a normalized prefix: a plain string prefix of the
/// path or, for a v2 archive under `sources/`, of its logical path without the `_v2`
/// segment (`sources/slack/_v2/C01.md` matches `sources/slack/C01`).
///
/// ```
/// use scriptorium_retrieval::event_matches_path_prefix;
///
/// assert!(event_matches_path_prefix("sources/telegram/_v2/group-100.md", "sources/telegram/g"));
/// assert!(!event_matches_path_prefix("topics/_v2/x.md", "topics/x"));
/// ```
pub fn event_matches_path_prefix(path: &str, prefix: &str) -> bool {
    path.starts_with(prefix) || logical_v2_path(path).is_some_and(|logical| logical.starts_with(prefix))
}

/// `sources/<p>/<t>.md` for a v2 archive `sources/<p>/_v2/<t>.md`.
fn logical_v2_path(path: &str) -> Option<String> {
    if !path.starts_with("sources/") || !is_v2_source_path(path) {
        return None;
    }
    let (dir, file) = path.rsplit_once('/')?;
    let parent = dir.strip_suffix("/_v2")?;
    Some(format!("{parent}/{file}"))
}

/// Filters checked and prepared for matching many events.
#[derive(Clone, Debug)]
pub(crate) struct Selection {
    /// The normalized prefix, if any.
    prefix: Option<String>,
    window: TimeWindow,
    /// The casefolded speaker keys, when a speaker filter is set.
    speaker_keys: Option<Vec<String>>,
    /// `include_sources = false` with a `sources` prefix: nothing can match.
    nothing: bool,
}

impl Selection {
    /// Check the filters. Errors: [`ErrorCode::InvalidDate`], [`ErrorCode::EmptyDateWindow`].
    pub(crate) fn new(filters: &Filters) -> Result<Self, Error> {
        let from = date_bound("date_from", filters.date_from.as_deref())?;
        let to = date_bound("date_to", filters.date_to.as_deref())?;
        let window = TimeWindow::new(from, to).map_err(|violation| {
            let code = if violation.code() == TopicCode::EmptyDateWindow {
                ErrorCode::EmptyDateWindow
            } else {
                ErrorCode::InvalidDate
            };
            Error::new(code, violation.detail())
        })?;
        let mut prefix = filters.path_prefix.as_deref().and_then(normalize_path_prefix);
        let mut nothing = false;
        if !filters.include_sources {
            let topics_only = prefix.take().unwrap_or_else(|| "topics".to_owned());
            nothing = topics_only.starts_with("sources");
            prefix = Some(topics_only);
        }
        let speaker_keys = filters.speaker.as_deref().map(speaker_keys);
        Ok(Selection { prefix, window, speaker_keys, nothing })
    }

    /// Whether no event can match, whatever the index holds.
    pub(crate) fn is_nothing(&self) -> bool {
        self.nothing
    }

    /// Whether every live event is a candidate.
    pub(crate) fn is_everything(&self) -> bool {
        !self.nothing && self.prefix.is_none() && self.window.is_unbounded() && self.speaker_keys.is_none()
    }

    /// Whether events at `path` can match (the prefix rule, checked once per file).
    pub(crate) fn matches_path(&self, path: &str) -> bool {
        !self.nothing && self.prefix.as_deref().is_none_or(|prefix| event_matches_path_prefix(path, prefix))
    }

    /// The per-event rules: date window and speaker, for an event with `dates`, under
    /// `sources/` or not, with the casefolded `speakers`.
    pub(crate) fn matches_event(&self, dates: &[String], source: bool, speakers: &[String]) -> bool {
        self.window.matches(dates.iter().map(String::as_str))
            && self
                .speaker_keys
                .as_ref()
                .is_none_or(|keys| source && speakers.iter().any(|speaker| keys.iter().any(|key| key == speaker)))
    }

    /// Whether a path prefix is set.
    pub(crate) fn has_prefix(&self) -> bool {
        self.prefix.is_some()
    }

    /// Whether a date window is set.
    pub(crate) fn has_window(&self) -> bool {
        !self.window.is_unbounded()
    }

    /// The casefolded speaker keys, when a speaker filter is set: an event matches it iff
    /// one of its [`event_speakers`] equals a key.
    pub(crate) fn speaker_keys(&self) -> Option<&[String]> {
        self.speaker_keys.as_deref()
    }

    /// Whether a speaker filter is set (embedding search refuses one).
    pub(crate) fn has_speaker(&self) -> bool {
        self.speaker_keys.is_some()
    }
}

/// The valid dates whose calendar interval ends in year 10000, past Python's `date`
/// range: the reference cannot build their interval and refuses them as invalid dates.
const PAST_YEAR_9999: [&str; 3] = ["9999", "9999-12", "9999-12-31"];

/// One date bound as the window reads it: stripped of Python whitespace (`str.strip()`),
/// and no bound when nothing is left (the reference's `if date_from:`).
///
/// Errors: [`ErrorCode::InvalidDate`] for a bound whose interval would end in year 10000.
fn date_bound<'a>(name: &str, value: Option<&'a str>) -> Result<Option<&'a str>, Error> {
    let Some(text) = value.map(|text| text.trim_matches(is_space)).filter(|text| !text.is_empty()) else {
        return Ok(None);
    };
    if PAST_YEAR_9999.contains(&text) {
        return Err(Error::new(ErrorCode::InvalidDate, format!("invalid {name}: {text}")));
    }
    Ok(Some(text))
}

/// The keys a speaker filter compares with: the trimmed casefold and the
/// identity-normalized casefold of the argument.
fn speaker_keys(speaker: &str) -> Vec<String> {
    let mut keys = vec![casefold(speaker.trim_matches(is_space))];
    let normalized = casefold(&normalize_identity_part(speaker));
    if !keys.contains(&normalized) {
        keys.push(normalized);
    }
    keys
}

/// The casefolded non-empty speaker fields of a source event, which a speaker filter
/// compares with its keys (empty for topic events).
pub(crate) fn event_speakers(event: &MemoryEvent) -> Vec<String> {
    if !event.is_source() {
        return Vec::new();
    }
    let mut out: Vec<String> = Vec::new();
    for field in [&event.speaker_id, &event.speaker_display, &event.speaker_label] {
        if !field.is_empty() {
            let folded = casefold(field);
            if !out.contains(&folded) {
                out.push(folded);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn prefix_normalization() {
        assert_eq!(normalize_path_prefix("topics/people").as_deref(), Some("topics/people"));
        assert_eq!(normalize_path_prefix("people/").as_deref(), Some("topics/people"));
        assert_eq!(normalize_path_prefix("sourcesx").as_deref(), Some("topics/sourcesx"));
        assert_eq!(normalize_path_prefix(""), None);
    }

    #[test]
    fn logical_path_only_for_v2_archives_under_sources() {
        assert_eq!(logical_v2_path("sources/slack/_v2/C01.md").as_deref(), Some("sources/slack/C01.md"));
        assert_eq!(logical_v2_path("sources/a/_v2/b/c.md"), None);
        assert_eq!(logical_v2_path("topics/_v2/x.md"), None);
        assert!(!event_matches_path_prefix("sources/telegram/group-100.md", "sources/telegram/_v2"));
    }

    #[test]
    fn invalid_and_empty_windows_are_errors() {
        let filters = |from: &str, to: &str| Filters {
            date_from: Some(from.to_owned()),
            date_to: Some(to.to_owned()),
            ..Filters::default()
        };
        let error = Selection::new(&filters("2024-13", "")).expect_err("invalid");
        assert_eq!(error.code(), ErrorCode::InvalidDate);
        assert_eq!(error.message(), "invalid date_from: 2024-13");
        let error = Selection::new(&filters("2024-06", "2024-05")).expect_err("empty");
        assert_eq!(error.code(), ErrorCode::EmptyDateWindow);
        assert!(Selection::new(&filters("2024-05", "2024-05")).is_ok(), "one month is a window");
    }

    /// Every character Python's `str.strip()` removes (Python 3.11, Unicode 14), listed
    /// independently of the implementation.
    const PYTHON_WHITESPACE: &[char] = &[
        '\t', '\n', '\u{b}', '\u{c}', '\r', '\u{1c}', '\u{1d}', '\u{1e}', '\u{1f}', ' ', '\u{85}', '\u{a0}',
        '\u{1680}', '\u{2000}', '\u{2001}', '\u{2002}', '\u{2003}', '\u{2004}', '\u{2005}', '\u{2006}', '\u{2007}',
        '\u{2008}', '\u{2009}', '\u{200a}', '\u{2028}', '\u{2029}', '\u{202f}', '\u{205f}', '\u{3000}',
    ];

    fn window(from: Option<&str>, to: Option<&str>) -> Result<Selection, Error> {
        Selection::new(&Filters {
            date_from: from.map(str::to_owned),
            date_to: to.map(str::to_owned),
            ..Filters::default()
        })
    }

    fn padding() -> impl Strategy<Value = String> {
        proptest::collection::vec(proptest::sample::select(PYTHON_WHITESPACE), 0..4)
            .prop_map(|chars| chars.into_iter().collect())
    }

    /// A date of any shape, valid or not, inside years 1000..=9998.
    fn date() -> impl Strategy<Value = String> {
        (1000_u32..9999, 0_u32..14, 0_u32..33, 0_usize..3).prop_map(|(y, m, d, shape)| match shape {
            0 => format!("{y:04}"),
            1 => format!("{y:04}-{m:02}"),
            _ => format!("{y:04}-{m:02}-{d:02}"),
        })
    }

    proptest! {
        #[test]
        fn padded_bounds_read_as_their_stripped_text(
            from in date(), to in date(), left in padding(), right in padding(), event in date(),
        ) {
            let padded = window(Some(&format!("{left}{from}{right}")), Some(&format!("{right}{to}{left}")));
            let plain = window(Some(&from), Some(&to));
            match (padded, plain) {
                (Ok(padded), Ok(plain)) => prop_assert_eq!(
                    padded.matches_event(std::slice::from_ref(&event), false, &[]),
                    plain.matches_event(std::slice::from_ref(&event), false, &[])
                ),
                (Err(padded), Err(plain)) => {
                    prop_assert_eq!(padded.code(), plain.code());
                    prop_assert_eq!(padded.message(), plain.message());
                }
                (padded, plain) => prop_assert!(false, "padded {:?} but plain {:?}", padded.is_ok(), plain.is_ok()),
            }
        }

        #[test]
        fn blank_bounds_are_no_bound(blank in padding()) {
            prop_assert!(window(Some(&blank), Some(&blank)).map_err(|e| TestCaseError::fail(e.to_string()))?.is_everything());
        }
    }

    #[test]
    fn non_python_whitespace_is_not_stripped() {
        for pad in ['\u{200b}', '\u{feff}', '\u{180e}'] {
            let error = window(Some(&format!("{pad}2024")), None).expect_err("not whitespace to Python");
            assert_eq!(error.code(), ErrorCode::InvalidDate, "{pad:?}");
        }
    }

    #[test]
    fn bounds_ending_in_year_10000_are_invalid_dates() {
        for text in ["9999", "9999-12", "9999-12-31", " 9999-12\u{3000}"] {
            for (from, to, name) in [(Some(text), None, "date_from"), (None, Some(text), "date_to")] {
                let error = window(from, to).expect_err("past Python's date range");
                assert_eq!(error.code(), ErrorCode::InvalidDate, "{name} {text:?}");
                assert_eq!(error.message(), format!("invalid {name}: {}", text.trim_matches(is_space)));
            }
        }
        // The last intervals that end inside year 9999 still work, on either side.
        let last = window(Some("9999-11"), Some("9999-12-30")).expect("inside the range");
        assert!(last.matches_event(&["9999-12-30".to_owned()], false, &[]));
        assert!(!last.matches_event(&["9999-10-31".to_owned()], false, &[]));
        assert!(window(Some("0001"), Some("9998")).is_ok());
    }

    #[test]
    fn topics_only_search_with_a_sources_prefix_matches_nothing() {
        let filters =
            Filters { path_prefix: Some("sources/slack".into()), include_sources: false, ..Filters::default() };
        assert!(Selection::new(&filters).expect("valid").is_nothing());
        let topics_only = Selection::new(&Filters { include_sources: false, ..Filters::default() }).expect("valid");
        assert!(topics_only.matches_path("topics/a.md"));
        assert!(!topics_only.matches_path("sources/a/_v2/b.md"));
        assert!(Selection::new(&Filters::default()).expect("valid").is_everything());
    }

    #[test]
    fn speaker_keys_fold_and_normalize() {
        assert_eq!(speaker_keys("  Dave "), ["dave"]);
        assert_eq!(speaker_keys("a:b"), ["a:b", "a\u{ff1a}b"]);
        assert_eq!(speaker_keys("STRASSE"), ["strasse"]);
    }
}
