//! [`Stage`]: the writer agent's restricted stage (spec 02 §10.1, §10.4; decision "writer
//! stage tools"), the seven tools that work on it, and the diff that leaves it as one
//! transaction [`Edit`].
//!
//! The stage shows the workspace's topics and derived views ([`WRITER_STAGE_ITEMS`]),
//! never `sources/` nor the runtime directory, as one [`Listing`] of the committed tree
//! gives them. It is copy-on-write: a private directory under the runtime directory
//! (decision 9: the workspace's own file system) holds what the writer wrote, a set of
//! whiteouts what it deleted, and an unchanged file is read from the committed tree,
//! never through a link, and checked on every later read to be the very file the first
//! read found (device, inode, size, modification time). So the writer sees a snapshot
//! copy, and making one costs a listing of names, not a copy of every file (issue 15's
//! goal: ≤ 50 ms on ws-10k). The write lock the pass holds keeps the committed tree
//! still meanwhile; a file that changed anyway reads as `WRITER_STAGE_STALE`, never as
//! other bytes, and the commit of the diff is based on [`Stage::revision`], so an
//! install that landed since the stage was listed is `CONCURRENT_UPDATE`.
//!
//! Only our tools touch the stage, and every path they take goes through
//! [`confine`](self::confine): relative to the stage root, no `..`, no hidden or internal
//! component, nothing under `sources/` in any case, no control character, never through
//! a symbolic link, and no new spelling that a case-insensitive file system would fold
//! onto an existing one. Writes are further limited to `topics/**.md` ([`TopicPath`]):
//! the derived views are rebuilt by the transaction, so an edit of one could only be lost.
//! Every refusal comes back to the model as a [`ToolOutcome`] with a code and a hint.
//!
//! The directory is removed when the stage is dropped, whatever the run's outcome.

mod confine;
mod listing;
mod schema;
mod tools;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Write as _};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use scriptorium_archive_format::collision_key;
use scriptorium_transaction::{
    DIR_MODE, Edit, Error as TxError, ErrorCode as TxCode, FILE_MODE, FileChange, FileClass, Listing, Scope, TopicPath,
    WRITER_STAGE_ITEMS, Workspace,
};

use self::tools::ToolError;

pub use self::listing::{LISTING_BUDGET_BYTES, LISTING_PROSE_CHARS};
pub use self::schema::{ToolDefinition, tool_definitions};
pub use self::tools::{
    GLOB_LIMIT, GREP_LIMIT, GREP_LINE_CHARS, MAX_ARGUMENT_BYTES, MAX_FILE_BYTES, READ_LIMIT_CHARS, TOOL_NAMES,
    ToolErrorCode, ToolOutcome,
};

/// The directory under the runtime directory that holds the writer stages.
pub const STAGE_PARENT: &str = "writer-stage";

/// The identity of a committed file as the stage first read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct BaseFile {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: i64,
    mtime_nsec: i64,
}

impl BaseFile {
    fn of(meta: &fs::Metadata) -> Self {
        BaseFile {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime: meta.mtime(),
            mtime_nsec: meta.mtime_nsec(),
        }
    }
}

/// What the stage's own layer says about a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layer {
    /// The writer wrote the file; its bytes are in the stage directory.
    Written,
    /// The writer deleted the committed file.
    Deleted,
}

/// The writer's private, confined copy of the workspace (see the module docs).
pub struct Stage {
    dir: PathBuf,
    workspace_root: PathBuf,
    revision: String,
    /// Every committed file the stage shows, with its identity once first read: the
    /// listing names files without `lstat`ing each (a fifth of the cost on ws-10k), and
    /// every later read must find the very file the first one read.
    base: BTreeMap<String, OnceLock<BaseFile>>,
    /// Entries the listing skipped (links, special files): no tool path goes through one.
    blocked: BTreeSet<String>,
    upper: BTreeMap<String, Layer>,
    /// Collision key → spelling of every live path and directory, built at the first
    /// write of a new path (see [`Stage::check_alias`]).
    aliases: Option<HashMap<String, String>>,
}

