//! The revision (spec 01 §1.5, 02 §4.10), the runtime-directory name rule and the
//! internal-path predicate (spec 01 §1.2).
//!
//! The revision is the optimistic-concurrency token: SHA-256 over every regular,
//! non-symlink file under the root in component-wise sorted path order, each fed as
//! `path ␀ bytes ␀`, skipping internal paths except `<runtime-dir>/runtime.json`; the
//! first 32 lowercase hex digits. It is never stored.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::listing::{Scope, list_vfs};
use crate::vfs::{FileKind, Vfs, kind_of};

mod cache;

pub(crate) use self::cache::RevisionCache;

/// The runtime directory of a new workspace.
pub const RUNTIME_DIR: &str = ".scriptorium";

/// The historical runtime-directory name, kept by workspaces that already have it.
pub const LEGACY_RUNTIME_DIR: &str = ".nativemem";

/// The runtime state file inside the runtime directory: the one internal file the
/// revision counts.
pub const RUNTIME_STATE_FILE: &str = "runtime.json";

/// The runtime directory in use: `.nativemem` if that directory exists (a link does not
/// count), otherwise `.scriptorium`.
pub fn runtime_dir_name<V: Vfs + ?Sized>(vfs: &V) -> io::Result<&'static str> {
    Ok(if kind_of(vfs, Path::new(LEGACY_RUNTIME_DIR))? == Some(FileKind::Dir) {
        LEGACY_RUNTIME_DIR
    } else {
        RUNTIME_DIR
    })
}

/// Whether a top-level name is internal: a runtime-directory name, a sibling formed
/// from one (`<name>-…`, such as the BM25 cache or the install backup), or `.git`.
///
/// Both runtime-directory names count, whichever is in use: a stray `.scriptorium*` in
/// a `.nativemem` workspace (or the reverse) is never memory and never exposed.
pub fn is_internal_name(name: &OsStr) -> bool {
    let name = name.as_bytes();
    name == b".git"
        || [RUNTIME_DIR, LEGACY_RUNTIME_DIR].iter().any(|runtime| {
            name.strip_prefix(runtime.as_bytes()).is_some_and(|rest| rest.is_empty() || rest.starts_with(b"-"))
        })
}

/// Whether a workspace-relative `/`-separated path is internal (holds no memory): its
/// first component is internal by [`is_internal_name`].
pub fn is_internal_path(relative: &str) -> bool {
    let first = relative.split('/').next().unwrap_or_default();
    is_internal_name(OsStr::new(first))
}

/// Whether `text` has the shape of a revision: 32 lowercase hex digits, as
/// [`revision`] returns. A base revision of another shape can never match.
pub fn is_revision(text: &str) -> bool {
    text.len() == 32 && text.bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'))
}

/// The revision of the tree `vfs` shows, with `runtime_dir` the runtime directory in use:
/// the files of the one [`Listing`](crate::listing::Listing), plus the runtime state file.
pub fn revision<V: Vfs + ?Sized>(vfs: &V, runtime_dir: &str) -> io::Result<String> {
    let mut files: Vec<Vec<u8>> =
        list_vfs(vfs, Scope::Root).complete()?.files.into_iter().map(|file| file.into_parts().0).collect();
    let runtime = Path::new(runtime_dir);
    let state = runtime.join(RUNTIME_STATE_FILE);
    if kind_of(vfs, runtime)? == Some(FileKind::Dir) && kind_of(vfs, &state)? == Some(FileKind::File) {
        let state = format!("{runtime_dir}/{RUNTIME_STATE_FILE}").into_bytes();
        let at = files.partition_point(|path| component_order(path, &state).is_lt());
        files.insert(at, state);
    }

    let mut hasher = Sha256::new();
    for relative in &files {
        let bytes = match vfs.read(Path::new(OsStr::from_bytes(relative))) {
            Ok(bytes) => bytes,
            // A file removed between listing and reading (an unlocked reader racing a
            // writer) is simply not part of this snapshot.
            Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
            Err(error) => return Err(error),
        };
        hasher.update(relative);
        hasher.update([0]);
        hasher.update(&bytes);
        hasher.update([0]);
    }
    Ok(hex_revision(hasher))
}

/// Component-wise order (Python sorts `Path` objects by their list of components, so
/// `a/b.md` sorts before `a-c.md`); for UTF-8 names, byte order is code-point order.
pub(crate) fn component_order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    a.split(|&byte| byte == b'/').cmp(b.split(|&byte| byte == b'/'))
}

/// The revision text of a finished hash: its first 32 lowercase hex digits.
fn hex_revision(hasher: Sha256) -> String {
    hasher.finalize().iter().take(16).map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests;
