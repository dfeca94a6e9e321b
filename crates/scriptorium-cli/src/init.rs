//! `scriptorium init`: create an empty workspace through the transaction layer's
//! `Workspace::open` (`topics/`, `sources/`, the runtime directory and its workspace id).
//! Git history is not created here: it starts with the first installed edit.

use scriptorium_backend_api::layers::transaction::Workspace;

use crate::Outcome;
use crate::cli::InitArgs;
use crate::error::{CliError, CliErrorCode};
use crate::output::print;

/// Run `init`.
pub(crate) fn run(args: &InitArgs) -> Result<Outcome, CliError> {
    let (root, origin) = crate::workspace::resolve(args.workspace.as_deref())?;
    let existed = root.join("topics").is_dir() || root.join("sources").is_dir();
    let workspace = Workspace::open(&root).map_err(|error| {
        CliError::new(
            CliErrorCode::InitFailed,
            format!("{} (from {origin}): cannot create the workspace: {error}", root.display()),
        )
    })?;
    if args.json {
        let value = serde_json::json!({
            "ok": true, "workspace": root.display().to_string(),
            "workspace_id": workspace.workspace_id(), "created": !existed,
        });
        crate::output::print_json(&value)?;
        return Ok(Outcome::Clean);
    }
    let verb = if existed { "already a workspace" } else { "initialized an empty workspace" };
    print(&format!("{verb}: {} ({})\n", root.display(), workspace.workspace_id()))?;
    Ok(Outcome::Clean)
}
