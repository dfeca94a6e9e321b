//! The one check of a path a caller names (decision 6), shared by `memory_get` and the
//! HTTP routes: never outside the workspace, never an internal or hidden file, in any
//! spelling a careless consumer might decode it to (percent-decoded repeatedly, for
//! `%252e`, and with backslashes read as separators), and never through a symbolic link.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

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

/// What a checked path names on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OnDisk {
    /// A regular file, at this path below the root.
    File(PathBuf),
    /// Nothing (a component on the way is missing).
    Missing,
    /// Something that is not a regular file (a directory, a FIFO, …).
    NotAFile,
}

/// What the checked `relative` path (from [`workspace_path`]) names below `root`, looked
/// at with `lstat`, never following a symbolic link.
///
/// Errors: `PATH_OUTSIDE_WORKSPACE` when a component on the way, or the file itself, is
/// a symbolic link (also when the rest of the path does not exist yet, as for a new file).
pub fn on_disk(root: &Path, relative: &str) -> Result<OnDisk, Error> {
    let mut path = root.to_path_buf();
    for component in relative.split('/') {
        path.push(component);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => return Err(outside(relative)),
            Ok(_) => {}
            Err(_) => return Ok(OnDisk::Missing),
        }
    }
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_file() => Ok(OnDisk::File(path)),
        Ok(_) => Ok(OnDisk::NotAFile),
        Err(_) => Ok(OnDisk::Missing),
    }
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

    #[test]
    fn on_disk_names_files_and_refuses_links_on_the_way() -> std::io::Result<()> {
        let root = std::env::temp_dir().join(format!("scriptorium-paths-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("topics/people"))?;
        std::fs::write(root.join("topics/people/ada.md"), "# Ada\n")?;
        assert_eq!(on_disk(&root, "topics/people/ada.md").ok(), Some(OnDisk::File(root.join("topics/people/ada.md"))));
        assert_eq!(on_disk(&root, "topics/people").ok(), Some(OnDisk::NotAFile));
        assert_eq!(on_disk(&root, "topics/none/x.md").ok(), Some(OnDisk::Missing));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(root.join("topics/people"), root.join("topics/linked"))?;
            std::os::unix::fs::symlink(root.join("topics/people/ada.md"), root.join("topics/alias.md"))?;
            for relative in ["topics/linked/ada.md", "topics/linked/new.md", "topics/alias.md"] {
                let code = on_disk(&root, relative).map_err(|error| error.code());
                assert_eq!(code, Err(ErrorCode::PathOutsideWorkspace), "{relative}");
            }
        }
        std::fs::remove_dir_all(&root)
    }
}
