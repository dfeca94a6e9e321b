//! Which file a `memory_get` path names, or why it names none (decision 6): never outside
//! the workspace, never an internal or hidden file, never through a symbolic link.
//!
//! The path is read literally (a file may be named `a%3Ab.md`), but it is refused when
//! any spelling a careless consumer might decode it to would escape: percent-decoded
//! (repeatedly, for `%252e`) and with backslashes read as separators.

use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorCode};
use crate::paths::{self, OnDisk, Spelling, outside, workspace_path};

/// The normalized workspace-relative path `raw` names, read literally and checked by
/// name only ([`workspace_path`]).
pub(crate) fn relative(raw: &str) -> Result<String, Error> {
    workspace_path(raw, Spelling::Literal)
}

/// The file on disk for the checked `relative` path ([`paths::on_disk`]: no component
/// below `root` may be a symbolic link).
///
/// Errors: `PATH_OUTSIDE_WORKSPACE` for a link on the way; `INVALID_ARGUMENT` when the
/// file does not exist or is not a regular file.
pub(crate) fn on_disk(root: &Path, relative: &str, raw: &str) -> Result<PathBuf, Error> {
    match paths::on_disk(root, relative).map_err(|_| outside(raw))? {
        OnDisk::File(path) => Ok(path),
        OnDisk::Missing => {
            Err(Error::new(ErrorCode::InvalidArgument, format!("no file {relative}: memory_browse lists the files"))
                .with_path(raw))
        }
        OnDisk::NotAFile => Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("{relative} is not a file: memory_browse lists the files"),
        )
        .with_path(raw)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scriptorium_topic_markdown::percent_decode;

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
