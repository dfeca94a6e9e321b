//! The file-system operations that install and recovery need, behind one small trait, so
//! that the same protocol code runs on the real file system ([`RealVfs`]) and on a
//! simulated one that models power loss and injects I/O errors ([`SimVfs`]).
//!
//! Paths given to a [`Vfs`] are relative to the workspace root and made of normal
//! components only; the empty path names the root itself. No operation follows a
//! symbolic link on purpose: [`Vfs::metadata`] reports links as links, and callers check
//! every component before they write (STYLE §3.4: redb's `StorageBackend`).

mod real;
mod sim;

use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

pub use self::real::{RealFile, RealVfs};
pub use self::sim::{CrashImage, Fault, FaultKind, SimFile, SimVfs};

/// Mode of every directory the workspace creates (decision "file modes").
pub const DIR_MODE: u32 = 0o700;

/// Mode of every file the workspace creates (decision "file modes").
pub const FILE_MODE: u32 = 0o600;

/// What kind of object a directory entry names, without following links.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (never followed).
    Symlink,
    /// A socket, device or pipe: never memory.
    Other,
}

/// The `lstat` facts the protocol uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Metadata {
    /// The kind of the entry itself (a link is reported as a link).
    pub kind: FileKind,
    /// The length in bytes (of the link itself for a link).
    pub len: u64,
    /// The permission bits (`mode & 0o7777`).
    pub mode: u32,
    /// The inode number, which identifies the object while it exists.
    pub ino: u64,
}

impl Metadata {
    /// A new record; used by the [`Vfs`] implementations.
    pub fn new(kind: FileKind, len: u64, mode: u32, ino: u64) -> Self {
        Metadata { kind, len, mode, ino }
    }
}

/// The operations install and recovery need, and nothing else.
///
/// Every call is one "operation" for fault injection (the countdown of [`SimVfs`]).
/// Invariant: an implementation never follows a symbolic link in the last component;
/// [`RealVfs`] follows links in parent components (the kernel does), which is why the
/// protocol checks every component with [`Vfs::metadata`] first.
pub trait Vfs {
    /// A file created by [`Vfs::create_file`]; dropping it closes it.
    type File;

    /// The whole content of the file at `path`.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;

    /// Create a new file (failing if anything exists at `path`) with mode 0600 and write
    /// `bytes` to it. The bytes are not durable until [`Vfs::sync_file`] succeeds.
    fn create_file(&self, path: &Path, bytes: &[u8]) -> io::Result<Self::File>;

    /// Make the content of `file` durable (`fsync`). After a failure the handle is
    /// poisoned: every later call on it fails, because the kernel may already have
    /// dropped the dirty pages and a retry would report a false success.
    fn sync_file(&self, file: &mut Self::File) -> io::Result<()>;

    /// Atomically rename `from` to `to`, replacing a file at `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;

    /// Remove the file (or symbolic link) at `path`.
    fn remove_file(&self, path: &Path) -> io::Result<()>;

    /// Create the directory `path` with mode 0700; its parent must exist.
    fn create_dir(&self, path: &Path) -> io::Result<()>;

    /// Remove the empty directory `path`.
    fn remove_dir(&self, path: &Path) -> io::Result<()>;

    /// Make the entries of directory `path` durable (`fsync` on the directory).
    fn sync_dir(&self, path: &Path) -> io::Result<()>;

    /// The names in directory `path`, in no particular order.
    fn list_dir(&self, path: &Path) -> io::Result<Vec<OsString>>;

    /// `lstat(path)`, or `None` when nothing exists there.
    fn metadata(&self, path: &Path) -> io::Result<Option<Metadata>>;

    /// Set the permission bits of `path` (never through a link).
    fn set_mode(&self, path: &Path, mode: u32) -> io::Result<()>;
}

/// Whether `path` is usable as a [`Vfs`] path: relative, normal components only.
pub(crate) fn is_plain_relative(path: &Path) -> bool {
    path.components().all(|component| matches!(component, Component::Normal(_)))
}

/// The error for a path that is not relative and plain.
pub(crate) fn not_plain(path: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("not a plain relative path: {}", path.display()))
}

/// The kind of the entry at `path`, or `None` when there is none.
pub fn kind_of<V: Vfs + ?Sized>(vfs: &V, path: &Path) -> io::Result<Option<FileKind>> {
    Ok(vfs.metadata(path)?.map(|meta| meta.kind))
}

/// Create `dir` and any missing ancestors (mode 0700), making each new entry durable by
/// syncing its parent before the next level is created. Existing directories are kept;
/// a link or file in the way is an error, because writing through it could leave the
/// workspace.
pub fn create_dir_all<V: Vfs + ?Sized>(vfs: &V, dir: &Path) -> io::Result<()> {
    let mut current = PathBuf::new();
    for component in dir.components() {
        let parent = current.clone();
        current.push(component);
        match kind_of(vfs, &current)? {
            Some(FileKind::Dir) => {}
            Some(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("not a directory: {}", current.display()),
                ));
            }
            None => {
                vfs.create_dir(&current)?;
                vfs.sync_dir(&parent)?;
            }
        }
    }
    Ok(())
}

/// Remove `path` and everything below it, without following links. Used only on
/// directories the workspace owns (journals), never on memory.
pub fn remove_tree<V: Vfs + ?Sized>(vfs: &V, path: &Path) -> io::Result<()> {
    match kind_of(vfs, path)? {
        None => Ok(()),
        Some(FileKind::Dir) => {
            for name in vfs.list_dir(path)? {
                remove_tree(vfs, &path.join(name))?;
            }
            vfs.remove_dir(path)
        }
        Some(_) => vfs.remove_file(path),
    }
}

/// The generic atomic write of spec 01 §1.4: a temporary `<name>.<32 hex>.tmp` in the same
/// directory, written and synced, renamed over `path`, then the directory synced. On an
/// error before the rename the temporary is removed (best effort).
pub fn write_atomic<V: Vfs + ?Sized>(vfs: &V, path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path.file_name().ok_or_else(|| not_plain(path))?;
    let parent = path.parent().unwrap_or_else(|| Path::new(""));
    let mut temp_name = name.to_os_string();
    temp_name.push(format!(".{:016x}{:016x}.tmp", crate::random::u64(), crate::random::u64()));
    let temp = parent.join(temp_name);
    let staged = vfs.create_file(&temp, bytes).and_then(|mut file| vfs.sync_file(&mut file));
    if let Err(error) = staged.and_then(|()| vfs.rename(&temp, path)) {
        let _ = vfs.remove_file(&temp);
        return Err(error);
    }
    vfs.sync_dir(parent)
}

#[cfg(test)]
mod tests;
