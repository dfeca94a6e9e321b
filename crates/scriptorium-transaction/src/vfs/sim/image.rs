//! The in-memory file system of [`SimVfs`](super::SimVfs): inodes in a table, directories
//! mapping names to inode numbers, and the operations of the trace that change them.
//!
//! Operations name inodes, not paths, as a kernel's journal does: replaying a subset of
//! them on an older image (a crash state) stays meaningful when some were dropped, and an
//! operation whose inode or directory does not exist in that image is simply skipped.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path};

use crate::vfs::{DIR_MODE, FILE_MODE};

/// An inode number; [`ROOT`] is the workspace root.
pub(super) type NodeId = u64;

/// The inode of the root directory.
pub(super) const ROOT: NodeId = 0;

/// One inode.
#[derive(Clone, Debug)]
pub(super) enum Node {
    File { data: Vec<u8>, mode: u32 },
    Dir { children: BTreeMap<OsString, NodeId>, mode: u32 },
    Symlink { target: OsString },
}

/// What a [`Op::Create`] makes.
#[derive(Clone, Debug)]
pub(super) enum NewKind {
    File,
    Dir,
    Symlink(OsString),
}

/// One recorded operation. Directory-entry operations (create, rename, unlink) are
/// durable once their directory is synced; a write once its file is synced.
#[derive(Clone, Debug)]
pub(super) enum Op {
    Create { parent: NodeId, name: OsString, node: NodeId, kind: NewKind },
    Write { node: NodeId, data: Vec<u8> },
    Rename { from_parent: NodeId, from_name: OsString, to_parent: NodeId, to_name: OsString, node: NodeId },
    Unlink { parent: NodeId, name: OsString, node: NodeId },
    SyncFile { node: NodeId },
    SyncDir { node: NodeId },
}

/// A whole file-system state.
#[derive(Clone, Debug)]
pub(super) struct Image {
    pub(super) nodes: BTreeMap<NodeId, Node>,
    pub(super) next: NodeId,
}

impl Default for Image {
    fn default() -> Self {
        let mut nodes = BTreeMap::new();
        nodes.insert(ROOT, Node::Dir { children: BTreeMap::new(), mode: DIR_MODE });
        Image { nodes, next: ROOT + 1 }
    }
}

pub(super) fn not_found(path: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("no such file or directory: {}", path.display()))
}

fn through_link(path: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, format!("the simulation never follows links: {}", path.display()))
}

impl Image {
    pub(super) fn children(&self, node: NodeId) -> Option<&BTreeMap<OsString, NodeId>> {
        match self.nodes.get(&node) {
            Some(Node::Dir { children, .. }) => Some(children),
            _ => None,
        }
    }

    fn children_mut(&mut self, node: NodeId) -> Option<&mut BTreeMap<OsString, NodeId>> {
        match self.nodes.get_mut(&node) {
            Some(Node::Dir { children, .. }) => Some(children),
            _ => None,
        }
    }

    /// The inode at `path`, not following a link in the last component. A link or file
    /// in a parent component is an error (the simulation does not follow links, and the
    /// protocol never asks it to).
    pub(super) fn lookup(&self, path: &Path) -> io::Result<Option<NodeId>> {
        let mut current = ROOT;
        for component in path.components() {
            let Component::Normal(name) = component else { return Err(crate::vfs::not_plain(path)) };
            let children = match self.nodes.get(&current) {
                Some(Node::Dir { children, .. }) => children,
                Some(Node::Symlink { .. }) => return Err(through_link(path)),
                _ => return Err(io::Error::new(io::ErrorKind::NotADirectory, path.display().to_string())),
            };
            match children.get(name) {
                Some(&child) => current = child,
                None => return Ok(None),
            }
        }
        Ok(Some(current))
    }

