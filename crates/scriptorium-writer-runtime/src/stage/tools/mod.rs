//! The seven tools of the writer stage (spec 02 §10.4; decision "writer stage tools":
//! `Move` and `Delete` instead of a shell), their errors, and the dispatcher
//! [`Stage::execute`] that turns any call — unknown tool, malformed or huge arguments —
//! into a [`ToolOutcome`] for the model, never a panic.

mod edit;
mod glob;
mod grep;
mod move_delete;
mod read;
mod write;

use serde_json::{Map, Value};

use scriptorium_transaction::{Error as TxError, ErrorCode as TxCode};

use super::Stage;

/// The tool names, as the model calls them.
pub const TOOL_NAMES: [&str; 7] = ["Read", "Write", "Edit", "Glob", "Grep", "Move", "Delete"];

/// `Read` returns at most this many characters of a file, then a marker (spec 02 §10.4).
pub const READ_LIMIT_CHARS: usize = 200_000;

/// `Glob` lists at most this many paths (spec 02 §10.4).
pub const GLOB_LIMIT: usize = 500;

/// `Grep` reports at most this many matching lines (spec 02 §10.4).
pub const GREP_LIMIT: usize = 500;

/// `Grep` shows at most this many characters of a matching line (spec 02 §10.4).
pub const GREP_LINE_CHARS: usize = 500;

/// The largest string argument a tool accepts, in bytes: far above any topic edit, far
/// below what could exhaust memory.
pub const MAX_ARGUMENT_BYTES: usize = 1 << 20;

/// The largest file a `Write`, `Edit` or `Move` may leave in the stage, in bytes.
pub const MAX_FILE_BYTES: usize = 64 << 20;

/// What a tool call returns to the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOutcome {
    /// The tool result text: the output, or the error with its code and hint.
    pub content: String,
    /// Whether the call failed (the result is then an error the model should act on).
    pub is_error: bool,
    /// The error's code, for the runtime's audit and for tests (never parsed from `content`).
    pub code: Option<ToolErrorCode>,
}

impl ToolOutcome {
    fn ok(content: String) -> Self {
        ToolOutcome { content, is_error: false, code: None }
    }
}

/// Why a tool call failed. Stable strings: never change or reuse one (docs/error-codes.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolErrorCode {
    /// An unknown tool, arguments that are not an object, a missing, mistyped or oversized field.
    InvalidCall,
    /// A path that cannot name a file: empty where a file is needed, too long, a control character.
    InvalidPath,
    /// A path that leaves the stage: absolute, `..`, or through a hidden or internal component.
    OutsideStage,
    /// A path through a symbolic link (or another entry that is not memory).
    Symlink,
    /// A path under `sources/` (in any case): read-only evidence, not in the stage.
    SourcesReadOnly,
    /// A write to something other than a topic file (`topics/**.md`).
    ReadOnlyPath,
    /// A new path that differs from an existing one only by case or Unicode normalization.
    CaseAlias,
    /// No file at the path.
    NotFound,
    /// A directory where a file is needed, or a file where a directory is needed.
    NotAFile,
    /// The destination of a move exists.
    Exists,
    /// `Edit`'s `old_string` does not occur in the file.
    EditNoMatch,
    /// `Edit`'s `old_string` occurs more than once and `replace_all` is not set.
    EditAmbiguous,
    /// The file is not UTF-8 text, so it cannot be edited or moved as a topic.
    NotUtf8,
    /// The file a call would leave is larger than [`MAX_FILE_BYTES`].
    TooLarge,
    /// A `Glob` or `Grep` pattern that does not compile (or is too large).
    InvalidPattern,
    /// A committed file changed since the stage was made.
    Stale,
    /// The stage directory could not be read or written.
    Io,
}

