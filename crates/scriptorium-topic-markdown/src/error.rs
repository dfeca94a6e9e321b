//! Violations with stable string codes (docs/error-codes.md).
//!
//! Validation never stops at the first problem: every check pushes a [`Violation`]
//! and the caller decides. The public contract code for all of them is
//! `INVALID_TOPIC_FORMAT` (mapped by the backend layer).

/// Stable, machine-readable codes. The string form is a public contract:
/// never change or reuse one; retire it instead (docs/error-codes.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ErrorCode {
    /// A tree key is not a `topics/**.md` path with plain components.
    InvalidPath,
    /// A topic file is not UTF-8.
    NotUtf8,
    /// A paragraph ends in `^…` that is not a valid block id run (`invalid block_id`).
    InvalidBlockId,
    /// The same block id (or legacy `mem_` id) occurs twice in the tree.
    DuplicateBlockId,
    /// A paragraph cites evidence but carries no block id (`memory block ID required`).
    MissingBlockId,
    /// A paragraph, or other text that pruning would drop, cites nothing (decision Q1).
    UncitedText,
    /// A block has no citation at all (`memory source footnote required`).
    MissingCitation,
    /// A citation group has no prose before it (`missing memory content before`).
    MissingContent,
    /// Prose follows the last citation group of a block (`content after final evidence`).
    ContentAfterEvidence,
    /// A citation has no definition in its file (`undefined footnote`).
    UndefinedFootnote,
    /// A definition is cited by no paragraph of its file (`unused footnote definition`).
    UnusedFootnote,
    /// A footnote id is defined twice in one file (`duplicate footnote definition`).
    DuplicateFootnote,
    /// An evidence time is not a real calendar date (`invalid evidence date`).
    InvalidDate,
    /// A definition's sources hold no Markdown link (`memory source links required`).
    MissingSourceLinks,
    /// A source link has a blank label (`memory source labels required`).
    EmptySourceLabel,
    /// A source link target resolves to no source id (`invalid source target`).
    InvalidSourceTarget,
    /// A cited source id names no existing frame or anchor (`missing source reference`).
    UnknownSource,
    /// Reading a source archive through the lookup failed.
    SourceReadFailed,
    /// A relative link to another topic file lacks a `#^block-id` fragment.
    LinkWithoutBlockId,
    /// A block link targets an id that exists nowhere in the tree (`dangling block link`).
    DanglingBlockLink,
    /// A committed block id disappeared although removal was not allowed.
    BlockIdRemoved,
    /// A date-window bound is not `YYYY`, `YYYY-MM` or `YYYY-MM-DD` (a real date).
    InvalidWindowDate,
    /// A date window whose start is not before its end.
    EmptyDateWindow,
}

