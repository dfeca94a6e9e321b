//! `grep` over the visible workspace (spec 02 §6.8, decision 6): a line-based scan in
//! process, never a system grep.
//!
//! Literal by default (the model tool only ever asks for literal search); with
//! [`GrepRequest::regex`] the query is a pattern in Python `re` syntax, the reference's,
//! run by the `regex` crate, and what the crate would run differently is refused (the
//! field's documentation lists it).
//!
//! Visible means the visible files of the transaction layer's one [`Listing`]: every
//! regular file except internal ones (the runtime directory, `.scriptorium*` siblings
//! such as the reference's cache file, `.git/`), paths with a component that starts with
//! `.` or is not UTF-8, and anything reached through a symbolic link (decision 6: no
//! tool reads them). A v2 source archive is searched on its record
//! lines only, so metadata lines (anchors, ids, speaker and meta comments) never match
//! and a torn tail after the last valid frame is hidden as well.

use std::path::Path;

use scriptorium_archive_format::{is_v2_source_path, parse_bytes};
use scriptorium_transaction::{Listing, Scope};

use crate::error::{Error, ErrorCode};
use crate::scan::read_failed;
use crate::tokenize::casefold;

mod pattern;

/// The number of matches returned when the caller names no limit.
pub const GREP_LIMIT_DEFAULT: usize = 50;
/// The most matches one grep returns (a larger limit is clamped).
pub const GREP_LIMIT_MAX: usize = 200;
/// The longest match text, in characters, after trimming.
pub const GREP_TEXT_MAX_CHARS: usize = 300;

/// One grep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrepRequest {
    /// The text to find, or with `regex` the pattern; must not be blank.
    pub query: String,
    /// Read `query` as a regex in Python `re` syntax instead of literal text (default:
    /// literal). A line matches when the pattern matches anywhere in it (`re.search`).
    ///
    /// The `regex` crate runs it, in time linear in the line length, so no pattern can
    /// backtrack catastrophically. Where Python's syntax and the crate's differ, the
    /// pattern is refused with [`ErrorCode::InvalidPattern`] and a message naming the
    /// construct, never given another meaning:
    ///
    /// - constructs with no linear-time search: lookahead and lookbehind (`(?=…)`,
    ///   `(?!…)`, `(?<=…)`, `(?<!…)`), backreferences (`\1`, `(?P=name)`), possessive
    ///   quantifiers (`a*+`, `a{2}+`), atomic groups (`(?>…)`), conditionals (`(?(1)…)`);
    /// - constructs read differently: the verbose flag `x`, the `a` and `L` flags, a
    ///   global flag such as `(?i)` anywhere but at the start, `(?<name>…)` (write
    ///   `(?P<name>…)`), `\N{…}`;
    /// - what Python refuses too: unknown escapes of ASCII letters (`\z`, `\p{L}` …),
    ///   nothing to repeat, multiple repeat, unbalanced parentheses;
    /// - a pattern whose compiled program exceeds 4 MiB (for example `\w{1000}` or
    ///   `(a{1000}){1000}`).
    ///
    /// Everything else keeps Python's meaning: a `[` or `&&` inside a class is a
    /// literal, a `{` that starts no valid repetition is a literal, `{,n}` means `{0,n}`,
    /// `\Z` ends the line, `(?#…)` is a comment. Two differences remain:
    ///
    /// - `\w`, `\d`, `\s` and `\b` follow Unicode's definitions (UTS #18), not
    ///   Python's `str.isalnum` / `str.isspace`: combining marks are word characters here,
    ///   and a few numeric symbols such as `²` are not.
    /// - Without `case_sensitive`, a regex matches by *simple* case folding, as Python's
    ///   `re.IGNORECASE` does, while literal grep uses full folding (`str.casefold`): the
    ///   literal `straße` finds `STRASSE`, the regex `straße` finds `STRAẞE` but not
    ///   `STRASSE`. Where every character folds to one character (Latin, Greek, Cyrillic,
    ///   and scripts without case such as CJK), a plain word finds the same lines in both
    ///   modes.
    pub regex: bool,
    /// Match case exactly (default: case-insensitive; literal text by full Unicode case
    /// folding, a regex by simple case folding).
    pub case_sensitive: bool,
    /// Only files whose relative path starts with this (a leading `/` is ignored).
    pub prefix: Option<String>,
    /// The most matches to return, clamped to `1..=200`.
    pub limit: usize,
}

