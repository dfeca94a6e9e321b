//! The CLI's own errors: a stable `CLI_*` code plus one line for humans.
//!
//! Every failure the binary reports goes through [`CliError`], so that stderr always
//! holds exactly one line `error[CODE]: message` and scripts can match on the code.

use std::path::Path;

/// Stable codes of the CLI's own errors. The string form is a public contract
/// (docs/error-codes.md): never change or reuse one; retire it instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub(crate) enum CliErrorCode {
    /// The command line does not parse (unknown verb, missing or extra argument).
    Usage,
    /// A file named on the command line does not exist.
    FileNotFound,
    /// A file cannot be read for another reason (permissions, I/O error).
    ReadFailed,
    /// An archive holds no valid UTF-8 line to scan, or a legacy archive is not UTF-8.
    NotUtf8,
    /// The path is not a regular `*.md` file, so it cannot be a source archive.
    NotAnArchive,
    /// The workspace directory does not exist or has neither `sources/` nor `topics/`.
    WorkspaceNotFound,
    /// Writing the report to stdout failed (other than a closed pipe).
    OutputFailed,
    /// `search` / `grep`: the query or a filter is invalid (blank query, bad date, empty window).
    BadQuery,
    /// `init`: the workspace directory cannot be created or opened.
    InitFailed,
    /// `edit`: the draft cannot be written or read back, or the editor cannot start or fails.
    EditFailed,
    /// `export`: the archive cannot be written (or a file of the workspace cannot be read into it).
    ExportFailed,
    /// `hook install` / `uninstall`: the agent's settings file is not JSON or not the documented shape.
    SettingsInvalid,
    /// `hook install` / `uninstall`: the settings file or its backup cannot be written.
    SettingsWriteFailed,
    /// `watch`: the watcher cannot start (the session store, the workspace or the file watch).
    WatchFailed,
    /// A bug: the program panicked.
    Internal,
    /// `serve`: the address cannot be bound, the token file cannot be kept, or the server failed.
    HttpServeFailed,
}

impl CliErrorCode {
    /// Every code the CLI can produce, for the registry test.
    #[cfg(test)]
    pub(crate) const ALL: &'static [CliErrorCode] = &[
        Self::Usage,
        Self::FileNotFound,
        Self::ReadFailed,
        Self::NotUtf8,
        Self::NotAnArchive,
        Self::WorkspaceNotFound,
        Self::OutputFailed,
        Self::BadQuery,
        Self::InitFailed,
        Self::EditFailed,
        Self::ExportFailed,
        Self::SettingsInvalid,
        Self::SettingsWriteFailed,
        Self::WatchFailed,
        Self::Internal,
        Self::HttpServeFailed,
    ];

    /// The stable string form, for example `"CLI_FILE_NOT_FOUND"`.
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Self::Usage => "CLI_USAGE",
            Self::FileNotFound => "CLI_FILE_NOT_FOUND",
            Self::ReadFailed => "CLI_READ_FAILED",
            Self::NotUtf8 => "CLI_NOT_UTF8",
            Self::NotAnArchive => "CLI_NOT_AN_ARCHIVE",
            Self::WorkspaceNotFound => "CLI_WORKSPACE_NOT_FOUND",
            Self::OutputFailed => "CLI_OUTPUT_FAILED",
            Self::BadQuery => "CLI_BAD_QUERY",
            Self::InitFailed => "CLI_INIT_FAILED",
            Self::EditFailed => "CLI_EDIT_FAILED",
            Self::ExportFailed => "CLI_EXPORT_FAILED",
            Self::SettingsInvalid => "CLI_SETTINGS_INVALID",
            Self::SettingsWriteFailed => "CLI_SETTINGS_WRITE_FAILED",
            Self::WatchFailed => "CLI_WATCH_FAILED",
            Self::Internal => "CLI_INTERNAL",
            Self::HttpServeFailed => "CLI_HTTP_SERVE_FAILED",
        }
    }
}

