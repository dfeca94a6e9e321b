//! The one check of a path a caller names (decision 6), shared by `memory_get` and the
//! HTTP routes: never outside the workspace, never an internal or hidden file, in any
//! spelling a careless consumer might decode it to (percent-decoded repeatedly, for
//! `%252e`, and with backslashes read as separators).

use std::borrow::Cow;

use scriptorium_topic_markdown::percent_decode;
use scriptorium_transaction::{is_hidden_component, workspace_relative};

use crate::error::{Error, ErrorCode};

/// How many rounds of percent-decoding are checked (`%25252e` is three).
const DECODE_ROUNDS: usize = 4;

/// The message of every refusal, so no refusal tells what exists where.
const OUTSIDE: &str = "path escapes the workspace or names an internal file";

/// How the name of a path is read once every spelling of it passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spelling {
    /// As written: a file may be named `a%3Ab.md` (a tool argument).
    Literal,
    /// Percent-decoded once, as a URL path carries it (`a%20b.md` names `a b.md`).
    PercentEncoded,
}

/// The refusal of `raw`, one message for every reason.
pub(crate) fn outside(raw: &str) -> Error {
    Error::new(ErrorCode::PathOutsideWorkspace, OUTSIDE).with_path(raw)
}

/// The normalized workspace-relative path `raw` names (read as `spelling` says), checked
/// by name only: the file system is not looked at.
///
/// Errors: `PATH_OUTSIDE_WORKSPACE` for an absolute path, `..`, an internal or hidden
/// component (`.scriptorium/`, `.git/`, `memory-superseded/`, any `.name`), or any of
/// those after percent-decoding or reading `\` as `/`; `INVALID_ARGUMENT` for a NUL in
/// the name, or a path that names the workspace itself (empty, `.`).
pub fn workspace_path(raw: &str, spelling: Spelling) -> Result<String, Error> {
    let name = match spelling {
        Spelling::Literal => Cow::Borrowed(raw),
        Spelling::PercentEncoded => Cow::Owned(percent_decode(raw)),
    };
    let normalized = workspace_relative(&name).map_err(|error| match error.code() {
        scriptorium_transaction::ErrorCode::PathOutsideWorkspace => outside(raw),
        _ => Error::from(error),
    })?;
    let mut current = raw.to_owned();
    for _ in 0..=DECODE_ROUNDS {
        for variant in [current.clone(), current.replace('\\', "/")] {
            if variant.contains('\0') {
                return Err(outside(raw));
            }
            let Ok(variant) = workspace_relative(&variant) else { return Err(outside(raw)) };
            if variant.split('/').any(is_hidden_component) {
                return Err(outside(raw));
            }
        }
        let decoded = percent_decode(&current);
        if decoded == current {
            break;
        }
        current = decoded;
    }
    if normalized.is_empty() {
        return Err(
            Error::new(ErrorCode::InvalidArgument, "the path names the workspace itself, not a file").with_path(raw)
        );
    }
    Ok(normalized)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_path_is_named_decoded_once_and_checked_in_every_spelling() {
        let code = |raw: &str| workspace_path(raw, Spelling::PercentEncoded).map_err(|error| error.code());
        assert_eq!(code("topics/a%20b.md"), Ok("topics/a b.md".to_owned()));
        assert_eq!(code("topics/a%253Ab.md"), Ok("topics/a%3Ab.md".to_owned()));
        assert_eq!(code("topics/people/ada.md"), Ok("topics/people/ada.md".to_owned()));
        for raw in ["topics/%2e%2e/x.md", "topics/%252e%252e/x.md", "topics/..%5Cx.md", "%2Fetc%2Fpasswd"] {
            assert_eq!(code(raw), Err(ErrorCode::PathOutsideWorkspace), "{raw}");
        }
        for raw in ["", ".", "%2e", "./", "%2e%2f"] {
            assert!(code(raw).is_err(), "{raw:?} names the workspace itself");
        }
        // Read literally, the same escape is a file name.
        assert_eq!(
            workspace_path("topics/a%20b.md", Spelling::Literal).map_err(|e| e.code()),
            Ok("topics/a%20b.md".to_owned())
        );
    }
}