impl ToolErrorCode {
    /// Every code, for the registry test.
    pub const ALL: &'static [ToolErrorCode] = &[
        Self::InvalidCall,
        Self::InvalidPath,
        Self::OutsideStage,
        Self::Symlink,
        Self::SourcesReadOnly,
        Self::ReadOnlyPath,
        Self::CaseAlias,
        Self::NotFound,
        Self::NotAFile,
        Self::Exists,
        Self::EditNoMatch,
        Self::EditAmbiguous,
        Self::NotUtf8,
        Self::TooLarge,
        Self::InvalidPattern,
        Self::Stale,
        Self::Io,
    ];

    /// The stable string form.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidCall => "WRITER_STAGE_INVALID_CALL",
            Self::InvalidPath => "WRITER_STAGE_INVALID_PATH",
            Self::OutsideStage => "WRITER_STAGE_PATH_OUTSIDE",
            Self::Symlink => "WRITER_STAGE_SYMLINK",
            Self::SourcesReadOnly => "WRITER_STAGE_SOURCES_READ_ONLY",
            Self::ReadOnlyPath => "WRITER_STAGE_READ_ONLY_PATH",
            Self::CaseAlias => "WRITER_STAGE_CASE_ALIAS",
            Self::NotFound => "WRITER_STAGE_NOT_FOUND",
            Self::NotAFile => "WRITER_STAGE_NOT_A_FILE",
            Self::Exists => "WRITER_STAGE_EXISTS",
            Self::EditNoMatch => "WRITER_STAGE_EDIT_NO_MATCH",
            Self::EditAmbiguous => "WRITER_STAGE_EDIT_AMBIGUOUS",
            Self::NotUtf8 => "WRITER_STAGE_NOT_UTF8",
            Self::TooLarge => "WRITER_STAGE_TOO_LARGE",
            Self::InvalidPattern => "WRITER_STAGE_INVALID_PATTERN",
            Self::Stale => "WRITER_STAGE_STALE",
            Self::Io => "WRITER_STAGE_IO",
        }
    }
}

impl std::fmt::Display for ToolErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed tool call: a code, what went wrong, and what the model should do instead.
#[derive(Clone, Debug)]
pub(crate) struct ToolError {
    pub(crate) code: ToolErrorCode,
    message: String,
    hint: &'static str,
}

/// The hints (spec 02 §10.2 tool etiquette).
const HINT_RELATIVE: &str = "Use a path relative to the workspace root, such as topics/people/ada.md; nothing outside the workspace is reachable.";
const HINT_SOURCES: &str = "sources/ is read-only evidence and is not part of this workspace: the conversation's full text is in the prompt. Write what it says into topic files under topics/ and cite it there.";
const HINT_READ_ONLY: &str = "Only topic files (topics/**/*.md) can be written. The derived files (core.md, timeline/, recent_events.jsonl, relations.json) are rebuilt by the runtime; facts needed in every conversation go to topics/core.md.";
const HINT_NOT_FOUND: &str =
    "Read, Edit, Move and Delete work on existing files only: use Glob to find files, and Write to create a new one.";
const HINT_NOT_A_FILE: &str =
    "Name a file, not a directory: use Glob (for example topics/**/*.md) to list a directory.";
const HINT_NO_MATCH: &str = "old_string must match the file's text exactly, whitespace included. Re-read the file with Read and anchor on text you saw; after two failed Edits of the same text, stop retrying it.";
const HINT_AMBIGUOUS: &str =
    "Add surrounding text to old_string so it matches once, or set replace_all to true to replace every occurrence.";
const HINT_CASE: &str = "Use the existing spelling of the path: names that differ only by case or Unicode normalization are the same file on many systems.";
const HINT_CALL: &str = "Call one of Read, Write, Edit, Glob, Grep, Move, Delete with the arguments its schema names.";
const HINT_PATTERN: &str = "Glob takes a pattern such as topics/**/*.md; Grep takes a regular expression (Rust regex syntax, no look-around or backreferences).";
const HINT_STALE: &str = "The workspace changed under this run; stop editing and end the turn.";
const HINT_EXISTS: &str = "Pick a destination that does not exist, or Delete it first.";
const HINT_NONE: &str = "Report the problem in your reply if it persists.";

