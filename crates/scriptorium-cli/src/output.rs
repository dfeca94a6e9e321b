//! Writing reports to stdout. A closed pipe (`scriptorium check | head`) ends the
//! output quietly instead of panicking the way `println!` does.

use std::io::Write as _;

use crate::error::{CliError, CliErrorCode};

/// Write `text` to stdout and flush. A broken pipe counts as success: the reader
/// has seen all it wanted.
pub(crate) fn print(text: &str) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(err) => Err(CliError::new(CliErrorCode::OutputFailed, format!("cannot write to stdout: {err}"))),
    }
}

/// Pretty JSON followed by a newline.
pub(crate) fn print_json(value: &serde_json::Value) -> Result<(), CliError> {
    // Serializing a `Value` to a string cannot fail (no I/O, string keys only).
    let text = serde_json::to_string_pretty(value)
        .map_err(|err| CliError::new(CliErrorCode::Internal, format!("cannot render JSON: {err}")))?;
    print(&format!("{text}\n"))
}

/// The plural-aware count for human output: `1 frame`, `3 frames`.
pub(crate) fn count(n: usize, singular: &str, plural: &str) -> String {
    format!("{n} {}", if n == 1 { singular } else { plural })
}
