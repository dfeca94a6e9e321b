//! `scriptorium show PATH[#^BLOCK | #source-…]`: a file as `memory_get` shows it (its
//! first 400 lines; an archive's record lines only), one block with the footnotes it
//! cites resolved to the source frames they name, or the one frame a source handle names.

use std::path::PathBuf;

use clap::Args;
use scriptorium_backend_api::inspect::{self, Citation, FrameView};
use serde_json::{Value, json};

use crate::Outcome;
use crate::error::CliError;
use crate::output::{print, print_json};
use crate::workspace::Workspace;

/// Arguments of `show`.
#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// A workspace-relative path (`topics/prefs.md`), a block (`topics/prefs.md#^0d9bb518`)
    /// or a source frame (`sources/openprogram/_v2/sess-7f2a.md#source-382c7493ef6b9537`).
    #[arg(value_name = "PATH[#^BLOCK]")]
    pub(crate) target: String,
    /// The workspace root (default as for `check`).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// Print `{ok, path, text, …}` as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Run `show`.
pub(crate) fn run(args: &ShowArgs) -> Result<Outcome, CliError> {
    let root = Workspace::locate(args.workspace.as_deref())?.root;
    let fail = |error: scriptorium_backend_api::Error| crate::facade::error(&error);
    match args.target.split_once('#') {
        Some((_, anchor)) if anchor.starts_with("source-") => {
            let frame = inspect::frame(&root, &args.target).map_err(fail)?;
            if args.json {
                let mut value = frame_json(&frame);
                value["ok"] = Value::Bool(true);
                print_json(&value)?;
            } else {
                print(&describe_frame(&frame, ""))?;
            }
        }
        Some((path, anchor)) => {
            let id = anchor.strip_prefix('^').unwrap_or(anchor);
            let text = inspect::get(&root, path, Some(id)).map_err(fail)?;
            let citations = inspect::cited_frames(&root, path, &text);
            if args.json {
                let cited: Vec<Value> = citations.iter().map(citation_json).collect();
                print_json(&json!({"ok": true, "path": path, "block_id": id, "text": text, "citations": cited}))?;
            } else {
                let mut out = format!("{text}\n");
                for citation in &citations {
                    out.push_str(&describe_citation(citation));
                }
                print(&out)?;
            }
        }
        None => {
            let text = inspect::get(&root, &args.target, None).map_err(fail)?;
            if args.json {
                print_json(&json!({"ok": true, "path": args.target, "text": text}))?;
            } else {
                print(&format!("{text}\n"))?;
            }
        }
    }
    Ok(Outcome::Clean)
}

fn frame_json(frame: &FrameView) -> Value {
    json!({
        "path": frame.path, "anchor": frame.anchor, "source_id": frame.source_id,
        "speaker_id": frame.speaker_id, "trust_state": frame.trust_state, "legacy": frame.legacy,
        "authority_tier": frame.authority_tier, "text": frame.text,
    })
}

fn citation_json(citation: &Citation) -> Value {
    let mut value = json!({"footnote": citation.footnote, "target": citation.target});
    match &citation.frame {
        Ok(frame) => value["frame"] = frame_json(frame),
        Err(error) => value["error"] = json!({"code": error.code().as_str(), "message": error.message()}),
    }
    value
}

/// `source <id> (<trust>[, speaker …][, tier …])`, its handle, then the record indented.
fn describe_frame(frame: &FrameView, indent: &str) -> String {
    let mut facts = vec![frame.trust_state.to_owned()];
    if frame.legacy {
        facts.push("legacy record, speaker not verified".to_owned());
    }
    if let Some(speaker) = frame.speaker_id.as_deref().filter(|speaker| !speaker.is_empty()) {
        facts.push(format!("speaker {speaker}"));
    }
    if let Some(tier) = frame.authority_tier {
        facts.push(format!("authority {tier}"));
    }
    let mut out = format!("{indent}source {} ({})\n", frame.source_id, facts.join(", "));
    out.push_str(&format!("{indent}  {}#{}\n", frame.path, frame.anchor));
    for line in frame.text.lines() {
        out.push_str(&format!("{indent}  | {line}\n"));
    }
    out
}

fn describe_citation(citation: &Citation) -> String {
    let head = format!("\n[^{}] {}\n", citation.footnote, citation.target);
    match &citation.frame {
        Ok(frame) => head + &describe_frame(frame, "  "),
        Err(error) => head + &format!("  unresolved: {}: {}\n", error.code().as_str(), error.message()),
    }
}
