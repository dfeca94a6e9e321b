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
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

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

/// The revision of the tree `vfs` shows, with `runtime_dir` the runtime directory in use.
pub fn revision<V: Vfs + ?Sized>(vfs: &V, runtime_dir: &str) -> io::Result<String> {
    let mut files: Vec<Vec<Vec<u8>>> = Vec::new();
    collect(vfs, Path::new(""), &mut Vec::new(), &mut files)?;
    let runtime = Path::new(runtime_dir);
    let state = runtime.join(RUNTIME_STATE_FILE);
    if kind_of(vfs, runtime)? == Some(FileKind::Dir) && kind_of(vfs, &state)? == Some(FileKind::File) {
        files.push(vec![runtime_dir.as_bytes().to_vec(), RUNTIME_STATE_FILE.as_bytes().to_vec()]);
    }
    // Python sorts `Path` objects by their list of components (so `a/b.md` sorts before
    // `a-c.md`); for UTF-8 names, byte order is code-point order.
    files.sort();

    let mut hasher = Sha256::new();
    for components in &files {
        let relative = components.join(&b'/');
        let path: PathBuf = components.iter().map(|component| OsStr::from_bytes(component)).collect();
        let bytes = match vfs.read(&path) {
            Ok(bytes) => bytes,
            // A file removed between listing and reading (an unlocked reader racing a
            // writer) is simply not part of this snapshot.
            Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
            Err(error) => return Err(error),
        };
        hasher.update(&relative);
        hasher.update([0]);
        hasher.update(&bytes);
        hasher.update([0]);
    }
    Ok(hex_revision(hasher))
}

/// The revision text of a finished hash: its first 32 lowercase hex digits.
fn hex_revision(hasher: Sha256) -> String {
    hasher.finalize().iter().take(16).map(|byte| format!("{byte:02x}")).collect()
}

/// Walk `dir`, collecting the component lists of regular files; internal top-level
/// names are skipped, links and special files never followed nor counted.
fn collect<V: Vfs + ?Sized>(
    vfs: &V,
    dir: &Path,
    prefix: &mut Vec<Vec<u8>>,
    files: &mut Vec<Vec<Vec<u8>>>,
) -> io::Result<()> {
    let names = match vfs.list_dir(dir) {
        Ok(names) => names,
        Err(error) if error.kind() == io::ErrorKind::NotFound && !prefix.is_empty() => return Ok(()),
        Err(error) => return Err(error),
    };
    for name in names {
        if prefix.is_empty() && is_internal_name(&name) {
            continue;
        }
        let child = dir.join(&name);
        prefix.push(name.as_bytes().to_vec());
        match vfs.metadata(&child)?.map(|meta| meta.kind) {
            Some(FileKind::File) => files.push(prefix.clone()),
            Some(FileKind::Dir) => collect(vfs, &child, prefix, files)?,
            _ => {}
        }
        prefix.pop();
    }
    Ok(())
}

#[cfg(test)]
mod tests;
