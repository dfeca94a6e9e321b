//! The CLI's side of the facade: what the verbs that reach the layers through
//! `scriptorium-backend-api` share (its errors as CLI errors, the disabled backend).

use crate::error::CliError;

/// A backend error as the CLI reports it: its public contract code, its message and the
/// path it names, exit status 1.
pub(crate) fn error(error: &scriptorium_backend_api::Error) -> CliError {
    let message = match error.path() {
        Some(path) if !error.message().contains(path) => format!("{path}: {}", error.message()),
        _ => error.message().to_owned(),
    };
    CliError::refused(error.code().as_str(), message)
}

/// `memory.backend = none` (spec 02 §1.2, §8.3): the verb stops before the workspace is
/// touched, exit status 1.
pub(crate) fn disabled() -> CliError {
    CliError::refused(
        scriptorium_backend_api::ErrorCode::MemoryDisabled.as_str(),
        scriptorium_backend_api::DISABLED_MESSAGE,
    )
}
