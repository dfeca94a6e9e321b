//! The workspace as `check` sees it: the transaction layer's one [`Listing`] of
//! `topics/` and `sources/`, taken once and shared by every section, so that `check`
//! counts exactly the files search indexes and the revision hashes (spec 01 §1.5, §6.1).
//!
//! Only those two directories are walked, so the runtime directory, `.git/`, the stage,
//! quarantine and `memory-superseded/` are never read (decision 6).

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use scriptorium_backend_api::layers::transaction::{
    FileClass, HIDDEN_ARCHIVE_CODE, ListedFile, Listing, PATH_COLLISION_CODE, Scope, SkipReason, Skipped, Unreadable,
};
use serde_json::{Value, json};

use crate::check::Section;

/// The directories `check` reads.
const AREAS: [&str; 2] = ["topics", "sources"];

/// One memory file, or a hidden file that looks like one.
#[derive(Debug)]
pub(crate) struct WorkspaceFile {
    /// The workspace-relative path with `/` (lossy, U+FFFD, when a name is not UTF-8).
    pub(crate) relative: String,
    /// The path on disk.
    pub(crate) path: PathBuf,
}

/// The listing of `topics/` and `sources/`, sorted into what each section reads.
#[derive(Debug)]
pub(crate) struct WorkspaceListing {
    root: PathBuf,
    listing: Listing<()>,
}

impl WorkspaceListing {
    /// Walk `root/topics` and `root/sources` once.
    pub(crate) fn read(root: &Path) -> Self {
        WorkspaceListing { root: root.to_path_buf(), listing: Listing::read_names(root, Scope::Under(&AREAS)) }
    }

    /// The files of `class`, in component-wise path order.
    pub(crate) fn files(&self, class: FileClass) -> Vec<WorkspaceFile> {
        self.listing.files.iter().filter(|file| file.class() == class).map(|file| self.file(file)).collect()
    }

    /// Hidden `*.md` files under `area/` (a component starting with `.` or not UTF-8):
    /// no reader lists them, so the memory they hold is lost to recall.
    pub(crate) fn hidden(&self, area: &str) -> Vec<WorkspaceFile> {
        self.listing
            .files
            .iter()
            .filter(|file| file.class() == FileClass::Hidden)
            .map(|file| self.file(file))
            .filter(|file| file.relative.strip_prefix(area).is_some_and(|rest| rest.starts_with('/')))
            .filter(|file| file.relative.ends_with(".md"))
            .collect()
    }

    /// Entries skipped (links, special files, directories named `*.md`), in walk order.
    pub(crate) fn skipped(&self) -> &[Skipped] {
        &self.listing.skipped
    }

    /// Directories under `area/` (or the root, for `topics`) that could not be listed.
    pub(crate) fn unreadable(&self, area: &str) -> impl Iterator<Item = &Unreadable> {
        self.listing
            .unreadable
            .iter()
            .filter(move |dir| dir.path.split('/').next() == Some(area) || (dir.path.is_empty() && area == "topics"))
    }

    fn file(&self, file: &ListedFile<()>) -> WorkspaceFile {
        let relative = String::from_utf8_lossy(file.path_bytes()).into_owned();
        let path = self.root.join(std::ffi::OsStr::from_bytes(file.path_bytes()));
        WorkspaceFile { relative, path }
    }
}

/// The `listing` section of `check`: every entry the listing left out of memory and
/// why, as warnings with a code (never in silence). Shown only when there is one; it
/// never fails the check, since the workspace is readable as it is.
#[derive(Debug)]
pub(crate) struct ListingSection {
    warnings: Vec<(String, &'static str, String)>,
}

impl ListingSection {
    /// The warnings of `listing`: skipped entries, hidden archives (hidden topic files
    /// are `topics` violations, because no write may create them) and paths that are one
    /// file on a case-insensitive or normalizing file system.
    pub(crate) fn scan(listing: &WorkspaceListing) -> Self {
        let mut warnings: Vec<(String, &'static str, String)> = listing
            .skipped()
            .iter()
            .map(|entry| (entry.path.clone(), entry.reason.code(), describe(entry.reason).to_owned()))
            .collect();
        warnings.extend(
            listing
                .hidden("sources")
                .into_iter()
                .map(|file| (file.relative, HIDDEN_ARCHIVE_CODE, "hidden path, not read".to_owned())),
        );
        warnings.extend(listing.listing.collisions().into_iter().map(|(path, other)| {
            let detail = format!("differs from {other} only by case or normalization");
            (path, PATH_COLLISION_CODE, detail)
        }));
        warnings.sort_by(|a, b| a.0.split('/').cmp(b.0.split('/')));
        ListingSection { warnings }
    }
}

fn describe(reason: SkipReason) -> &'static str {
    match reason {
        SkipReason::Symlink => "symbolic link, not followed",
        SkipReason::Special => "not a regular file, not read",
        SkipReason::MarkdownDir => "directory named *.md, not a topic or archive",
        _ => "skipped",
    }
}

impl Section for ListingSection {
    fn name(&self) -> &'static str {
        "listing"
    }

    fn applies(&self) -> bool {
        !self.warnings.is_empty()
    }

    fn failed(&self) -> bool {
        false
    }

    fn to_json(&self) -> Value {
        let warnings: Vec<Value> = self
            .warnings
            .iter()
            .map(|(path, code, detail)| json!({ "path": path, "code": code, "detail": detail }))
            .collect();
        json!({ "ok": true, "warnings": warnings })
    }

    fn to_human(&self) -> String {
        let mut out = String::new();
        for (path, code, detail) in &self.warnings {
            out.push_str(&format!("  {path}: {code} {detail} (warning)\n"));
        }
        out
    }
}
