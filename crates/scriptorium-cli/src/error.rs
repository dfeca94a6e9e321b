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
    /// `hook install` / `uninstall`: the agent's settings file is not JSON or not the documented shape.
    SettingsInvalid,
    /// `hook install` / `uninstall`: the settings file or its backup cannot be written.
    SettingsWriteFailed,
    /// `watch`: the watcher cannot start (the session store, the workspace or the file watch).
    WatchFailed,
    /// A bug: the program panicked.
    Internal,
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
        Self::SettingsInvalid,
        Self::SettingsWriteFailed,
        Self::WatchFailed,
        Self::Internal,
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
            Self::SettingsInvalid => "CLI_SETTINGS_INVALID",
            Self::SettingsWriteFailed => "CLI_SETTINGS_WRITE_FAILED",
            Self::WatchFailed => "CLI_WATCH_FAILED",
            Self::Internal => "CLI_INTERNAL",
        }
    }
}

/// A CLI failure: a stable code and a one-line message.
#[derive(Debug)]
pub(crate) struct CliError {
    code: CliErrorCode,
    /// The public contract code shown instead of `code`, for an argument the contract
    /// itself ranges (`INVALID_ARGUMENT` for `--top-k 0`).
    contract: Option<scriptorium_transaction::ErrorCode>,
    message: String,
}

impl CliError {
    /// An error with `code`; line breaks in `message` become spaces so the report
    /// stays one line whatever a file name or an OS message holds.
    pub(crate) fn new(code: CliErrorCode, message: impl Into<String>) -> Self {
        let message: String = message.into().chars().map(|c| if c == '\n' || c == '\r' { ' ' } else { c }).collect();
        CliError { code, contract: None, message }
    }

    /// A bad argument value (out of its range, malformed): the contract code
    /// `INVALID_ARGUMENT`, exit status 2 like every usage error.
    pub(crate) fn invalid_argument(message: impl Into<String>) -> Self {
        CliError {
            contract: Some(scriptorium_transaction::ErrorCode::InvalidArgument),
            ..Self::new(CliErrorCode::Usage, message)
        }
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
        let code = self.contract.map_or(self.code.as_str(), scriptorium_transaction::ErrorCode::as_str);
        write!(f, "error[{code}]: {}", self.message)
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
