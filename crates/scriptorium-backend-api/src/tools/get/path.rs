//! Which file a `memory_get` path names, or why it names none (decision 6): never outside
//! the workspace, never an internal or hidden file, never through a symbolic link.
//!
//! The path is read literally (a file may be named `a%3Ab.md`), but it is refused when
//! any spelling a careless consumer might decode it to would escape: percent-decoded
//! (repeatedly, for `%252e`) and with backslashes read as separators.

use std::path::{Path, PathBuf};

use scriptorium_topic_markdown::percent_decode;
use scriptorium_transaction::{is_hidden_component, workspace_relative};

use crate::error::{Error, ErrorCode};

/// How many rounds of percent-decoding are checked (`%25252e` is three).
const DECODE_ROUNDS: usize = 4;

/// The message of every refusal, so no refusal tells what exists where.
const OUTSIDE: &str = "path escapes the workspace or names an internal file";

fn outside(raw: &str) -> Error {
    Error::new(ErrorCode::PathOutsideWorkspace, OUTSIDE).with_path(raw)
}

/// The normalized workspace-relative path `raw` names, checked by name only.
///
/// Errors: `PATH_OUTSIDE_WORKSPACE` for an absolute path, `..`, an internal or hidden
/// component (`.scriptorium/`, `.git/`, `memory-superseded/`, any `.name`), or any of
/// those after percent-decoding or reading `\` as `/`; `INVALID_ARGUMENT` for a NUL.
pub(crate) fn relative(raw: &str) -> Result<String, Error> {
    let normalized = workspace_relative(raw).map_err(|error| match error.code() {
        scriptorium_transaction::ErrorCode::PathOutsideWorkspace => outside(raw),
        _ => Error::from(error),
    })?;
    let mut spelling = raw.to_owned();
    for _ in 0..=DECODE_ROUNDS {
        for variant in [spelling.clone(), spelling.replace('\\', "/")] {
            if variant.contains('\0') {
                return Err(outside(raw));
            }
            let Ok(variant) = workspace_relative(&variant) else { return Err(outside(raw)) };
            if variant.split('/').any(is_hidden_component) {
                return Err(outside(raw));
            }
        }
        let decoded = percent_decode(&spelling);
        if decoded == spelling {
            break;
        }
        spelling = decoded;
    }
    if normalized.is_empty() {
        return Err(
            Error::new(ErrorCode::InvalidArgument, "the path names the workspace itself, not a file").with_path(raw)
        );
    }
    Ok(normalized)
}

/// The file on disk for the checked `relative` path: no component below `root` may be a
/// symbolic link (checked with `lstat`, never followed).
///
/// Errors: `PATH_OUTSIDE_WORKSPACE` for a link on the way; `INVALID_ARGUMENT` when the
/// file does not exist or is not a regular file.
pub(crate) fn on_disk(root: &Path, relative: &str, raw: &str) -> Result<PathBuf, Error> {
    let missing = || {
        Error::new(ErrorCode::InvalidArgument, format!("no file {relative}: memory_browse lists the files"))
            .with_path(raw)
    };
    let mut path = root.to_path_buf();
    for component in relative.split('/') {
        path.push(component);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => return Err(outside(raw)),
            Ok(_) => {}
            Err(_) => return Err(missing()),
        }
    }
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_file() => Ok(path),
        Ok(_) => Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("{relative} is not a file: memory_browse lists the files"),
        )
        .with_path(raw)),
        Err(_) => Err(missing()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_reads_escapes_and_leaves_the_rest() {
        assert_eq!(percent_decode("%2e%2E/%2Fx"), "..//x");
        assert_eq!(percent_decode("a%3Ab%zz%4"), "a:b%zz%4");
        assert_eq!(percent_decode("%252e"), "%2e");
    }

    #[test]
    fn names_are_checked_in_every_spelling() {
        let code = |raw: &str| relative(raw).map_err(|error| error.code());
        assert_eq!(code("topics/./people/dave.md"), Ok("topics/people/dave.md".to_owned()));
        assert_eq!(code("sources/x/_v2/a%3Ab.md"), Ok("sources/x/_v2/a%3Ab.md".to_owned()));
        for raw in [
            "/etc/passwd",
            "../x.md",
            "topics/../../x",
            "%2e%2e/x",
            "topics%2F..%2F..%2Fetc",
            "%252e%252e/x",
            "..\\x",
            "%2Fetc%2Fpasswd",
            ".scriptorium/writer-status.json",
            ".git/HEAD",
            "topics/.git/x.md",
            "memory-superseded/topics/a.md",
            "%2egit/HEAD",
            "topics/a%00.md",
        ] {
            assert_eq!(code(raw), Err(ErrorCode::PathOutsideWorkspace), "{raw}");
        }
        assert_eq!(code("a\0b"), Err(ErrorCode::InvalidArgument));
        assert_eq!(code("."), Err(ErrorCode::InvalidArgument));
    }
}
