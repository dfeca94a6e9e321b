//! The layout steps of opening a workspace (spec 01 §1.3, §1.8): the superseded-layout
//! migration, `topics/` and `sources/`, the workspace id, and the once-per-process mode
//! migration. All run under the write lock.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::error::Error;
use crate::journal::io_error;
use crate::vfs::{DIR_MODE, FILE_MODE, FileKind, RealVfs, Vfs, create_dir_all, kind_of, write_atomic};

/// The sibling of the root that receives the superseded layout.
pub const SUPERSEDED_DIR: &str = "memory-superseded";

/// The root items of the superseded layout, moved out on initialization.
pub const SUPERSEDED_ITEMS: &[&str] = &["journal", "wiki", ".state", "index.sqlite"];

/// The workspace id file inside the runtime directory.
pub const WORKSPACE_ID_FILE: &str = "workspace-id";

/// The reference's marker that its initialization finished.
const READY_MARKER: &str = ".git/openprogram-memory-ready";

/// Whether `id` is a workspace id: `w-` and exactly 8 lowercase hex digits.
pub fn is_valid_workspace_id(id: &str) -> bool {
    id.strip_prefix("w-")
        .is_some_and(|hex| hex.len() == 8 && hex.bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f')))
}

/// Step 1–2 of spec 01 §1.8: unless the reference marked the workspace ready (and its
/// `topics/` and `sources/` exist), move the superseded items out, then make sure
/// `topics/` and `sources/` exist. Nothing creates `core.md`.
pub(super) fn ensure_layout(vfs: &RealVfs) -> Result<(), Error> {
    let is_dir = |path: &str| kind_of(vfs, Path::new(path)).map(|kind| kind == Some(FileKind::Dir));
    let ready =
        kind_of(vfs, Path::new(READY_MARKER))? == Some(FileKind::File) && is_dir("topics")? && is_dir("sources")?;
    if !ready {
        migrate_superseded(vfs.root())?;
    }
    for dir in ["topics", "sources"] {
        create_dir_all(vfs, Path::new(dir)).map_err(io_error(Path::new(dir)))?;
    }
    Ok(())
}

/// Move each superseded item to `<parent>/memory-superseded/<name>`, leaving it where it
/// is when the target already exists: never merged, never deleted.
fn migrate_superseded(root: &Path) -> Result<(), Error> {
    let parent = match root.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let target_dir = parent.join(SUPERSEDED_DIR);
    let mut moved = false;
    for name in SUPERSEDED_ITEMS {
        let item = root.join(name);
        let target = target_dir.join(name);
        if fs::symlink_metadata(&item).is_err() || fs::symlink_metadata(&target).is_ok() {
            continue;
        }
        create_real_dir(&target_dir)?;
        fs::rename(&item, &target).map_err(io_error(&item))?;
        moved = true;
    }
    if moved {
        for dir in [root, target_dir.as_path()] {
            fs::File::open(dir).and_then(|file| file.sync_all()).map_err(io_error(dir))?;
        }
    }
    Ok(())
}

fn create_real_dir(path: &Path) -> Result<(), Error> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new().recursive(true).mode(DIR_MODE).create(path).map_err(io_error(path))
}

/// Read the workspace id, regenerating it (atomically, mode 0600) when it is missing or
/// invalid. Surrounding whitespace is ignored, as the reference strips it.
pub(super) fn ensure_workspace_id(vfs: &RealVfs, runtime_dir: &str) -> Result<String, Error> {
    let path = Path::new(runtime_dir).join(WORKSPACE_ID_FILE);
    if let Ok(bytes) = vfs.read(&path)
        && let Ok(text) = std::str::from_utf8(&bytes)
        && is_valid_workspace_id(text.trim())
    {
        return Ok(text.trim().to_owned());
    }
    let id = format!("w-{:08x}", crate::random::u64() & 0xffff_ffff);
    write_atomic(vfs, &path, format!("{id}\n").as_bytes()).map_err(io_error(&path))?;
    Ok(id)
}

/// Once per process and root: force directories to 0700 and files to 0600, links
/// skipped (spec 01 §1.4). Best effort: a file we cannot chmod is left as it is.
pub(super) fn migrate_modes_once(vfs: &RealVfs) {
    static DONE: OnceLock<Mutex<BTreeSet<PathBuf>>> = OnceLock::new();
    let done = DONE.get_or_init(|| Mutex::new(BTreeSet::new()));
    let first = done.lock().unwrap_or_else(PoisonError::into_inner).insert(vfs.root().to_path_buf());
    if first {
        let _ = vfs.set_mode(Path::new(""), DIR_MODE);
        let _ = force_modes(vfs, Path::new(""));
    }
}

fn force_modes(vfs: &RealVfs, dir: &Path) -> io::Result<()> {
    for name in vfs.list_dir(dir)? {
        let path = dir.join(name);
        let Some(meta) = vfs.metadata(&path)? else { continue };
        match meta.kind {
            FileKind::Dir => {
                if meta.mode != DIR_MODE {
                    let _ = vfs.set_mode(&path, DIR_MODE);
                }
                let _ = force_modes(vfs, &path);
            }
            FileKind::File if meta.mode != FILE_MODE => {
                let _ = vfs.set_mode(&path, FILE_MODE);
            }
            _ => {}
        }
    }
    Ok(())
}
