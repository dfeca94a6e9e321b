//! Path parameters, resolved by backend-api's one name check (`workspace_path`: no
//! absolute path, no `..`, no internal or hidden component, in every spelling a careless
//! consumer might decode the raw path to, percent-decoded repeatedly and `\` read as `/`),
//! named as the URL decodes them once, and then on disk by its `on_disk`, without following
//! a symbolic link at any component. A refusal never tells what exists where.

use std::path::{Path, PathBuf};

pub(crate) use scriptorium_backend_api::layers::topic_markdown::percent_decode;
use scriptorium_backend_api::paths::{OnDisk, Spelling, on_disk as backend_on_disk, workspace_path};

use super::error::ApiError;

/// The code of every refusal.
pub(crate) const OUTSIDE: &str = "PATH_OUTSIDE_WORKSPACE";

fn forbidden() -> ApiError {
    ApiError::forbidden(OUTSIDE, "the path escapes the workspace or names an internal file")
}

/// The normalized workspace-relative path that `raw` (as sent, before any decoding)
/// names, after one round of percent-decoding, checked in every spelling; the workspace
/// itself (an empty path, `.`) is refused too.
pub(crate) fn relative(raw: &str) -> Result<String, ApiError> {
    workspace_path(raw, Spelling::PercentEncoded).map_err(|_| forbidden())
}

/// A topic file path: `relative` checked, under `topics/`, ending in `.md`, and not the
/// `topics` directory itself (403 otherwise).
pub(crate) fn topic(raw_under_topics: &str) -> Result<String, ApiError> {
    // Checked alone first, so an absolute spelling (`%2Fetc%2Fpasswd`) is refused rather
    // than read as a name under `topics/`.
    let under = relative(raw_under_topics)?;
    let path = format!("topics/{under}");
    if !path.starts_with("topics/") || !path.ends_with(".md") {
        return Err(ApiError::forbidden(OUTSIDE, "only topics/**.md files can be read or edited here"));
    }
    Ok(path)
}

/// The file on disk for the checked `relative`: `Ok(None)` when it does not exist (or is
/// not a regular file); 403 when a component on the way is a symbolic link.
pub(crate) fn on_disk(root: &Path, relative: &str) -> Result<Option<PathBuf>, ApiError> {
    match backend_on_disk(root, relative).map_err(|_| forbidden())? {
        OnDisk::File(path) => Ok(Some(path)),
        OnDisk::Missing | OnDisk::NotAFile => Ok(None),
    }
}

/// Whether any component of `relative` below `root` is a symbolic link (even when the
/// file itself does not exist yet, as for a new topic).
pub(crate) fn crosses_link(root: &Path, relative: &str) -> bool {
    backend_on_disk(root, relative).is_err()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_an_escape_is_refused() {
        for raw in [
            "topics/../x.md",
            "topics/%2e%2e/x.md",
            "topics/%2E%2E%2Fx.md",
            "topics/%252e%252e/x.md",
            "topics/..%5Cx.md",
            "topics\\..\\x.md",
            "/etc/passwd",
            "%2Fetc%2Fpasswd",
            ".git/config",
            "topics/.git/x.md",
            ".scriptorium/http-token",
            "topics/%2Escriptorium/x.md",
            "topics/a%00.md",
        ] {
            assert!(relative(raw).is_err(), "{raw}");
        }
        assert_eq!(relative("topics/people/ada.md").ok().as_deref(), Some("topics/people/ada.md"));
        assert_eq!(relative("topics/a%20b.md").ok().as_deref(), Some("topics/a b.md"));
        assert!(topic("../sources/x.md").is_err());
        assert!(topic("x.txt").is_err());
        assert!(topic("").is_err());
        assert!(topic("%2Fetc%2Fpasswd.md").is_err());
        assert!(topic("/etc/passwd.md").is_err());
        assert_eq!(topic("people/ada.md").ok().as_deref(), Some("topics/people/ada.md"));
    }
}