/// Stage directories made by this process, so two stages never share a name.
static STAGE_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Stage {
    /// Make a stage of `workspace` as it is committed now. The caller holds the write lock
    /// for as long as the stage lives (the write pass does), so the tree stays the one
    /// listed; [`Stage::revision`] is the revision the stage starts from, computed here.
    pub fn new(workspace: &Workspace) -> Result<Stage, TxError> {
        let revision = workspace.revision()?;
        Self::at_revision(workspace, revision)
    }

    /// [`Stage::new`] for a caller that knows the revision of the tree as it is now,
    /// under the write lock it holds (the result of its last commit), which saves the
    /// revision's walk of the whole workspace. A wrong revision can only make the
    /// stage's commit `CONCURRENT_UPDATE`, never install over a change.
    pub fn at_revision(workspace: &Workspace, revision: String) -> Result<Stage, TxError> {
        let dir = make_stage_dir(&workspace.runtime_dir())?;
        let mut stage = Stage {
            dir,
            workspace_root: workspace.root().to_path_buf(),
            revision: String::new(),
            base: BTreeMap::new(),
            blocked: BTreeSet::new(),
            upper: BTreeMap::new(),
            aliases: None,
        };
        stage.load(workspace, revision)?;
        Ok(stage)
    }

    /// Start over from the committed tree: forget every write and delete (the stage
    /// directory is emptied) and list the workspace again. Called after a commit, accepted
    /// (the installed bytes are the new baseline) or rejected (the repair round starts
    /// from the rolled-back tree, spec 02 §10.3).
    pub fn refresh(&mut self, workspace: &Workspace) -> Result<(), TxError> {
        let revision = workspace.revision()?;
        self.refresh_at(workspace, revision)
    }

    /// [`Stage::refresh`] with the revision of the tree as it is now (see
    /// [`Stage::at_revision`]): after an accepted commit its result's revision, after a
    /// rejected one (nothing changed) [`Stage::revision`] again.
    pub fn refresh_at(&mut self, workspace: &Workspace, revision: String) -> Result<(), TxError> {
        if self.workspace_root != workspace.root() {
            return Err(TxError::new(TxCode::InvalidArgument, "the stage belongs to another workspace"));
        }
        for entry in fs::read_dir(&self.dir).map_err(|error| io_error(&self.dir, error))? {
            let path = entry.map_err(|error| io_error(&self.dir, error))?.path();
            let removed = match fs::symlink_metadata(&path) {
                Ok(meta) if meta.is_dir() => fs::remove_dir_all(&path),
                Ok(_) => fs::remove_file(&path),
                Err(error) => Err(error),
            };
            removed.map_err(|error| io_error(&path, error))?;
        }
        self.upper.clear();
        self.aliases = None;
        self.load(workspace, revision)
    }

    fn load(&mut self, workspace: &Workspace, revision: String) -> Result<(), TxError> {
        let listing = Listing::read_names(workspace.root(), Scope::Under(&WRITER_STAGE_ITEMS))
            .complete()
            .map_err(|error| TxError::from(error).with_path("topics"))?;
        self.base.clear();
        self.blocked.clear();
        for file in &listing.files {
            if !file.class().is_visible() || file.class() == FileClass::Source {
                continue;
            }
            if let Some(path) = file.path() {
                self.base.insert(path.to_owned(), OnceLock::new());
            }
        }
        self.blocked.extend(listing.skipped.into_iter().map(|skipped| skipped.path));
        self.revision = revision;
        Ok(())
    }

    /// The private directory that holds the writer's files (removed on drop).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The revision of the committed tree the stage started from.
    pub fn revision(&self) -> &str {
        &self.revision
    }

    /// Every file the writer sees, in component-wise path order (the listing's order).
    pub fn files(&self) -> Vec<String> {
        let mut files: Vec<String> = self.live_files().map(str::to_owned).collect();
        files.sort_by(|a, b| component_order(a, b));
        files
    }

    /// The stage's difference from the tree it started from, as one transaction edit:
    /// a whole-file write for every topic file whose bytes differ, a delete for every one
    /// that is gone. `None` when nothing differs. Reads fail as `IO` (or
    /// `CONCURRENT_UPDATE` when a committed file changed under the stage).
    pub fn edit(&self) -> Result<Option<Edit>, TxError> {
        let changes = self.changes()?;
        Ok((!changes.is_empty()).then_some(Edit::Changes(changes)))
    }

    /// The topic files [`Stage::edit`] would change, in path order.
    pub fn changed_paths(&self) -> Result<Vec<String>, TxError> {
        Ok(self.changes()?.into_iter().map(|change| change.path.into_string()).collect())
    }

    fn changes(&self) -> Result<Vec<FileChange>, TxError> {
        let mut changes = Vec::new();
        for (path, layer) in &self.upper {
            let content = match layer {
                Layer::Deleted if self.base.contains_key(path) => None,
                Layer::Deleted => continue,
                Layer::Written => {
                    let bytes = self.read_upper(path).map_err(ToolError::into_tx)?;
                    if let Some(base) = self.base.get(path)
                        && self.read_base(path, base).map_err(ToolError::into_tx)? == bytes
                    {
                        continue;
                    }
                    let text = String::from_utf8(bytes).map_err(|_| {
                        TxError::new(TxCode::InvalidArgument, "a staged topic file is not UTF-8")
                            .with_path(path.clone())
                    })?;
                    Some(text)
                }
            };
            changes.push(FileChange { path: TopicPath::new(path)?, content });
        }
        Ok(changes)
    }

    // ---- the merged view ----

    /// Every live file, base files first (not in order).
    fn live_files(&self) -> impl Iterator<Item = &str> {
        let base = self.base.keys().filter(|path| self.upper.get(*path) != Some(&Layer::Deleted));
        let upper = self
            .upper
            .iter()
            .filter(|(path, layer)| **layer == Layer::Written && !self.base.contains_key(*path))
            .map(|(path, _)| path);
        base.chain(upper).map(String::as_str)
    }

    /// Whether a file exists at `path`.
    fn is_file(&self, path: &str) -> bool {
        match self.upper.get(path) {
            Some(Layer::Written) => true,
            Some(Layer::Deleted) => false,
            None => self.base.contains_key(path),
        }
    }

    /// Whether `path` is a directory: some live file lies below it (the root always is).
    fn is_dir(&self, path: &str) -> bool {
        path.is_empty() || self.files_under(path).next().is_some()
    }

    /// The live files strictly below the directory `dir` (`""`: every file), unordered.
    fn files_under<'s>(&'s self, dir: &str) -> impl Iterator<Item = &'s str> + 's {
        let base = range_keys(&self.base, dir).filter(|path| self.upper.get(*path) != Some(&Layer::Deleted));
        let upper = range_keys(&self.upper, dir)
            .filter(|path| self.upper.get(*path) == Some(&Layer::Written) && !self.base.contains_key(*path));
        base.chain(upper).map(String::as_str)
    }

    /// The live files at or below `path`: the file itself, or every file of the directory.
    fn files_at(&self, path: &str) -> Vec<String> {
        if self.is_file(path) {
            return vec![path.to_owned()];
        }
        let mut files: Vec<String> = self.files_under(path).map(str::to_owned).collect();
        files.sort();
        files
    }

    // ---- reads and writes ----

    /// The bytes of the live file `path` (a confined, normalized path).
    fn read(&self, path: &str) -> Result<Vec<u8>, ToolError> {
        match (self.upper.get(path), self.base.get(path)) {
            (Some(Layer::Written), _) => self.read_upper(path),
            (None, Some(base)) => self.read_base(path, base),
            _ if self.is_dir(path) => Err(ToolError::not_a_file(path)),
            _ => Err(ToolError::not_found(path)),
        }
    }

    /// A committed file: a regular file (never through a link, never a FIFO that replaced
    /// one), and the very file the first read of it found.
    fn read_base(&self, path: &str, identity: &OnceLock<BaseFile>) -> Result<Vec<u8>, ToolError> {
        let full = self.workspace_root.join(path);
        let stale = || ToolError::stale(path);
        let listed = match fs::symlink_metadata(&full) {
            Ok(meta) if meta.is_file() => BaseFile::of(&meta),
            Ok(_) => return Err(stale()),
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Err(stale()),
            Err(error) => return Err(ToolError::io(path, &error)),
        };
        let mut file = fs::File::open(&full).map_err(|error| ToolError::io(path, &error))?;
        let meta = file.metadata().map_err(|error| ToolError::io(path, &error))?;
        let opened = BaseFile::of(&meta);
        if opened != listed || *identity.get_or_init(|| opened) != opened {
            return Err(stale());
        }
        let mut bytes = Vec::with_capacity(usize::try_from(opened.len).unwrap_or(0));
        io::Read::read_to_end(&mut file, &mut bytes).map_err(|error| ToolError::io(path, &error))?;
        Ok(bytes)
    }

    /// A file the writer wrote, read from the stage directory without following a link.
    fn read_upper(&self, path: &str) -> Result<Vec<u8>, ToolError> {
        let full = self.checked_upper(path, false)?;
        match fs::symlink_metadata(&full) {
            Ok(meta) if meta.file_type().is_symlink() => return Err(ToolError::symlink(path)),
            Ok(meta) if meta.is_file() => {}
            Ok(_) => return Err(ToolError::not_a_file(path)),
            Err(error) => return Err(ToolError::io(path, &error)),
        }
        fs::read(&full).map_err(|error| ToolError::io(path, &error))
    }

    /// The stage-directory path of `path`, every parent checked to be a real directory
    /// (created when `create`), none of them a link.
    fn checked_upper(&self, path: &str, create: bool) -> Result<PathBuf, ToolError> {
        let mut full = self.dir.clone();
        let mut parts = path.split('/').peekable();
        while let Some(part) = parts.next() {
            full.push(part);
            if parts.peek().is_none() {
                break;
            }
            match fs::symlink_metadata(&full) {
                Ok(meta) if meta.file_type().is_symlink() => return Err(ToolError::symlink(path)),
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => return Err(ToolError::not_a_file(path)),
                Err(error) if error.kind() == io::ErrorKind::NotFound && create => {
                    fs::DirBuilder::new().mode(DIR_MODE).create(&full).map_err(|error| ToolError::io(path, &error))?;
                }
                Err(error) => return Err(ToolError::io(path, &error)),
            }
        }
        Ok(full)
    }

    /// Write `bytes` as the file `path` (a writable, confined path whose parents are no
    /// files). Returns whether the file is new.
    fn write(&mut self, path: &str, bytes: &[u8]) -> Result<bool, ToolError> {
        let created = !self.is_file(path);
        let full = self.checked_upper(path, true)?;
        match fs::symlink_metadata(&full) {
            Ok(meta) if meta.file_type().is_symlink() => return Err(ToolError::symlink(path)),
            Ok(meta) if meta.is_dir() => return Err(ToolError::not_a_file(path)),
            _ => {}
        }
        // A new file renamed over the old entry: never writes through whatever is there.
        let mut temp = full.clone().into_os_string();
        temp.push(".stage-tmp");
        let temp = PathBuf::from(temp);
        let written = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(FILE_MODE)
            .open(&temp)
            .and_then(|mut file| file.write_all(bytes))
            .and_then(|()| fs::rename(&temp, &full));
        if let Err(error) = written {
            let _ = fs::remove_file(&temp);
            return Err(ToolError::io(path, &error));
        }
        self.upper.insert(path.to_owned(), Layer::Written);
        if let Some(aliases) = &mut self.aliases {
            for prefix in prefixes(path) {
                aliases.entry(collision_key(prefix)).or_insert_with(|| prefix.to_owned());
            }
        }
        Ok(created)
    }

    /// Delete the live file `path`.
    fn delete(&mut self, path: &str) -> Result<(), ToolError> {
        if self.upper.get(path) == Some(&Layer::Written) {
            let full = self.checked_upper(path, false)?;
            // Removing a link removes the link, never its target.
            fs::remove_file(&full).map_err(|error| ToolError::io(path, &error))?;
        }
        if self.base.contains_key(path) {
            self.upper.insert(path.to_owned(), Layer::Deleted);
        } else {
            self.upper.remove(path);
        }
        Ok(())
    }

    // ---- confinement that needs the stage's state ----

    /// Refuse a path that goes through an entry the listing skipped (a link, a special
    /// file): the committed tree holds something there that is not memory.
    fn check_blocked(&self, path: &str) -> Result<(), ToolError> {
        match prefixes(path).find(|prefix| self.blocked.contains(*prefix)) {
            Some(_) => Err(ToolError::symlink(path)),
            None => Ok(()),
        }
    }

    /// Refuse a new spelling that differs from a live file or directory only by case or
    /// Unicode normalization: on a case-insensitive file system both are one file.
    fn check_alias(&mut self, path: &str) -> Result<(), ToolError> {
        if self.aliases.is_none() {
            let mut aliases = HashMap::new();
            let mut seen = BTreeSet::new();
            for file in self.live_files() {
                for prefix in prefixes(file) {
                    if seen.insert(prefix) {
                        aliases.entry(collision_key(prefix)).or_insert_with(|| prefix.to_owned());
                    }
                }
            }
            self.aliases = Some(aliases);
        }
        for prefix in prefixes(path) {
            if self.is_file(prefix) || self.is_dir(prefix) {
                continue;
            }
            let key = collision_key(prefix);
            let other = self.aliases.as_ref().and_then(|aliases| aliases.get(&key)).cloned();
            match other {
                Some(other) if other != prefix && (self.is_file(&other) || self.is_dir(&other)) => {
                    return Err(ToolError::case_alias(path, &other));
                }
                Some(_) => {
                    // A spelling that is gone no longer claims the key.
                    if let Some(aliases) = &mut self.aliases {
                        aliases.remove(&key);
                    }
                }
                None => {}
            }
            // Below a new directory nothing exists to collide with.
            break;
        }
        Ok(())
    }
}

