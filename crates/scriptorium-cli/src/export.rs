//! `scriptorium export [--output F] [--with-history]`: the workspace as one gzip tar
//! archive, every entry under `memory/`: the visible files (topics, sources, derived
//! views, `core.md`) in the listing's order, never the runtime directory (lock, caches,
//! drafts) and, unless `--with-history`, never `.git/`. Entries carry no owner names and
//! the gzip header no time, so the same files give the same archive.

use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

use clap::Args;
use flate2::Compression;
use flate2::write::GzEncoder;
use scriptorium_backend_api::inspect;
use serde_json::json;

use crate::Outcome;
use crate::error::{CliError, CliErrorCode};
use crate::output::{print, print_json};
use crate::workspace::Workspace;

/// The directory every entry sits under.
const ARCHIVE_ROOT: &str = "memory";

/// Arguments of `export`.
#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// The workspace root (default as for `check`).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// The archive to write (default `./scriptorium-memory-<YYYY-MM-DD>.tar.gz`).
    #[arg(long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// Include the history (`.git/`) too.
    #[arg(long)]
    pub(crate) with_history: bool,
    /// Print `{ok, output, files, bytes}` as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Run `export`.
pub(crate) fn run(args: &ExportArgs) -> Result<Outcome, CliError> {
    let root = Workspace::locate(args.workspace.as_deref())?.root;
    let mut files = inspect::visible_files(&root).map_err(|error| crate::facade::error(&error))?;
    if args.with_history {
        files.extend(history_files(&root)?);
    }
    let output = args.output.clone().unwrap_or_else(default_output);
    // Written beside the destination and renamed, so a failed export leaves no torn archive.
    let partial = partial_path(&output);
    let written = write_archive(&root, &files, &partial);
    let bytes = match written.and_then(|()| {
        std::fs::rename(&partial, &output)
            .map_err(|err| failed(&format!("cannot move it to {}", output.display()), &err))
    }) {
        Ok(()) => std::fs::metadata(&output).map_or(0, |meta| meta.len()),
        Err(error) => {
            let _ = std::fs::remove_file(&partial);
            return Err(error);
        }
    };
    if args.json {
        print_json(&json!({"ok": true, "output": output.display().to_string(), "files": files.len(), "bytes": bytes}))?;
    } else {
        print(&format!("exported {} to {}\n", crate::output::count(files.len(), "file", "files"), output.display()))?;
    }
    Ok(Outcome::Clean)
}

fn write_archive(root: &Path, files: &[String], to: &Path) -> Result<(), CliError> {
    let file = File::create(to).map_err(|err| failed(&format!("cannot create {}", to.display()), &err))?;
    let gzip = GzEncoder::new(BufWriter::new(file), Compression::default());
    let mut tar = tar::Builder::new(gzip);
    tar.mode(tar::HeaderMode::Deterministic);
    tar.follow_symlinks(false);
    let bar = crate::progress::bar(files.len() as u64, "exporting");
    for relative in files {
        let path = root.join(relative);
        let name = format!("{ARCHIVE_ROOT}/{relative}");
        tar.append_path_with_name(&path, &name).map_err(|err| failed(&format!("cannot add {relative}"), &err))?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    let gzip = tar.into_inner().map_err(|err| failed("cannot finish the archive", &err))?;
    let mut out = gzip.finish().map_err(|err| failed("cannot finish the gzip stream", &err))?;
    out.flush().map_err(|err| failed("cannot write the archive", &err))?;
    out.into_inner()
        .map_err(|err| failed("cannot write the archive", err.error()))?
        .sync_all()
        .map_err(|err| failed("cannot sync the archive", &err))
}

/// Every regular file under `.git/`, sorted by path (symbolic links are left out).
fn history_files(root: &Path) -> Result<Vec<String>, CliError> {
    let mut out = Vec::new();
    let mut pending = vec![PathBuf::from(".git")];
    while let Some(dir) = pending.pop() {
        let entries = match std::fs::read_dir(root.join(&dir)) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound && dir == Path::new(".git") => return Ok(out),
            Err(err) => return Err(failed(&format!("cannot list {}", dir.display()), &err)),
        };
        for entry in entries {
            let entry = entry.map_err(|err| failed(&format!("cannot list {}", dir.display()), &err))?;
            let relative = dir.join(entry.file_name());
            let kind = entry.file_type().map_err(|err| failed(&format!("cannot stat {}", relative.display()), &err))?;
            if kind.is_dir() {
                pending.push(relative);
            } else if kind.is_file()
                && let Some(text) = relative.to_str()
            {
                out.push(text.to_owned());
            }
        }
    }
    out.sort();
    Ok(out)
}

/// `./scriptorium-memory-<today, UTC>.tar.gz`.
fn default_output() -> PathBuf {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let (year, month, day) = inspect::civil_from_days(days);
    PathBuf::from(format!("scriptorium-memory-{year:04}-{month:02}-{day:02}.tar.gz"))
}

/// A hidden sibling of `output` that only this process writes.
fn partial_path(output: &Path) -> PathBuf {
    let name = output.file_name().map_or_else(|| "export".into(), |name| name.to_string_lossy().into_owned());
    output.with_file_name(format!(".{name}.partial-{}", std::process::id()))
}

fn failed(what: &str, err: &std::io::Error) -> CliError {
    CliError::new(CliErrorCode::ExportFailed, format!("{what}: {err}"))
}