impl GrepRequest {
    /// A case-insensitive literal grep for `query` over every visible file, default limit.
    pub fn new(query: impl Into<String>) -> Self {
        GrepRequest {
            query: query.into(),
            regex: false,
            case_sensitive: false,
            prefix: None,
            limit: GREP_LIMIT_DEFAULT,
        }
    }
}

/// One matching line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrepMatch {
    /// The workspace-relative path, with `/`.
    pub path: String,
    /// The 1-based physical line number.
    pub line: usize,
    /// The line, trimmed, cut to 300 characters.
    pub text: String,
}

/// What a grep found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrepResponse {
    /// The first `limit` matches, by path, then line.
    pub matches: Vec<GrepMatch>,
    /// How many lines matched in all.
    pub total: usize,
    /// Whether `total` exceeds the matches returned.
    pub truncated: bool,
}

/// Find `request.query` in the visible files of the workspace at `root`, sorted by
/// relative path, then line.
///
/// Errors: [`ErrorCode::BlankQuery`] for a blank query; [`ErrorCode::InvalidPattern`]
/// for a regex that is invalid, too large or refused, before any file is read;
/// [`ErrorCode::ReadFailed`] when a folder or file cannot be read.
pub fn grep(root: &Path, request: &GrepRequest) -> Result<GrepResponse, Error> {
    if request.query.trim().is_empty() {
        return Err(Error::new(ErrorCode::BlankQuery, "query is required"));
    }
    let matcher = Matcher::new(request)?;
    let limit = request.limit.clamp(1, GREP_LIMIT_MAX);
    let prefix = request.prefix.as_deref().map(|p| p.trim_start_matches('/')).unwrap_or_default();
    let listing = Listing::read(root, Scope::Root).complete().map_err(|e| read_failed(root, e))?;
    let mut paths: Vec<String> = listing
        .files
        .iter()
        .filter(|file| file.class().is_visible())
        .filter_map(|file| file.path().map(str::to_owned))
        .collect();
    paths.sort();
    let mut response = GrepResponse { matches: Vec::new(), total: 0, truncated: false };
    for path in paths.iter().filter(|path| path.starts_with(prefix)) {
        let disk = root.join(path);
        let bytes = match std::fs::read(&disk) {
            Ok(bytes) => bytes,
            // Removed since the listing: it is simply not there any more.
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
            Err(err) => return Err(read_failed(&disk, err)),
        };
        for (line, text) in searchable_lines(path, &bytes) {
            if !matcher.matches(text) {
                continue;
            }
            response.total += 1;
            if response.matches.len() < limit {
                response.matches.push(GrepMatch { path: path.clone(), line, text: clip(text.trim()) });
            }
        }
    }
    response.truncated = response.total > response.matches.len();
    Ok(response)
}

/// How a line is tested.
enum Matcher {
    /// The query itself.
    Exact(String),
    /// The query case-folded, against each line case-folded.
    Folded(String),
    Regex(regex::Regex),
}

impl Matcher {
    fn new(request: &GrepRequest) -> Result<Self, Error> {
        Ok(if request.regex {
            Matcher::Regex(pattern::compile(&request.query, request.case_sensitive)?)
        } else if request.case_sensitive {
            Matcher::Exact(request.query.clone())
        } else {
            Matcher::Folded(casefold(&request.query))
        })
    }

    fn matches(&self, line: &str) -> bool {
        match self {
            Matcher::Exact(needle) => line.contains(needle.as_str()),
            Matcher::Folded(needle) => casefold(line).contains(needle.as_str()),
            Matcher::Regex(regex) => regex.is_match(line),
        }
    }
}

/// The lines grep may match, with their 1-based numbers: a v2 archive's record lines,
/// or every line of any other file (split on LF; a CR before it is trimmed anyway).
fn searchable_lines<'a>(path: &str, bytes: &'a [u8]) -> Vec<(usize, &'a str)> {
    if path.starts_with("sources/") && is_v2_source_path(path) {
        let parsed = parse_bytes(bytes, path);
        let mut lines = Vec::new();
        for frame in &parsed.frames {
            lines.extend((frame.record_start + 1..).zip(frame.record_text.split('\n')));
        }
        return lines;
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        // A binary or non-UTF-8 file: search its valid prefix only, as text.
        Err(error) => bytes.get(..error.valid_up_to()).and_then(|b| std::str::from_utf8(b).ok()).unwrap_or_default(),
    };
    (1..).zip(text.split('\n')).collect()
}

fn clip(text: &str) -> String {
    match text.char_indices().nth(GREP_TEXT_MAX_CHARS) {
        Some((cut, _)) => text.get(..cut).unwrap_or(text).to_owned(),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests;