impl std::fmt::Debug for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A summary: the base is the whole listing.
        f.debug_struct("Stage")
            .field("dir", &self.dir)
            .field("revision", &self.revision)
            .field("base_files", &self.base.len())
            .field("upper", &self.upper)
            .finish_non_exhaustive()
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        // `remove_dir_all` removes links, never what they point to.
        let _ = fs::remove_dir_all(&self.dir);
        if let Some(parent) = self.dir.parent() {
            // Only when no other stage is left in it.
            let _ = fs::remove_dir(parent);
        }
    }
}

/// The keys of `map` strictly below the directory `dir` (`""`: all).
fn range_keys<'m, V>(map: &'m BTreeMap<String, V>, dir: &str) -> impl Iterator<Item = &'m String> + 'm {
    use std::ops::Bound;
    let (low, high) = if dir.is_empty() {
        (Bound::Unbounded, Bound::Unbounded)
    } else {
        (Bound::Included(format!("{dir}/")), Bound::Excluded(format!("{dir}0")))
    };
    map.range::<String, _>((low, high)).map(|(path, _)| path)
}

/// `topics`, `topics/a`, `topics/a/b.md` for `topics/a/b.md`.
fn prefixes(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').filter_map(|(at, _)| path.get(..at)).chain([path])
}

