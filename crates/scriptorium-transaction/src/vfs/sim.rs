//! [`SimVfs`]: an in-memory [`Vfs`] with a durability model and fault injection, for the
//! power-loss (T3) and I/O-error (T4) suites of spec 04 §C4 (redb's `CrashBackend` and
//! `FuzzerBackend`, STYLE §3.4).
//!
//! The simulation keeps the *live* state that processes see, the *durable base* it started
//! from, and the trace of every operation since. [`SimVfs::crash`] builds a state the
//! disk could hold after power loss at any point of the trace: synced operations survive,
//! unsynced ones survive or not, and unsynced file data is kept, dropped or torn at 4 KiB.
//! [`SimVfs::set_fault`] makes the N-th operation fail with EIO, ENOSPC, EDQUOT or EACCES,
//! once or from then on; a failed fsync poisons its handle.

mod crash;
mod image;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use self::image::{Image, NewKind, Node, NodeId, Op, not_found};
use super::{FileKind, Metadata, Vfs};

/// Which error an injected fault raises (Linux errno values, so `raw_os_error` and the
/// messages match what a real failure would show).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// `EIO`: the device failed.
    Eio,
    /// `ENOSPC`: the file system is full.
    Enospc,
    /// `EDQUOT`: the user's quota is exhausted.
    Edquot,
    /// `EACCES`: permission denied.
    Eacces,
}

impl FaultKind {
    /// Every kind, for suites that try each.
    pub const ALL: [FaultKind; 4] = [FaultKind::Eio, FaultKind::Enospc, FaultKind::Edquot, FaultKind::Eacces];

    /// The error this kind raises.
    pub fn error(self) -> io::Error {
        io::Error::from_raw_os_error(match self {
            FaultKind::Eio => 5,
            FaultKind::Enospc => 28,
            FaultKind::Edquot => 122,
            FaultKind::Eacces => 13,
        })
    }
}

/// An injected failure: operation number `at` (1-based, counting every [`Vfs`] call since
/// the fault was set) fails with `kind`; if `persistent`, every later one fails too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The 1-based number of the first failing operation.
    pub at: u64,
    /// The error raised.
    pub kind: FaultKind,
    /// Whether every operation after `at` fails as well (a dead disk), or only `at`.
    pub persistent: bool,
}

/// A file created through [`SimVfs`].
#[derive(Debug)]
pub struct SimFile {
    handle: u64,
    node: NodeId,
}

/// One generated power-loss state and how it was made.
#[derive(Debug)]
#[non_exhaustive]
pub struct CrashImage {
    /// The file system as found after the crash; everything in it counts as durable.
    pub vfs: SimVfs,
    /// How many operations of the trace had been issued when power was lost.
    pub prefix: usize,
    /// How many of those were not covered by a later sync.
    pub unsynced: usize,
    /// How many unsynced directory operations or writes were lost.
    pub dropped: usize,
    /// How many unsynced writes were torn at a 4 KiB boundary.
    pub torn: usize,
}

#[derive(Debug, Default)]
struct State {
    live: Image,
    base: Image,
    trace: Vec<Op>,
    fault: Option<Fault>,
    count: u64,
    poisoned: BTreeSet<u64>,
    next_handle: u64,
}

impl State {
    /// Count one operation and raise the injected fault if it is due.
    fn tick(&mut self) -> io::Result<()> {
        self.count = self.count.saturating_add(1);
        match self.fault {
            Some(fault) if self.count == fault.at || (fault.persistent && self.count > fault.at) => {
                Err(fault.kind.error())
            }
            _ => Ok(()),
        }
    }

    /// Apply `op` to the live state and record it.
    fn record(&mut self, op: Op) {
        self.live.apply(&op);
        self.trace.push(op);
    }

    fn new_node(&mut self) -> NodeId {
        let node = self.live.next;
        self.live.next = node.saturating_add(1);
        node
    }

    fn existing(&self, path: &Path) -> io::Result<NodeId> {
        self.live.lookup(path)?.ok_or_else(|| not_found(path))
    }

    fn create(&mut self, path: &Path, kind: NewKind) -> io::Result<NodeId> {
        let (parent, name) = self.live.parent_of(path)?;
        if self.live.children(parent).is_some_and(|children| children.contains_key(&name)) {
            return Err(io::Error::new(io::ErrorKind::AlreadyExists, path.display().to_string()));
        }
        let node = self.new_node();
        self.record(Op::Create { parent, name, node, kind });
        Ok(node)
    }
}

/// The simulated file system. Cheap to build; not shared between threads in practice,
/// but safe to share (one mutex).
#[derive(Debug, Default)]
pub struct SimVfs {
    state: Mutex<State>,
}

impl SimVfs {
    /// An empty file system (just the root directory), entirely durable.
    pub fn new() -> Self {
        Self::default()
    }

    /// A durable file system holding `files` (workspace-relative paths) and the
    /// directories above them.
    pub fn from_files<P: AsRef<Path>, B: AsRef<[u8]>>(files: impl IntoIterator<Item = (P, B)>) -> io::Result<Self> {
        let sim = SimVfs::new();
        for (path, bytes) in files {
            sim.put_file(path.as_ref(), bytes.as_ref())?;
        }
        sim.checkpoint();
        Ok(sim)
    }