    /// The directory holding `path` and the last name, for operations that create or
    /// remove an entry.
    pub(super) fn parent_of(&self, path: &Path) -> io::Result<(NodeId, OsString)> {
        let name = path.file_name().ok_or_else(|| crate::vfs::not_plain(path))?;
        let parent_path = path.parent().unwrap_or_else(|| Path::new(""));
        let parent = self.lookup(parent_path)?.ok_or_else(|| not_found(path))?;
        match self.nodes.get(&parent) {
            Some(Node::Dir { .. }) => Ok((parent, name.to_os_string())),
            Some(Node::Symlink { .. }) => Err(through_link(path)),
            _ => Err(io::Error::new(io::ErrorKind::NotADirectory, path.display().to_string())),
        }
    }

    /// Apply one operation if it makes sense in this image; returns whether it did.
    /// The live file system validates first, so there it always applies; in a crash
    /// image an operation whose inode or directory is missing is skipped.
    pub(super) fn apply(&mut self, op: &Op) -> bool {
        match op {
            Op::Create { parent, name, node, kind } => {
                self.allocate(*node, kind);
                let vacant = self.children(*parent).is_some_and(|children| !children.contains_key(name));
                vacant && self.children_mut(*parent).map(|children| children.insert(name.clone(), *node)).is_some()
            }
            Op::Write { node, data } => match self.nodes.get_mut(node) {
                Some(Node::File { data: old, .. }) => {
                    old.clone_from(data);
                    true
                }
                _ => false,
            },
            Op::Rename { from_parent, from_name, to_parent, to_name, node } => {
                if !self.nodes.contains_key(node) || self.children(*to_parent).is_none() {
                    return false;
                }
                // A replaced non-empty directory cannot have been replaced.
                if let Some(&old) = self.children(*to_parent).and_then(|children| children.get(to_name))
                    && self.children(old).is_some_and(|children| !children.is_empty())
                    && old != *node
                {
                    return false;
                }
                if let Some(children) = self.children_mut(*from_parent)
                    && children.get(from_name) == Some(node)
                {
                    children.remove(from_name);
                }
                // After a rename the inode lives at its new name only, wherever its old
                // entry was (in a crash image the entry that created it may be missing,
                // or an earlier rename may have been lost).
                for entry in self.nodes.values_mut() {
                    if let Node::Dir { children, .. } = entry {
                        children.retain(|_, child| child != node);
                    }
                }
                self.children_mut(*to_parent).map(|children| children.insert(to_name.clone(), *node)).is_some()
            }
            Op::Unlink { parent, name, node } => {
                let linked = self.children(*parent).and_then(|children| children.get(name)) == Some(node);
                if linked && let Some(children) = self.children_mut(*parent) {
                    children.remove(name);
                }
                linked
            }
            Op::SyncFile { .. } | Op::SyncDir { .. } => true,
        }
    }

    /// Make inode `node` exist (unlinked) if it does not. A crash image allocates every
    /// inode its prefix created, because an inode and its directory entry persist
    /// separately: synced data whose entry was lost is simply unreachable.
    pub(super) fn allocate(&mut self, node: NodeId, kind: &NewKind) {
        if self.nodes.contains_key(&node) {
            return;
        }
        let new = match kind {
            NewKind::File => Node::File { data: Vec::new(), mode: FILE_MODE },
            NewKind::Dir => Node::Dir { children: BTreeMap::new(), mode: DIR_MODE },
            NewKind::Symlink(target) => Node::Symlink { target: target.clone() },
        };
        self.nodes.insert(node, new);
        self.next = self.next.max(node.saturating_add(1));
    }

    /// Every regular file reachable from the root, by path.
    pub(super) fn files(&self) -> BTreeMap<std::path::PathBuf, Vec<u8>> {
        let mut out = BTreeMap::new();
        let mut stack = vec![(std::path::PathBuf::new(), ROOT)];
        while let Some((path, node)) = stack.pop() {
            match self.nodes.get(&node) {
                Some(Node::Dir { children, .. }) => {
                    stack.extend(children.iter().map(|(name, child)| (path.join(name), *child)));
                }
                Some(Node::File { data, .. }) => {
                    out.insert(path, data.clone());
                }
                _ => {}
            }
        }
        out
    }
}
