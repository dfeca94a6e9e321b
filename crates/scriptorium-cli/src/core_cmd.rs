//! `scriptorium core`: `core.md` as a render of the current `topics/core.md` would make
//! it now, and that render's report (tokens used, budget, which blocks were left out
//! and why). Reads only: the file on disk changes only through an install.

use serde_json::json;

use crate::Outcome;
use crate::cli::CoreArgs;
use crate::error::{CliError, CliErrorCode};
use crate::output::{print, print_json};
use crate::views::{Stage, describe_report};
use crate::workspace::Workspace;

/// Run `core`.
pub(crate) fn run(args: &CoreArgs) -> Result<Outcome, CliError> {
    crate::views::warm_tokenizer();
    let workspace = Workspace::locate(args.workspace.as_deref())?;
    let stage = Stage::read_for_core(&workspace.root)?;
    let derived = stage.build().map_err(|error| {
        let code = match error.code() {
            scriptorium_backend_api::layers::derived_views::ErrorCode::NotUtf8 => CliErrorCode::NotUtf8,
            _ => CliErrorCode::ReadFailed,
        };
        CliError::new(code, format!("cannot render core.md: {}: {}", error.path(), error.message()))
    })?;
    let text =
        derived.files.get("core.md").cloned().flatten().map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
    let rendered = text.zip(derived.core_report);
    if args.json {
        let value = match &rendered {
            Some((text, report)) => json!({"master": true, "text": text, "report": report.to_json()}),
            None => json!({"master": false, "text": null, "report": null}),
        };
        print_json(&value)?;
        return Ok(Outcome::Clean);
    }
    match rendered {
        Some((text, report)) => print(&format!("{text}\n--- core.md report: {}", describe_report(&report)))?,
        None => print("no topics/core.md: nothing to render\n")?,
    }
    Ok(Outcome::Clean)
}