impl ErrorCode {
    /// Every code this crate can produce, for the registry test.
    pub const ALL: &'static [ErrorCode] = &[
        Self::InvalidPath,
        Self::NotUtf8,
        Self::InvalidBlockId,
        Self::DuplicateBlockId,
        Self::MissingBlockId,
        Self::UncitedText,
        Self::MissingCitation,
        Self::MissingContent,
        Self::ContentAfterEvidence,
        Self::UndefinedFootnote,
        Self::UnusedFootnote,
        Self::DuplicateFootnote,
        Self::InvalidDate,
        Self::MissingSourceLinks,
        Self::EmptySourceLabel,
        Self::InvalidSourceTarget,
        Self::UnknownSource,
        Self::SourceReadFailed,
        Self::LinkWithoutBlockId,
        Self::DanglingBlockLink,
        Self::BlockIdRemoved,
        Self::InvalidWindowDate,
        Self::EmptyDateWindow,
    ];

    /// The stable string form, for example `"TOPIC_UNDEFINED_FOOTNOTE"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidPath => "TOPIC_INVALID_PATH",
            Self::NotUtf8 => "TOPIC_NOT_UTF8",
            Self::InvalidBlockId => "TOPIC_INVALID_BLOCK_ID",
            Self::DuplicateBlockId => "TOPIC_DUPLICATE_BLOCK_ID",
            Self::MissingBlockId => "TOPIC_MISSING_BLOCK_ID",
            Self::UncitedText => "TOPIC_UNCITED_TEXT",
            Self::MissingCitation => "TOPIC_MISSING_CITATION",
            Self::MissingContent => "TOPIC_MISSING_CONTENT",
            Self::ContentAfterEvidence => "TOPIC_CONTENT_AFTER_EVIDENCE",
            Self::UndefinedFootnote => "TOPIC_UNDEFINED_FOOTNOTE",
            Self::UnusedFootnote => "TOPIC_UNUSED_FOOTNOTE",
            Self::DuplicateFootnote => "TOPIC_DUPLICATE_FOOTNOTE",
            Self::InvalidDate => "TOPIC_INVALID_DATE",
            Self::MissingSourceLinks => "TOPIC_MISSING_SOURCE_LINKS",
            Self::EmptySourceLabel => "TOPIC_EMPTY_SOURCE_LABEL",
            Self::InvalidSourceTarget => "TOPIC_INVALID_SOURCE_TARGET",
            Self::UnknownSource => "TOPIC_UNKNOWN_SOURCE",
            Self::SourceReadFailed => "TOPIC_SOURCE_READ_FAILED",
            Self::LinkWithoutBlockId => "TOPIC_LINK_WITHOUT_BLOCK_ID",
            Self::DanglingBlockLink => "TOPIC_DANGLING_BLOCK_LINK",
            Self::BlockIdRemoved => "TOPIC_BLOCK_ID_REMOVED",
            Self::InvalidWindowDate => "TOPIC_INVALID_WINDOW_DATE",
            Self::EmptyDateWindow => "TOPIC_EMPTY_DATE_WINDOW",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One rule a topic tree breaks: a stable code, where, and a short detail.
///
/// The detail is the reference implementation's message where one exists (for
/// example `undefined footnote: e-2`), so people comparing the two see the same words;
/// programs match on [`Violation::code`], never on the detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    code: ErrorCode,
    file: Box<str>,
    line: Option<u32>,
    detail: Box<str>,
}

impl Violation {
    /// A violation in `file` (workspace-relative, empty for tree-wide rules) at the
    /// 1-based `line`, if there is one.
    pub fn new(code: ErrorCode, file: &str, line: Option<usize>, detail: impl Into<Box<str>>) -> Self {
        let line = line.map(|n| u32::try_from(n).unwrap_or(u32::MAX));
        Violation { code, file: file.into(), line, detail: detail.into() }
    }

    /// The stable code; match on this, never on the detail.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The workspace-relative topic file, or `""` for a rule about the whole tree.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The 1-based line (after `str.splitlines()`), if the rule points at one.
    pub fn line(&self) -> Option<u32> {
        self.line
    }

    /// The short human-readable detail (the reference's message where it has one).
    pub fn detail(&self) -> &str {
        &self.detail
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.file.is_empty(), self.line) {
            (false, Some(line)) => write!(f, "{}: {}:{line}: {}", self.code, self.file, self.detail),
            (false, None) => write!(f, "{}: {}: {}", self.code, self.file, self.detail),
            (true, _) => write!(f, "{}: {}", self.code, self.detail),
        }
    }
}

impl std::error::Error for Violation {}

/// Every violation a check found, in discovery order (files in sorted order, lines
/// ascending, tree-wide rules last). Never empty when returned as an error.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Violations(Vec<Violation>);

impl Violations {
    /// Wrap a list of violations.
    pub fn new(list: Vec<Violation>) -> Self {
        Violations(list)
    }

    /// The first violation, which is the one the reference implementation reports.
    pub fn first(&self) -> Option<&Violation> {
        self.0.first()
    }

    /// All violations.
    pub fn as_slice(&self) -> &[Violation] {
        &self.0
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Iterate over the violations.
    pub fn iter(&self) -> std::slice::Iter<'_, Violation> {
        self.0.iter()
    }

    /// Unwrap into the list.
    pub fn into_vec(self) -> Vec<Violation> {
        self.0
    }
}

impl<'a> IntoIterator for &'a Violations {
    type Item = &'a Violation;
    type IntoIter = std::slice::Iter<'a, Violation>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl std::fmt::Display for Violations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.as_slice() {
            [] => f.write_str("no violations"),
            [one] => one.fmt(f),
            [first, rest @ ..] => write!(f, "{first} (and {} more)", rest.len()),
        }
    }
}

impl std::error::Error for Violations {}