/// A CLI failure: a stable code and a one-line message.
#[derive(Debug)]
pub(crate) struct CliError {
    code: CliErrorCode,
    /// The public contract code shown instead of `code`, for an argument the contract
    /// itself ranges (`INVALID_ARGUMENT` for `--top-k 0`).
    contract: Option<&'static str>,
    message: String,
    /// Exit status 1 instead of 2: the command ran and its answer is a refusal (a
    /// rejected `edit`, a path `show` cannot open, memory disabled).
    finding: bool,
}

impl CliError {
    /// An error with `code`; line breaks in `message` become spaces so the report
    /// stays one line whatever a file name or an OS message holds.
    pub(crate) fn new(code: CliErrorCode, message: impl Into<String>) -> Self {
        let message: String = message.into().chars().map(|c| if c == '\n' || c == '\r' { ' ' } else { c }).collect();
        CliError { code, contract: None, message, finding: false }
    }

    /// A bad argument value (out of its range, malformed): the contract code
    /// `INVALID_ARGUMENT`, exit status 2 like every usage error.
    pub(crate) fn invalid_argument(message: impl Into<String>) -> Self {
        CliError {
            contract: Some(scriptorium_backend_api::layers::transaction::ErrorCode::InvalidArgument.as_str()),
            ..Self::new(CliErrorCode::Usage, message)
        }
    }

    /// A refusal by a layer below, shown with its public contract `code`
    /// (`PATH_OUTSIDE_WORKSPACE`, `MEMORY_DISABLED`, …) and exit status 1.
    pub(crate) fn refused(code: &'static str, message: impl Into<String>) -> Self {
        CliError { contract: Some(code), finding: true, ..Self::new(CliErrorCode::ReadFailed, message) }
    }

    /// The exit status: 1 for a refusal, 2 for every other error.
    pub(crate) fn exit_status(&self) -> u8 {
        if self.finding { 1 } else { 2 }
    }

    /// The code scripts match on: the contract code when there is one, else the `CLI_*` code.
    pub(crate) fn code_str(&self) -> &'static str {
        self.contract.unwrap_or(self.code.as_str())
    }

    /// The error for a failed read of `path`, classified by the I/O error kind.
    pub(crate) fn read(path: &Path, err: &std::io::Error) -> Self {
        match err.kind() {
            std::io::ErrorKind::NotFound => {
                Self::new(CliErrorCode::FileNotFound, format!("{}: no such file", path.display()))
            }
            _ => Self::new(CliErrorCode::ReadFailed, format!("{}: cannot read: {err}", path.display())),
        }
    }

    /// The stable code.
    pub(crate) fn code(&self) -> CliErrorCode {
        self.code
    }

    /// The human message without the code.
    pub(crate) fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "error[{}]: {}", self.code_str(), self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_prefixed() {
        let mut seen = std::collections::HashSet::new();
        for code in CliErrorCode::ALL {
            let s = code.as_str();
            assert!(s.starts_with("CLI_"), "{s}");
            assert!(s.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'), "{s}");
            assert!(seen.insert(s), "duplicate code {s}");
        }
    }

    #[test]
    fn codes_are_registered_in_docs() -> Result<(), Box<dyn std::error::Error>> {
        // Read at test time, not with `include_str!`: the registry lives outside the
        // packaged crate.
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/error-codes.md"))?;
        for code in CliErrorCode::ALL {
            let row = format!("| `{}` | scriptorium-cli |", code.as_str());
            assert!(doc.contains(&row), "docs/error-codes.md lacks a row `{row} … |`");
        }
        Ok(())
    }

    #[test]
    fn message_is_one_line() {
        let err = CliError::new(CliErrorCode::Usage, "a\nb\r\nc");
        assert_eq!(err.to_string(), "error[CLI_USAGE]: a b  c");
    }
}