impl ToolError {
    fn new(code: ToolErrorCode, message: impl Into<String>, hint: &'static str) -> Self {
        ToolError { code, message: message.into(), hint }
    }

    pub(crate) fn invalid_call(message: impl Into<String>) -> Self {
        Self::new(ToolErrorCode::InvalidCall, message, HINT_CALL)
    }

    pub(crate) fn invalid_path(raw: &str, why: &str) -> Self {
        Self::new(ToolErrorCode::InvalidPath, format!("{why}: {}", shown(raw)), HINT_RELATIVE)
    }

    pub(crate) fn outside(raw: &str) -> Self {
        Self::new(ToolErrorCode::OutsideStage, format!("path escapes the workspace: {}", shown(raw)), HINT_RELATIVE)
    }

    pub(crate) fn symlink(path: &str) -> Self {
        Self::new(
            ToolErrorCode::Symlink,
            format!("path goes through a symbolic link or special file: {}", shown(path)),
            HINT_RELATIVE,
        )
    }

    pub(crate) fn sources(raw: &str) -> Self {
        Self::new(ToolErrorCode::SourcesReadOnly, format!("sources/ is read-only: {}", shown(raw)), HINT_SOURCES)
    }

    pub(crate) fn read_only(raw: &str) -> Self {
        Self::new(
            ToolErrorCode::ReadOnlyPath,
            format!("only topics/**/*.md is writable: {}", shown(raw)),
            HINT_READ_ONLY,
        )
    }

    pub(crate) fn case_alias(path: &str, existing: &str) -> Self {
        Self::new(
            ToolErrorCode::CaseAlias,
            format!("{} differs only by case or normalization from the existing {}", shown(path), shown(existing)),
            HINT_CASE,
        )
    }

    pub(crate) fn not_found(path: &str) -> Self {
        Self::new(ToolErrorCode::NotFound, format!("no such file: {}", shown(path)), HINT_NOT_FOUND)
    }

    pub(crate) fn not_a_file(path: &str) -> Self {
        Self::new(ToolErrorCode::NotAFile, format!("not a file: {}", shown(path)), HINT_NOT_A_FILE)
    }

    pub(crate) fn exists(path: &str) -> Self {
        Self::new(ToolErrorCode::Exists, format!("the destination exists: {}", shown(path)), HINT_EXISTS)
    }

    pub(crate) fn no_match(path: &str) -> Self {
        Self::new(ToolErrorCode::EditNoMatch, format!("old_string was not found in {}", shown(path)), HINT_NO_MATCH)
    }

    pub(crate) fn ambiguous(path: &str, count: usize) -> Self {
        Self::new(
            ToolErrorCode::EditAmbiguous,
            format!("old_string occurs {count} times in {}", shown(path)),
            HINT_AMBIGUOUS,
        )
    }

    pub(crate) fn not_utf8(path: &str) -> Self {
        Self::new(ToolErrorCode::NotUtf8, format!("not UTF-8 text: {}", shown(path)), HINT_NONE)
    }

    pub(crate) fn too_large(path: &str) -> Self {
        Self::new(
            ToolErrorCode::TooLarge,
            format!("the file would exceed {MAX_FILE_BYTES} bytes: {}", shown(path)),
            HINT_NONE,
        )
    }

    pub(crate) fn pattern(why: impl std::fmt::Display) -> Self {
        Self::new(ToolErrorCode::InvalidPattern, format!("invalid pattern: {why}"), HINT_PATTERN)
    }

    pub(crate) fn stale(path: &str) -> Self {
        Self::new(ToolErrorCode::Stale, format!("the committed file changed: {}", shown(path)), HINT_STALE)
    }

