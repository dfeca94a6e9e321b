//! `scriptorium check`: a read-only health report of a workspace, made of sections.
//!
//! Each [`Section`] checks one part of the workspace and renders itself for humans and
//! as JSON: `listing` (entries left out of memory, as warnings; shown only when there
//! are some), `archives` (every source archive scanned), `topics` (every topic file
//! and citation validated against those archives) and `views` (derived views compared
//! with a fresh build, `VIEWS_DRIFT`; left out where no view was ever built) and `history`
//! (committed archives changed in place, `TXN_SOURCE_REWRITTEN`; left out where there is
//! no history). The check fails when any section does.

use serde_json::{Map, Value};

use crate::Outcome;
use crate::archives::ArchivesSection;
use crate::cli::CheckArgs;
use crate::drift::ViewsSection;
use crate::error::CliError;
use crate::listing::{ListingSection, WorkspaceListing};
use crate::output::{print, print_json};
use crate::rewritten_sources::RewrittenSourcesSection;
use crate::topics::TopicsSection;
use crate::workspace::Workspace;

/// One part of the check report.
pub(crate) trait Section {
    /// The section's key in the JSON report and its title for humans.
    fn name(&self) -> &'static str;
    /// Whether the section has anything to say about this workspace; a section that
    /// does not apply is left out of both reports.
    fn applies(&self) -> bool {
        true
    }
    /// Whether the section found a problem that fails the check (exit status 1).
    fn failed(&self) -> bool;
    /// The section as a JSON object (it always carries `"ok"`).
    fn to_json(&self) -> Value;
    /// The section for humans: lines ending in LF, without the title.
    fn to_human(&self) -> String;
}

/// Run `check`.
pub(crate) fn run(args: &CheckArgs) -> Result<Outcome, CliError> {
    let workspace = Workspace::locate(args.workspace.as_deref())?;
    if args.repair {
        if let Some(outcome) = crate::transaction::repair(&workspace.root)? {
            return Ok(outcome);
        }
        match crate::drift::repair(&workspace.root)? {
            Ok(rebuilt) if rebuilt.is_empty() => {}
            Ok(rebuilt) => eprintln!("repair: rebuilt derived views: {}", rebuilt.join(", ")),
            Err(error) => {
                // One line, as for every refused transaction; the check below still runs.
                let message = error.to_string();
                let message = message.strip_prefix(&format!("{}: ", error.code())).unwrap_or(&message);
                eprintln!("error[{}]: rebuilding derived views: {}", error.code(), one_line(message));
            }
        }
    }
    let listing = WorkspaceListing::read(&workspace.root);
    let mut sections: Vec<Box<dyn Section>> = vec![
        Box::new(ListingSection::scan(&listing)),
        Box::new(ArchivesSection::scan(&listing)),
        Box::new(TopicsSection::scan(&workspace.root, &listing)),
        Box::new(ViewsSection::scan(&workspace.root)),
        Box::new(RewrittenSourcesSection::scan(&workspace.root)),
    ];
    sections.retain(|section| section.applies());
    let failed = sections.iter().any(|s| s.failed());
    if args.json {
        let mut report = Map::new();
        report.insert("workspace".to_owned(), Value::String(workspace.root.display().to_string()));
        report.insert("ok".to_owned(), Value::Bool(!failed));
        for section in &sections {
            report.insert(section.name().to_owned(), section.to_json());
        }
        print_json(&Value::Object(report))?;
    } else {
        let mut out = format!("workspace: {}\n", workspace.root.display());
        for section in &sections {
            let verdict = if section.failed() { "FAILED" } else { "ok" };
            out.push_str(&format!("\n{}: {verdict}\n", section.name()));
            out.push_str(&section.to_human());
        }
        out.push_str(if failed { "\ncheck failed\n" } else { "\ncheck passed\n" });
        print(&out)?;
    }
    Ok(if failed { Outcome::Findings } else { Outcome::Clean })
}

fn one_line(text: &str) -> String {
    text.chars().map(|c| if c == '\n' || c == '\r' { ' ' } else { c }).collect()
}
