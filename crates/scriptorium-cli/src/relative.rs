//! The workspace-relative path of an archive named on the command line.
//!
//! A v2 frame is valid only in the file its source id names, so the scanner needs the
//! path as the workspace sees it (`sources/openprogram/_v2/t.md`), not as the shell
//! spelled it (`../_v2/t.md`, `/home/u/.openprogram/memory/sources/...`).

use std::path::{Component, Path};

/// The path of `file` below the nearest ancestor that has a `sources/` directory
/// holding `file`, with `/` separators; `file` as given when there is no such ancestor
/// (or it cannot be resolved). `--relative-path` overrides this for the rare layouts
/// where the nearest ancestor is the wrong one (a provider named `sources`).
pub(crate) fn default_relative_path(file: &Path) -> String {
    // Resolve symlinks and `..` so `cd sources/x/_v2 && scriptorium archive parse t.md`
    // finds the workspace above the current directory.
    let Ok(absolute) = std::fs::canonicalize(file) else { return slash_path(file) };
    for ancestor in absolute.ancestors().skip(1) {
        // `ancestor` holds FILE, so its `sources/` holds FILE exactly when the next
        // component on the way down is `sources`.
        if absolute.starts_with(ancestor.join("sources"))
            && let Ok(below) = absolute.strip_prefix(ancestor)
        {
            return slash_path(below);
        }
    }
    slash_path(file)
}

/// A path with `/` between its normal components (what archives and topics use on
/// every platform). Root, prefix and `.` components are dropped; `..` is kept.
fn slash_path(path: &Path) -> String {
    let parts: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
            Component::ParentDir => Some("..".to_owned()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
        })
        .collect();
    let joined = parts.join("/");
    // An absolute path with no workspace above it keeps its leading `/`, so the
    // message shows what the user typed.
    if path.has_root() && !cfg!(windows) { format!("/{joined}") } else { joined }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_path_drops_dot_components() {
        assert_eq!(slash_path(Path::new("./sources/p/_v2/t.md")), "sources/p/_v2/t.md");
        assert_eq!(slash_path(Path::new("/tmp/a.md")), "/tmp/a.md");
    }
}