/// Component-wise order, as the listing sorts (`a/b.md` before `a-c.md`).
fn component_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.split('/').cmp(b.split('/'))
}

/// A new private directory `<runtime>/writer-stage/<pid>-<n>-<random>`, mode 0700.
fn make_stage_dir(runtime_dir: &Path) -> Result<PathBuf, TxError> {
    let parent = runtime_dir.join(STAGE_PARENT);
    match fs::symlink_metadata(&parent) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(TxError::new(TxCode::Io, "the writer stage directory is not a directory")
                .with_path(parent.display().to_string()));
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            match fs::DirBuilder::new().mode(DIR_MODE).create(&parent) {
                Ok(()) => {}
                // Another stage made it meanwhile.
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
                Err(error) => return Err(io_error(&parent, error)),
            }
        }
        Err(error) => return Err(io_error(&parent, error)),
    }
    sweep_orphans(&parent);
    let mut last = None;
    for _ in 0..16 {
        let n = STAGE_COUNTER.fetch_add(1, Ordering::Relaxed);
        let random = std::collections::hash_map::RandomState::new().build_hasher().finish();
        let dir = parent.join(format!("{}-{n}-{random:016x}", std::process::id()));
        match fs::DirBuilder::new().mode(DIR_MODE).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => last = Some(error),
            Err(error) => return Err(io_error(&dir, error)),
        }
    }
    Err(io_error(&parent, last.unwrap_or_else(|| io::Error::other("no free stage name"))))
}

/// Remove the stages a killed process left behind (a drop never ran): those of another
/// process id, when `/proc` shows that process is gone. Without `/proc` nothing is
/// swept; a leftover stage is private and never read, only disk space.
fn sweep_orphans(parent: &Path) {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return;
    }
    let Ok(entries) = fs::read_dir(parent) else { return };
    let own = std::process::id().to_string();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|name| name.split('-').next()) else { continue };
        if pid == own || pid.is_empty() || !pid.bytes().all(|byte| byte.is_ascii_digit()) || proc.join(pid).exists() {
            continue;
        }
        // `remove_dir_all` removes links, never what they point to.
        let _ = fs::remove_dir_all(entry.path());
    }
}

fn io_error(path: &Path, error: io::Error) -> TxError {
    TxError::from(error).with_path(path.display().to_string())
}

#[cfg(test)]
mod tests;
