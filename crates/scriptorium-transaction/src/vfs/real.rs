//! [`RealVfs`]: the [`Vfs`] operations on the real file system through `std::fs`, rooted at
//! the workspace directory.

use std::ffi::OsString;
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::{DIR_MODE, FILE_MODE, FileKind, Metadata, Vfs, is_plain_relative, not_plain};

/// The real file system below one root directory.
#[derive(Clone, Debug)]
pub struct RealVfs {
    root: PathBuf,
}

impl RealVfs {
    /// Operations relative to `root` (the workspace directory).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        RealVfs { root: root.into() }
    }

    /// The root every path is relative to.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The absolute form of a workspace-relative path; refuses anything but plain
    /// relative paths, so no caller can reach outside the root by `..` or `/`.
    fn full(&self, path: &Path) -> io::Result<PathBuf> {
        if !is_plain_relative(path) {
            return Err(not_plain(path));
        }
        Ok(if path.as_os_str().is_empty() { self.root.clone() } else { self.root.join(path) })
    }
}

/// A file created through [`RealVfs`], with the poison flag of the fsync rule.
#[derive(Debug)]
pub struct RealFile {
    file: File,
    pub(super) poisoned: bool,
}

impl Vfs for RealVfs {
    type File = RealFile;

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        fs::read(self.full(path)?)
    }

    fn create_file(&self, path: &Path, bytes: &[u8]) -> io::Result<RealFile> {
        let mut file = OpenOptions::new().write(true).create_new(true).mode(FILE_MODE).open(self.full(path)?)?;
        file.write_all(bytes)?;
        Ok(RealFile { file, poisoned: false })
    }

    fn sync_file(&self, file: &mut RealFile) -> io::Result<()> {
        if file.poisoned {
            return Err(io::Error::other("fsync failed earlier on this handle; it is not retried"));
        }
        let result = file.file.sync_all();
        file.poisoned = result.is_err();
        result
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(self.full(from)?, self.full(to)?)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(self.full(path)?)
    }

    fn create_dir(&self, path: &Path) -> io::Result<()> {
        DirBuilder::new().mode(DIR_MODE).create(self.full(path)?)
    }

    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        fs::remove_dir(self.full(path)?)
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        File::open(self.full(path)?)?.sync_all()
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<OsString>> {
        fs::read_dir(self.full(path)?)?.map(|entry| entry.map(|entry| entry.file_name())).collect()
    }

    fn metadata(&self, path: &Path) -> io::Result<Option<Metadata>> {
        match fs::symlink_metadata(self.full(path)?) {
            Ok(meta) => {
                let file_type = meta.file_type();
                let kind = if file_type.is_symlink() {
                    FileKind::Symlink
                } else if file_type.is_dir() {
                    FileKind::Dir
                } else if file_type.is_file() {
                    FileKind::File
                } else {
                    FileKind::Other
                };
                Ok(Some(Metadata::new(kind, meta.len(), meta.mode() & 0o7777, meta.ino())))
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }

    fn set_mode(&self, path: &Path, mode: u32) -> io::Result<()> {
        let full = self.full(path)?;
        // `set_permissions` follows links; refuse them so a planted link cannot redirect
        // the chmod to a file outside the workspace.
        if fs::symlink_metadata(&full)?.file_type().is_symlink() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "refusing to chmod through a symbolic link"));
        }
        fs::set_permissions(full, fs::Permissions::from_mode(mode))
    }
}
