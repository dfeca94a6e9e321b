//! T8 (paths and identities), the real-file-system half: a symbolic link planted inside
//! `sources/` is never written through by `Workspace::update` with evidence. For each
//! planted link (the evidence provider directory, its `_v2` directory, the archive file
//! itself, `sources/` as a whole, and a dangling provider link) the update fails with a
//! clean error code, the link's outside target stays byte-identical (or is not created),
//! and the workspace keeps every byte and its revision.

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::Path;

use scriptorium_transaction::{NoDerivedViews, UpdateRequest, Workspace};
use serde_json::{Value, json};

use crate::ensure;
use crate::support::{Outcome, Scratch, copy_tree, tx_base};

/// What a path holds, without following links.
#[derive(Debug, PartialEq, Eq)]
enum Entry {
    Dir,
    File(Vec<u8>),
    Link(std::path::PathBuf),
}

/// Every entry under `root` (links recorded, never followed), skipping `.scriptorium`
/// and `.git`, whose journal and history may legitimately change.
fn snapshot(root: &Path) -> Result<BTreeMap<String, Entry>, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Entry>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            let relative = path.strip_prefix(root).map_err(std::io::Error::other)?.to_string_lossy().into_owned();
            if relative == ".scriptorium" || relative == ".git" {
                continue;
            }
            let kind = std::fs::symlink_metadata(&path)?.file_type();
            if kind.is_symlink() {
                out.insert(relative, Entry::Link(std::fs::read_link(&path)?));
            } else if kind.is_dir() {
                out.insert(relative, Entry::Dir);
                walk(root, &path, out)?;
            } else {
                out.insert(relative, Entry::File(std::fs::read(&path)?));
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    if root.exists() {
        walk(root, root, &mut out).map_err(|e| format!("snapshot {}: {e}", root.display()))?;
    }
    Ok(out)
}

fn evidence_request(workspace: &Workspace) -> Result<UpdateRequest, String> {
    let content = "# Tea\n\nCraig drinks sencha.[^e1]\n\n[^e1]: Time: `2024-05-01`; Sources: [c](new-source-a)\n";
    let fields: Value = json!({
        "changes": [{"path": "topics/tea.md", "action": "write", "content": content}],
        "sources": [{"label": "new-source-a", "role": "user", "content": "I drink sencha."}],
        "provenance": {"principal_id": "owner", "speaker_kind": "human", "speaker_id": "owner/local",
                       "speaker_display": "Owner", "authority_tier": "owner", "origin_id": "s/t1"},
        "git_commit": "off",
        "base_revision": workspace.revision().map_err(|e| e.to_string())?,
    });
    UpdateRequest::from_json(&fields).map_err(|e| e.to_string())
}

/// The archive path the evidence request writes in an unmodified workspace.
fn probe_archive_path() -> Result<String, String> {
    let scratch = Scratch::new("t8-probe");
    let root = scratch.path().join("ws");
    copy_tree(&tx_base(), &root);
    let workspace = Workspace::open(&root).map_err(|e| e.to_string())?;
    let result = workspace.update(&evidence_request(&workspace)?, &NoDerivedViews).map_err(|e| e.to_string())?;
    let archive = result.changed_files.iter().find(|p| p.starts_with("sources/")).ok_or("no archive written")?;
    ensure!(archive.starts_with("sources/claude-code/_v2/"), "evidence archived at {archive}");
    Ok(archive.clone())
}

/// Plant a link with `plant(workspace root, outside dir)`, run the evidence update and
/// check it fails without touching the outside target or the workspace. Returns the code.
fn refuses(label: &str, plant: impl FnOnce(&Path, &Path) -> std::io::Result<()>) -> Result<String, String> {
    let scratch = Scratch::new(label);
    let root = scratch.path().join("ws");
    let outside = scratch.path().join("outside");
    copy_tree(&tx_base(), &root);
    std::fs::create_dir_all(outside.join("_v2")).map_err(|e| e.to_string())?;
    std::fs::write(outside.join("_v2/keep.md"), b"outside bytes\n").map_err(|e| e.to_string())?;
    std::fs::write(outside.join("target.md"), b"outside archive\n").map_err(|e| e.to_string())?;
    let workspace = Workspace::open(&root).map_err(|e| e.to_string())?;
    plant(&root, &outside).map_err(|e| format!("{label}: plant: {e}"))?;
    let outside_before = snapshot(&outside)?;
    let workspace_before = snapshot(&root)?;
    let revision = workspace.revision().map_err(|e| e.to_string())?;
    let request = evidence_request(&workspace)?;
    let outcome = workspace.update(&request, &NoDerivedViews);
    ensure!(snapshot(&outside)? == outside_before, "{label}: the outside target changed");
    ensure!(snapshot(&root)? == workspace_before, "{label}: the workspace changed");
    ensure!(!scratch.path().join("nowhere").exists(), "{label}: a dangling link's target was created");
    let error = match outcome {
        Ok(result) => return Err(format!("{label}: the update went through the link: {:?}", result.changed_files)),
        Err(error) => error,
    };
    ensure!(workspace.revision().map_err(|e| e.to_string())? == revision, "{label}: the revision moved");
    let code = error.code().as_str().to_owned();
    ensure!(code.chars().all(|c| c.is_ascii_uppercase() || c == '_'), "{label}: unclean code {code}: {error}");
    ensure!(error.to_string().contains("symbolic link"), "{label}: refused for another reason: {error}");
    Ok(format!("{label}={code}"))
}

pub(crate) fn run() -> Outcome {
    let archive = probe_archive_path()?;
    let file_name = archive.rsplit('/').next().ok_or("no file name")?.to_owned();
    let mut codes = Vec::new();
    codes.push(refuses("t8-provider-dir", |root, outside| symlink(outside, root.join("sources/claude-code")))?);
    codes.push(refuses("t8-v2-dir", |root, outside| {
        std::fs::create_dir_all(root.join("sources/claude-code"))?;
        symlink(outside.join("_v2"), root.join("sources/claude-code/_v2"))
    })?);
    codes.push(refuses("t8-archive-file", |root, outside| {
        std::fs::create_dir_all(root.join("sources/claude-code/_v2"))?;
        symlink(outside.join("target.md"), root.join("sources/claude-code/_v2").join(&file_name))
    })?);
    codes.push(refuses("t8-sources", |root, outside| {
        let moved = outside.join("sources");
        std::fs::rename(root.join("sources"), &moved)?;
        symlink(&moved, root.join("sources"))
    })?);
    codes.push(refuses("t8-dangling", |root, outside| {
        let nowhere = outside.parent().ok_or_else(|| std::io::Error::other("no parent"))?.join("nowhere");
        symlink(nowhere, root.join("sources/claude-code"))
    })?);
    Ok(format!("{} planted links refused ({}), probe archive {archive}", codes.len(), codes.join(", ")))
}
