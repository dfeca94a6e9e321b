//! The derived views as they stand on disk and as a fresh build from the current topics
//! would make them: what `status`, `core` and `check` compare. Only reads files; the
//! rebuild itself is the derived-views layer's, and repairs go through the transaction.

use std::collections::BTreeMap;
use std::path::Path;

use scriptorium_backend_api::layers::derived_views::{CoreReport, Derived, DerivedViews};
use scriptorium_backend_api::layers::transaction::{
    CORE_REPORT_FILE, FileClass, Listing, RUNTIME_STATE_FILE, RealVfs, Scope, runtime_dir_name,
};

use crate::error::{CliError, CliErrorCode};

/// The top-level derived files next to `timeline/` (`commitments.jsonl` is carried
/// through untouched, as the transaction does).
const TOP_LEVEL: [&str; 4] = ["core.md", "recent_events.jsonl", "relations.json", "commitments.jsonl"];

/// The workspace files a derive step is given, read from disk: `sources/**`,
/// `topics/**.md`, the derived files and the runtime state and core report.
#[derive(Debug)]
pub(crate) struct Stage {
    /// Workspace-relative path → bytes.
    pub(crate) files: BTreeMap<String, Vec<u8>>,
    /// The runtime directory's name (`.scriptorium`, or `.nativemem` where that exists).
    pub(crate) runtime_dir: &'static str,
}

impl Stage {
    /// Read the stage of the workspace at `root`.
    pub(crate) fn read(root: &Path) -> Result<Stage, CliError> {
        let runtime_dir = runtime_dir_name(&RealVfs::new(root)).map_err(|err| CliError::read(root, &err))?;
        let mut files = BTreeMap::new();
        read_listed(root, &["sources", "topics", "timeline"], &mut files)?;
        let runtime_state = format!("{runtime_dir}/{RUNTIME_STATE_FILE}");
        let core_report = format!("{runtime_dir}/{CORE_REPORT_FILE}");
        for path in TOP_LEVEL.iter().copied().chain([runtime_state.as_str(), core_report.as_str()]) {
            if let Some(bytes) = read_file(&root.join(path))? {
                files.insert(path.to_owned(), bytes);
            }
        }
        Ok(Stage { files, runtime_dir })
    }

    /// Read what rendering `core.md` needs, and nothing else: `sources/**` (whose trust
    /// decides which blocks are left out), `topics/core.md` and the runtime files. Another
    /// topic file, even an unreadable one, cannot break `core`.
    pub(crate) fn read_for_core(root: &Path) -> Result<Stage, CliError> {
        let runtime_dir = runtime_dir_name(&RealVfs::new(root)).map_err(|err| CliError::read(root, &err))?;
        let mut files = BTreeMap::new();
        read_listed(root, &["sources"], &mut files)?;
        let runtime_state = format!("{runtime_dir}/{RUNTIME_STATE_FILE}");
        let core_report = format!("{runtime_dir}/{CORE_REPORT_FILE}");
        for path in ["topics/core.md", runtime_state.as_str(), core_report.as_str()] {
            if let Some(bytes) = read_file(&root.join(path))? {
                files.insert(path.to_owned(), bytes);
            }
        }
        Ok(Stage { files, runtime_dir })
    }

    /// The render report kept in the runtime directory, if there is a readable one.
    pub(crate) fn stored_report(&self) -> Option<CoreReport> {
        self.files.get(&format!("{}/{CORE_REPORT_FILE}", self.runtime_dir)).and_then(|b| CoreReport::from_bytes(b))
    }

    /// A fresh build of every view from the current topics and sources.
    pub(crate) fn build(&self) -> Result<Derived, scriptorium_backend_api::layers::derived_views::Error> {
        DerivedViews::default().build(&self.files, self.runtime_dir)
    }
}

/// Read into `files` what the one listing shows under `dirs`, by the transaction's stage
/// rule: topic files under `topics/`, every visible file under `sources/` and `timeline/`.
fn read_listed(root: &Path, dirs: &[&str], files: &mut BTreeMap<String, Vec<u8>>) -> Result<(), CliError> {
    let listing = Listing::read_names(root, Scope::Under(dirs)).complete().map_err(|err| CliError::read(root, &err))?;
    for file in &listing.files {
        let Some(path) = file.path() else { continue };
        let wanted =
            if path.starts_with("topics/") { file.class() == FileClass::Topic } else { file.class().is_visible() };
        if !wanted {
            continue;
        }
        // The listing saw a regular file there; one removed since holds nothing.
        match std::fs::read(root.join(path)) {
            Ok(bytes) => drop(files.insert(path.to_owned(), bytes)),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => return Err(CliError::read(&root.join(path), &err)),
        }
    }
    Ok(())
}

/// The bytes of a regular file, `None` when there is none.
fn read_file(path: &Path) -> Result<Option<Vec<u8>>, CliError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => std::fs::read(path).map(Some).map_err(|err| CliError::read(path, &err)),
        Ok(_) => Ok(None),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(CliError::new(CliErrorCode::ReadFailed, format!("{}: cannot read: {err}", path.display()))),
    }
}

/// Start loading the o200k_base tokenizer on another thread, for a command that will
/// count tokens: loading takes ~90 ms, most of a cold `core` or `status`, and reading and
/// parsing the workspace meanwhile overlap it. The tokenizer is a process-wide lazy
/// static, so the first count waits for this load instead of starting its own; the
/// thread is detached and dies with the process.
pub(crate) fn warm_tokenizer() {
    std::thread::spawn(|| scriptorium_backend_api::layers::derived_views::count_o200k(""));
}

/// A report for humans: `1234 of 2000 tokens, 5 blocks rendered, 2 left out`, then one
/// line per left-out block.
pub(crate) fn describe_report(report: &CoreReport) -> String {
    let mut out = format!(
        "{} of {} tokens, {} rendered, {} left out\n",
        report.tokens_used,
        report.budget,
        crate::output::count(report.rendered.len(), "block", "blocks"),
        report.left_out.len()
    );
    for left in &report.left_out {
        out.push_str(&format!("  left out: {} ({})\n", left.block_id, left.reason.as_str().replace('_', " ")));
    }
    out
}
