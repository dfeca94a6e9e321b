//! Commit-message sanitation (spec 02 §4.2): one printable line of at most 500 characters.

use scriptorium_archive_format::text::is_printable;

/// The message used when the caller gives none, or only characters that are dropped.
pub const DEFAULT_MESSAGE: &str = "Update memory";

/// The longest message kept, in characters (code points, as Python's `len` counts).
pub const MAX_MESSAGE_CHARS: usize = 500;

/// Sanitize a commit message the way the reference does: each `\n` becomes a space,
/// characters that are not printable (Python `str.isprintable`, so `\r`, tabs and other
/// controls) are dropped, the result is trimmed and cut to [`MAX_MESSAGE_CHARS`]; an
/// empty result is [`DEFAULT_MESSAGE`].
///
/// The cut is trimmed once more, because `git commit` strips trailing spaces and the
/// reference's history therefore never ends a message with one.
pub fn sanitize_message(message: &str) -> String {
    let printable: String =
        message.chars().map(|c| if c == '\n' { ' ' } else { c }).filter(|c| is_printable(*c)).collect();
    let cut: String = printable.trim_matches(' ').chars().take(MAX_MESSAGE_CHARS).collect();
    let cut = cut.trim_end_matches(' ');
    if cut.is_empty() { DEFAULT_MESSAGE.to_owned() } else { cut.to_owned() }
}
