//! `scriptorium import FORMAT [PATH…]`: agent transcripts into the session store
//! (writer-runtime's importers, docs/format/session-import.md). Without a path, the
//! format's default directories are read (for `openprogram`, the state dir named by
//! `OPENPROGRAM_PROFILE`, default `~/.openprogram`). Skipped lines and files are warnings on stderr
//! (`warning[WRITER_IMPORT_*]: file:line: why`); the import itself goes on.

use std::path::PathBuf;

use serde_json::{Value, json};

use scriptorium_backend_api::layers::writer_runtime::SqliteStore;
use scriptorium_backend_api::layers::writer_runtime::import::{Format, ImportReport, default_paths, import_paths};

use crate::Outcome;
use crate::cli::ImportArgs;
use crate::error::{CliError, CliErrorCode};
use crate::output::{print, print_json};

/// Run `import`.
pub(crate) fn run(args: &ImportArgs) -> Result<Outcome, CliError> {
    let format = Format::from_name(&args.format)
        .ok_or_else(|| CliError::new(CliErrorCode::Usage, format!("unknown format {:?}", args.format)))?;
    let paths: Vec<PathBuf> = if args.paths.is_empty() {
        let defaults = default_paths(format);
        if defaults.is_empty() && matches!(format, Format::ChatGpt | Format::Jsonl) {
            return Err(CliError::new(CliErrorCode::Usage, format!("`import {format}` needs a PATH")));
        }
        defaults
    } else {
        args.paths.iter().map(|path| crate::workspace::expand_home(path)).collect()
    };
    let sessions = match &args.sessions {
        Some(path) => crate::workspace::expand_home(path),
        None => {
            let (root, _) = crate::workspace::resolve(args.workspace.as_deref())?;
            crate::writer_cmd::sessions_path(&root, None)
        }
    };
    if let Some(parent) = sessions.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        // The state directory may not exist before the first import.
        let _ = std::fs::create_dir_all(parent);
    }
    let store = match SqliteStore::open(&sessions) {
        Ok(store) => store,
        Err(error) => {
            eprintln!("error[{}]: {}: {}", error.code(), sessions.display(), error.message());
            return Ok(Outcome::Findings);
        }
    };
    let report = match import_paths(&store, format, &paths) {
        Ok(report) => report,
        Err(error) => {
            eprintln!("error[{}]: {}: {}", error.code(), sessions.display(), error.message());
            return Ok(Outcome::Findings);
        }
    };
    for problem in &report.problems {
        let at = match problem.line {
            Some(line) => format!("{}:{line}", problem.path.display()),
            None => problem.path.display().to_string(),
        };
        eprintln!("warning[{}]: {at}: {}", problem.code, problem.message);
    }
    if args.json {
        print_json(&report_json(format, &sessions, &report))?;
    } else {
        print(&summary(format, &paths, &report))?;
    }
    Ok(Outcome::Clean)
}

fn report_json(format: Format, sessions: &std::path::Path, report: &ImportReport) -> Value {
    let problems: Vec<Value> = report
        .problems
        .iter()
        .map(|p| json!({"code": p.code.as_str(), "path": p.path.display().to_string(), "line": p.line, "message": p.message}))
        .collect();
    json!({
        "format": format.name(),
        "sessions_file": sessions.display().to_string(),
        "files_seen": report.files_seen,
        "files_unchanged": report.files_unchanged,
        "files_reread": report.files_reread,
        "lines_read": report.lines_read,
        "bytes_read": report.bytes_read,
        "nodes_added": report.nodes_added,
        "turns_added": report.turns_added,
        "turns_extended": report.turns_extended,
        "sessions": report.sessions,
        "problems": problems,
    })
}

fn summary(format: Format, paths: &[PathBuf], report: &ImportReport) -> String {
    if paths.is_empty() {
        return format!("no {format} transcripts found (no default directory exists)\n");
    }
    format!(
        "{format}: {} files ({} unchanged, {} read again), {} lines read; {} turns new ({} nodes), {} replies grew, {} sessions changed; {} lines or files skipped\n",
        report.files_seen,
        report.files_unchanged,
        report.files_reread,
        report.lines_read,
        report.turns_added,
        report.nodes_added,
        report.turns_extended,
        report.sessions.len(),
        report.problems.len(),
    )
}