    pub(crate) fn io(path: &str, error: &std::io::Error) -> Self {
        Self::new(ToolErrorCode::Io, format!("cannot access {}: {error}", shown(path)), HINT_NONE)
    }

    /// The result the model sees.
    fn into_outcome(self) -> ToolOutcome {
        ToolOutcome {
            content: format!("{}: {}\nHint: {}", self.code, self.message, self.hint),
            is_error: true,
            code: Some(self.code),
        }
    }

    /// The error as a transaction error, for [`Stage::edit`].
    pub(crate) fn into_tx(self) -> TxError {
        let code = if self.code == ToolErrorCode::Stale { TxCode::ConcurrentUpdate } else { TxCode::Io };
        TxError::new(code, self.message).with_detail("stage_code", self.code.as_str())
    }
}

/// A path as the model wrote it, quoted and escaped, and cut short when it is long.
fn shown(path: &str) -> String {
    let cut: String = path.chars().take(300).collect();
    format!("{cut:?}")
}

/// The arguments object of one call, with typed field access.
struct Args<'a>(&'a Map<String, Value>);

impl<'a> Args<'a> {
    fn of(arguments: &'a Value) -> Result<Self, ToolError> {
        match arguments {
            Value::Object(map) => Ok(Args(map)),
            _ => Err(ToolError::invalid_call("the arguments must be a JSON object")),
        }
    }

    /// A required string field.
    fn string(&self, name: &str) -> Result<&'a str, ToolError> {
        self.optional_string(name)?.ok_or_else(|| ToolError::invalid_call(format!("missing string field {name}")))
    }

    /// An optional string field (`null` counts as absent).
    fn optional_string(&self, name: &str) -> Result<Option<&'a str>, ToolError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) if text.len() > MAX_ARGUMENT_BYTES => {
                Err(ToolError::invalid_call(format!("{name} exceeds {MAX_ARGUMENT_BYTES} bytes")))
            }
            Some(Value::String(text)) => Ok(Some(text)),
            Some(_) => Err(ToolError::invalid_call(format!("{name} must be a string"))),
        }
    }

    /// An optional boolean field, false when absent.
    fn flag(&self, name: &str) -> Result<bool, ToolError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(flag)) => Ok(*flag),
            Some(_) => Err(ToolError::invalid_call(format!("{name} must be a boolean"))),
        }
    }
}

impl Stage {
    /// Run the tool `name` with `arguments` (the JSON object the model sent) on the stage.
    /// Every failure, including an unknown tool or malformed arguments, is an error
    /// outcome with a code and a hint for the model.
    pub fn execute(&mut self, name: &str, arguments: &Value) -> ToolOutcome {
        let result = Args::of(arguments).and_then(|args| match name {
            "Read" => self.tool_read(&args),
            "Write" => self.tool_write(&args),
            "Edit" => self.tool_edit(&args),
            "Glob" => self.tool_glob(&args),
            "Grep" => self.tool_grep(&args),
            "Move" => self.tool_move(&args),
            "Delete" => self.tool_delete(&args),
            _ => Err(ToolError::invalid_call(format!("unknown tool {}", shown(name)))),
        });
        match result {
            Ok(content) => ToolOutcome::ok(content),
            Err(error) => error.into_outcome(),
        }
    }

    /// [`Stage::execute`] with the arguments as the JSON text a model sent, which may not
    /// parse (an error outcome then).
    pub fn execute_json(&mut self, name: &str, arguments: &str) -> ToolOutcome {
        if arguments.len() > 4 * MAX_ARGUMENT_BYTES {
            return ToolError::invalid_call("the arguments are too large").into_outcome();
        }
        match serde_json::from_str::<Value>(arguments) {
            Ok(value) => self.execute(name, &value),
            Err(error) => ToolError::invalid_call(format!("the arguments are not valid JSON: {error}")).into_outcome(),
        }
    }
}

#[cfg(test)]
mod tests;
