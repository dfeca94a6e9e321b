//! The `views` section of `check`: derived views that differ from a fresh build of the
//! current topics (`VIEWS_DRIFT`), and `check --repair`'s rebuild of them through the
//! transaction, so the repaired views install atomically like any other edit.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use scriptorium_backend_api::layers::derived_views::{DRIFT_CODE, DerivedViews};
use scriptorium_backend_api::layers::transaction::{Edit, Error, GitMode, UpdateRequest, Workspace};

use crate::check::Section;
use crate::error::CliError;
use crate::views::Stage;

/// The history message of a repair.
const REPAIR_MESSAGE: &str = "memory: rebuild derived views";

/// The views section: the drifted paths, or why the views cannot be built.
#[derive(Debug)]
pub(crate) enum ViewsSection {
    /// No derived view exists yet: no install has run here (a hand-made or sources-only
    /// workspace). Not drift, and the section is left out of the report.
    NotBuilt,
    /// Every derived file matches a fresh build.
    InStep,
    /// These derived files differ from a fresh build (sorted).
    Drift(Vec<String>),
    /// The views cannot be built: the stable code and the message.
    Unbuildable(&'static str, String),
    /// The workspace could not be read.
    Unreadable(String),
}

impl ViewsSection {
    /// Compare the derived files of the workspace at `root` with a fresh build.
    pub(crate) fn scan(root: &Path) -> Self {
        let stage = match Stage::read(root) {
            Ok(stage) => stage,
            Err(error) => return ViewsSection::Unreadable(error.to_string()),
        };
        // Every install writes these two; a workspace with neither was never built.
        if !["recent_events.jsonl", "relations.json"].iter().any(|path| stage.files.contains_key(*path)) {
            return ViewsSection::NotBuilt;
        }
        match stage.build() {
            Ok(derived) => {
                let drift = derived.drift(&stage.files);
                if drift.is_empty() { ViewsSection::InStep } else { ViewsSection::Drift(drift) }
            }
            Err(error) => {
                ViewsSection::Unbuildable(error.code().as_str(), format!("{}: {}", error.path(), error.message()))
            }
        }
    }
}

impl Section for ViewsSection {
    fn name(&self) -> &'static str {
        "views"
    }

    fn applies(&self) -> bool {
        !matches!(self, ViewsSection::NotBuilt)
    }

    fn failed(&self) -> bool {
        !matches!(self, ViewsSection::InStep | ViewsSection::NotBuilt)
    }

    fn to_json(&self) -> Value {
        match self {
            ViewsSection::NotBuilt | ViewsSection::InStep => json!({"ok": true, "drift": []}),
            ViewsSection::Drift(paths) => json!({"ok": false, "code": DRIFT_CODE, "drift": paths}),
            ViewsSection::Unbuildable(code, message) => json!({"ok": false, "code": code, "message": message}),
            ViewsSection::Unreadable(message) => json!({"ok": false, "message": message}),
        }
    }

    fn to_human(&self) -> String {
        let mut out = String::new();
        match self {
            ViewsSection::NotBuilt => out.push_str("  no derived views yet: the first install builds them\n"),
            ViewsSection::InStep => out.push_str("  derived views match the topics\n"),
            ViewsSection::Drift(paths) => {
                for path in paths {
                    let _ = writeln!(out, "  {path}: {DRIFT_CODE} differs from a fresh build");
                }
                out.push_str("  `scriptorium check --repair` rebuilds them\n");
            }
            ViewsSection::Unbuildable(code, message) => {
                let _ = writeln!(out, "  cannot build the views: {code} {message}");
            }
            ViewsSection::Unreadable(message) => {
                let _ = writeln!(out, "  cannot read the workspace: {message}");
            }
        }
        out
    }
}

/// `check --repair`: when derived views drifted, rebuild them in one transaction (an
/// empty edit, whose derive step rewrites every view). Returns what was rebuilt, or the
/// transaction's refusal.
pub(crate) fn repair(root: &Path) -> Result<Result<Vec<String>, Error>, CliError> {
    let ViewsSection::Drift(drift) = ViewsSection::scan(root) else {
        return Ok(Ok(Vec::new()));
    };
    let rebuilt = Workspace::open(root).and_then(|workspace| {
        let mut request = UpdateRequest::new(workspace.revision()?, Edit::Changes(Vec::new()));
        request.commit_message = REPAIR_MESSAGE.to_owned();
        request.git_commit = GitMode::Auto;
        workspace.update(&request, &DerivedViews::default())
    });
    Ok(rebuilt.map(|_| drift))
}
