//! `scriptorium status`: what a person wants to know about a workspace at a glance —
//! revision, how many topic and source files, the last `core.md` render report (kept in
//! the runtime directory by every install), whether the derived views are in step with
//! the topics, and the history head (read, never created or repaired). Reads only; drift is
//! shown, not a failure.

use serde_json::{Value, json};

use scriptorium_backend_api::layers::derived_views::{CoreReport, DRIFT_CODE};
use scriptorium_backend_api::layers::transaction::{History, RealVfs, revision};

use crate::Outcome;
use crate::cli::StatusArgs;
use crate::error::{CliError, CliErrorCode};
use crate::output::{count, print, print_json};
use crate::views::{Stage, describe_report};
use crate::workspace::Workspace;

/// The derived views compared with a fresh build.
enum ViewsState {
    /// No install has built any view here yet.
    NotBuilt,
    InStep,
    Drift(Vec<String>),
    /// The views cannot be built (a topic file that is not UTF-8, …): code and message.
    Unbuildable(&'static str, String),
}

/// Run `status`.
pub(crate) fn run(args: &StatusArgs) -> Result<Outcome, CliError> {
    crate::views::warm_tokenizer();
    let workspace = Workspace::locate(args.workspace.as_deref())?;
    let root = &workspace.root;
    let stage = Stage::read(root)?;
    let revision = revision(&RealVfs::new(root), stage.runtime_dir)
        .map_err(|err| CliError::new(CliErrorCode::ReadFailed, format!("cannot compute the revision: {err}")))?;
    // Only an existing repository is asked: status never creates history.
    let head = History::open_existing(root).ok().flatten().and_then(|h| h.head());
    let has_master = stage.files.contains_key("topics/core.md");
    let stored = stage.stored_report();
    // Every install writes these two; a workspace with neither was never built.
    let built = ["recent_events.jsonl", "relations.json"].iter().any(|path| stage.files.contains_key(*path));
    let (views, fresh_report) = match stage.build() {
        Ok(derived) => {
            let drift = derived.drift(&stage.files);
            let state = match (built, drift.is_empty()) {
                (false, _) => ViewsState::NotBuilt,
                (true, true) => ViewsState::InStep,
                (true, false) => ViewsState::Drift(drift),
            };
            (state, derived.core_report)
        }
        Err(error) => {
            (ViewsState::Unbuildable(error.code().as_str(), format!("{}: {}", error.path(), error.message())), None)
        }
    };
    // The stored report is what the last install rendered; it is stale when a fresh
    // render of the same master would say something else.
    let stale = has_master && fresh_report.is_some() && stored != fresh_report;
    let writer = crate::writer_cmd::status_block(root, stage.runtime_dir, args.sessions.as_deref());
    // The fields of `memory_status` (spec 02 §7) come from the backend's own counting.
    let counts = scriptorium_backend_api::inspect::status_counts(root).map_err(|error| crate::facade::error(&error))?;
    let count_of =
        |key: &str| counts.iter().find(|(name, _)| *name == key).map_or(Value::Null, |(_, value)| value.clone());

    if args.json {
        let views_json = match &views {
            ViewsState::NotBuilt => json!({"built": false, "in_step": true, "drift": []}),
            ViewsState::InStep => json!({"built": true, "in_step": true, "drift": []}),
            ViewsState::Drift(paths) => json!({"built": true, "in_step": false, "code": DRIFT_CODE, "drift": paths}),
            ViewsState::Unbuildable(code, message) => {
                json!({"built": built, "in_step": false, "code": code, "message": message})
            }
        };
        let mut report = serde_json::Map::new();
        let id = crate::writer_cmd::workspace_id(root).unwrap_or_else(|| "workspace".to_owned());
        report.insert("workspace".to_owned(), json!(id));
        report.insert("revision".to_owned(), json!(revision));
        for (key, value) in &counts {
            report.insert((*key).to_owned(), value.clone());
        }
        report.insert("writer".to_owned(), writer.clone());
        report.insert("workspace_path".to_owned(), json!(root.display().to_string()));
        let extra = json!({
            "history_head": head,
            "core": {
                "master": has_master,
                "report": stored.as_ref().map(CoreReport::to_json),
                "report_stale": stale,
            },
            "views": views_json,
        });
        if let Value::Object(extra) = extra {
            report.extend(extra);
        }
        print_json(&Value::Object(report))?;
        return Ok(Outcome::Clean);
    }

    // Spec 02 §8.3 opens the human status with the memory root; the counts follow as lines
    // a person reads (the pretty status object is `--json`).
    let mut out = format!("memory root: {}\nrevision: {revision}\n", root.display());
    let number = |key: &str| usize::try_from(count_of(key).as_u64().unwrap_or(0)).unwrap_or(usize::MAX);
    out.push_str(&format!("topics: {}\n", count(number("topic_files"), "file", "files")));
    out.push_str(&format!("sources: {}\n", count(number("source_files"), "file", "files")));
    out.push_str(&format!(
        "memory: {}, {}, {}, {}; core.md {}\n",
        count(number("blocks"), "block", "blocks"),
        count(number("timeline_files"), "timeline file", "timeline files"),
        count(number("recent_events"), "recent event", "recent events"),
        count(number("relations"), "relation", "relations"),
        if count_of("core_exists") == Value::Bool(true) { "exists" } else { "missing" },
    ));
    out.push_str(&format!("history: {}\n", head.as_deref().map_or("none", |id| id.get(..12).unwrap_or(id))));
    out.push_str("core.md: ");
    match (&stored, has_master) {
        (Some(report), true) => {
            out.push_str(&describe_report(report));
            if stale {
                out.push_str("  (the report is stale: `scriptorium core` shows the render as it would be now)\n");
            }
        }
        (None, true) => out.push_str("no render report yet (it is written by the next install or `check --repair`)\n"),
        (_, false) => out.push_str("no topics/core.md: nothing is rendered\n"),
    }
    match &views {
        ViewsState::NotBuilt => out.push_str("derived views: none yet (the first install builds them)\n"),
        ViewsState::InStep => out.push_str("derived views: in step\n"),
        ViewsState::Drift(paths) => {
            out.push_str(&format!(
                "derived views: out of step ({DRIFT_CODE}); `scriptorium check --repair` rebuilds\n"
            ));
            for path in paths {
                out.push_str(&format!("  {path}\n"));
            }
        }
        ViewsState::Unbuildable(code, message) => {
            out.push_str(&format!("derived views: cannot build: {code}: {message}\n"))
        }
    }
    out.push_str(&crate::writer_cmd::describe_block(&writer));
    print(&out)?;
    Ok(Outcome::Clean)
}