    fn from_image(image: Image) -> Self {
        let state = State { live: image.clone(), base: image, ..State::default() };
        SimVfs { state: Mutex::new(state) }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves a consistent state (every mutation is
        // one `record`), so a poisoned mutex is still usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Test setup, not an operation: write `bytes` at `path`, creating parent
    /// directories and replacing an existing file. Durable after [`SimVfs::checkpoint`].
    pub fn put_file(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut state = self.lock();
        if let Some(parent) = path.parent() {
            let mut current = PathBuf::new();
            for component in parent.components() {
                current.push(component);
                if state.live.lookup(&current)?.is_none() {
                    state.create(&current, NewKind::Dir)?;
                }
            }
        }
        let node = match state.live.lookup(path)? {
            Some(node) => node,
            None => state.create(path, NewKind::File)?,
        };
        state.record(Op::Write { node, data: bytes.to_vec() });
        Ok(())
    }

    /// Test setup, not an operation: create directory `path` and its parents.
    pub fn put_dir(&self, path: &Path) -> io::Result<()> {
        let mut state = self.lock();
        let mut current = PathBuf::new();
        for component in path.components() {
            current.push(component);
            if state.live.lookup(&current)?.is_none() {
                state.create(&current, NewKind::Dir)?;
            }
        }
        Ok(())
    }

    /// Test setup, not an operation: a symbolic link at `path` pointing at `target`.
    pub fn put_symlink(&self, path: &Path, target: &OsStr) -> io::Result<()> {
        self.lock().create(path, NewKind::Symlink(target.to_os_string())).map(|_| ())
    }

    /// Declare the live state durable and start a new trace (as after a clean sync of
    /// the whole disk).
    pub fn checkpoint(&self) {
        let mut state = self.lock();
        state.base = state.live.clone();
        state.trace.clear();
    }

    /// Arm (or with `None` disarm) fault injection; the operation count restarts at 0.
    pub fn set_fault(&self, fault: Option<Fault>) {
        let mut state = self.lock();
        state.fault = fault;
        state.count = 0;
    }

    /// How many operations ran since the last [`SimVfs::set_fault`] (or creation).
    pub fn op_count(&self) -> u64 {
        self.lock().count
    }

    /// How many operations the trace holds (the crash points [`SimVfs::crash`] accepts
    /// are `0..=trace_len()`).
    pub fn trace_len(&self) -> usize {
        self.lock().trace.len()
    }

    /// The file system a clean restart would see: the live state, all of it durable,
    /// with no fault armed.
    pub fn live_copy(&self) -> SimVfs {
        SimVfs::from_image(self.lock().live.clone())
    }

    /// The file system after the *process* died once `prefix` operations of the trace
    /// were issued while the machine kept running: the live state of that moment, with
    /// the trace (and so what is durable) carried on, so that a later [`SimVfs::crash`]
    /// models a power loss after the restart.
    pub fn restart(&self, prefix: usize) -> SimVfs {
        let state = self.lock();
        let trace: Vec<Op> = state.trace.get(..prefix.min(state.trace.len())).unwrap_or_default().to_vec();
        let mut live = state.base.clone();
        for op in &trace {
            live.apply(op);
        }
        SimVfs { state: Mutex::new(State { live, base: state.base.clone(), trace, ..State::default() }) }
    }

    /// A state the disk could hold after power loss once `prefix` operations of the
    /// trace were issued, with the unsynced ones resolved by the deterministic `seed`.
    pub fn crash(&self, prefix: usize, seed: u64) -> CrashImage {
        let state = self.lock();
        let prefix = prefix.min(state.trace.len());
        let (image, stats) = crash::generate(&state.base, state.trace.get(..prefix).unwrap_or_default(), seed);
        CrashImage {
            vfs: SimVfs::from_image(image),
            prefix,
            unsynced: stats.unsynced,
            dropped: stats.dropped,
            torn: stats.torn,
        }
    }

    /// The trace, one line per operation, for failure messages.
    pub fn describe_trace(&self) -> Vec<String> {
        self.lock()
            .trace
            .iter()
            .map(|op| match op {
                Op::Write { node, data } => format!("write #{node} ({} bytes)", data.len()),
                other => format!("{other:?}"),
            })
            .collect()
    }

    /// Every regular file of the live state, by path (for assertions).
    pub fn files(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        self.lock().live.files()
    }
}

impl Vfs for SimVfs {
    type File = SimFile;

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let mut state = self.lock();
        state.tick()?;
        let node = state.existing(path)?;
        match state.live.nodes.get(&node) {
            Some(Node::File { data, .. }) => Ok(data.clone()),
            Some(Node::Dir { .. }) => Err(io::Error::new(io::ErrorKind::IsADirectory, path.display().to_string())),
            _ => Err(io::Error::new(io::ErrorKind::Unsupported, "the simulation never follows links")),
        }
    }

    fn create_file(&self, path: &Path, bytes: &[u8]) -> io::Result<SimFile> {
        let mut state = self.lock();
        if let Err(error) = state.tick() {
            // A failed write(2) may still have created the file and written part of
            // the data; EACCES fails at open(2) and leaves nothing.
            let kind = state.fault.map(|fault| fault.kind);
            if kind != Some(FaultKind::Eacces)
                && let Ok(node) = state.create(path, NewKind::File)
            {
                let half = bytes.get(..bytes.len() / 2).unwrap_or_default().to_vec();
                state.record(Op::Write { node, data: half });
            }
            return Err(error);
        }
        let node = state.create(path, NewKind::File)?;
        state.record(Op::Write { node, data: bytes.to_vec() });
        let handle = state.next_handle;
        state.next_handle = handle.saturating_add(1);
        Ok(SimFile { handle, node })
    }

    fn sync_file(&self, file: &mut SimFile) -> io::Result<()> {
        let mut state = self.lock();
        let ticked = state.tick();
        if state.poisoned.contains(&file.handle) {
            return Err(FaultKind::Eio.error());
        }
        if let Err(error) = ticked {
            state.poisoned.insert(file.handle);
            return Err(error);
        }
        state.record(Op::SyncFile { node: file.node });
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut state = self.lock();
        state.tick()?;
        let (from_parent, from_name) = state.live.parent_of(from)?;
        let node = state.existing(from)?;
        let (to_parent, to_name) = state.live.parent_of(to)?;
        if to.starts_with(from) && to != from {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "cannot move a directory into itself"));
        }
        let moving_dir = state.live.children(node).is_some();
        if let Some(old) = state.live.lookup(to)? {
            if old == node {
                return Ok(());
            }
            match (moving_dir, state.live.children(old)) {
                (false, Some(_)) => {
                    return Err(io::Error::new(io::ErrorKind::IsADirectory, to.display().to_string()));
                }
                (true, None) => return Err(io::Error::new(io::ErrorKind::NotADirectory, to.display().to_string())),
                (true, Some(children)) if !children.is_empty() => {
                    return Err(io::Error::new(io::ErrorKind::DirectoryNotEmpty, to.display().to_string()));
                }
                _ => {}
            }
        }
        state.record(Op::Rename { from_parent, from_name, to_parent, to_name, node });
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let mut state = self.lock();
        state.tick()?;
        let (parent, name) = state.live.parent_of(path)?;
        let node = state.existing(path)?;
        if state.live.children(node).is_some() {
            return Err(io::Error::new(io::ErrorKind::IsADirectory, path.display().to_string()));
        }
        state.record(Op::Unlink { parent, name, node });
        Ok(())
    }

    fn create_dir(&self, path: &Path) -> io::Result<()> {
        let mut state = self.lock();
        state.tick()?;
        state.create(path, NewKind::Dir).map(|_| ())
    }

    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        let mut state = self.lock();
        state.tick()?;
        let (parent, name) = state.live.parent_of(path)?;
        let node = state.existing(path)?;
        match state.live.children(node) {
            None => Err(io::Error::new(io::ErrorKind::NotADirectory, path.display().to_string())),
            Some(children) if !children.is_empty() => {
                Err(io::Error::new(io::ErrorKind::DirectoryNotEmpty, path.display().to_string()))
            }
            Some(_) => {
                state.record(Op::Unlink { parent, name, node });
                Ok(())
            }
        }
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        let mut state = self.lock();
        state.tick()?;
        let node = state.existing(path)?;
        if state.live.children(node).is_none() {
            return Err(io::Error::new(io::ErrorKind::NotADirectory, path.display().to_string()));
        }
        state.record(Op::SyncDir { node });
        Ok(())
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<OsString>> {
        let mut state = self.lock();
        state.tick()?;
        let node = state.existing(path)?;
        match state.live.children(node) {
            Some(children) => Ok(children.keys().cloned().collect()),
            None => Err(io::Error::new(io::ErrorKind::NotADirectory, path.display().to_string())),
        }
    }

    fn metadata(&self, path: &Path) -> io::Result<Option<Metadata>> {
        let mut state = self.lock();
        state.tick()?;
        let Some(node) = state.live.lookup(path)? else { return Ok(None) };
        Ok(state.live.nodes.get(&node).map(|entry| match entry {
            Node::File { data, mode } => Metadata::new(FileKind::File, data.len() as u64, *mode, node),
            Node::Dir { mode, .. } => Metadata::new(FileKind::Dir, 0, *mode, node),
            Node::Symlink { target } => Metadata::new(FileKind::Symlink, target.len() as u64, 0o777, node),
        }))
    }

    fn set_mode(&self, path: &Path, mode: u32) -> io::Result<()> {
        let mut state = self.lock();
        state.tick()?;
        let node = state.existing(path)?;
        // Modes are metadata the invariants do not cover, so they change only live.
        match state.live.nodes.get_mut(&node) {
            Some(Node::File { mode: old, .. } | Node::Dir { mode: old, .. }) => {
                *old = mode & 0o7777;
                Ok(())
            }
            _ => Err(io::Error::new(io::ErrorKind::InvalidInput, "refusing to chmod through a symbolic link")),
        }
    }
}

#[cfg(test)]
mod tests;
