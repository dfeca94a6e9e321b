//! The `history` section of `check`: sources are append-only against history. Every
//! archive the last history commit holds must still start with its committed bytes; one
//! changed in place (or removed) is `TXN_SOURCE_REWRITTEN`. The comparison is the
//! transaction's (`History::rewritten_sources`); this module only reports it. Left out
//! of the report where the workspace has no history.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use scriptorium_backend_api::layers::transaction::{ErrorCode, History, RewrittenSource};

use crate::check::Section;

/// The history section: the rewritten archives, or why history could not be read.
#[derive(Debug)]
pub(crate) enum RewrittenSourcesSection {
    /// The workspace has no `.git/`: nothing to compare against.
    NoHistory,
    /// The committed archives that no longer start with their committed bytes.
    Checked(Vec<RewrittenSource>),
    /// History could not be read: the code and message.
    Unreadable(&'static str, String),
}

impl RewrittenSourcesSection {
    /// Compare the archives of the workspace at `root` with its history. Reads only.
    pub(crate) fn scan(root: &Path) -> Self {
        match History::open_existing(root).and_then(|history| history.map(|h| h.rewritten_sources()).transpose()) {
            Ok(None) => RewrittenSourcesSection::NoHistory,
            Ok(Some(rewritten)) => RewrittenSourcesSection::Checked(rewritten),
            Err(error) => RewrittenSourcesSection::Unreadable(error.code().as_str(), error.message().to_owned()),
        }
    }
}

fn describe(source: &RewrittenSource) -> String {
    match &source.current {
        Some(_) => format!(
            "changed in place at byte {} of its {} committed bytes",
            source.first_difference,
            source.committed.len()
        ),
        None => format!("removed; history holds {} bytes", source.committed.len()),
    }
}

impl Section for RewrittenSourcesSection {
    fn name(&self) -> &'static str {
        "history"
    }

    fn applies(&self) -> bool {
        !matches!(self, RewrittenSourcesSection::NoHistory)
    }

    fn failed(&self) -> bool {
        match self {
            RewrittenSourcesSection::NoHistory => false,
            RewrittenSourcesSection::Checked(rewritten) => !rewritten.is_empty(),
            RewrittenSourcesSection::Unreadable(..) => true,
        }
    }

    fn to_json(&self) -> Value {
        match self {
            RewrittenSourcesSection::NoHistory => json!({"ok": true, "rewritten_sources": []}),
            RewrittenSourcesSection::Checked(rewritten) => {
                let list: Vec<Value> = rewritten
                    .iter()
                    .map(|s| {
                        json!({
                            "path": s.path,
                            "code": ErrorCode::SourceRewritten.as_str(),
                            "committed_bytes": s.committed.len(),
                            "current_bytes": s.current.as_ref().map(Vec::len),
                            "first_difference": s.first_difference,
                        })
                    })
                    .collect();
                json!({"ok": rewritten.is_empty(), "rewritten_sources": list})
            }
            RewrittenSourcesSection::Unreadable(code, message) => {
                json!({"ok": false, "code": code, "message": message})
            }
        }
    }

    fn to_human(&self) -> String {
        let mut out = String::new();
        match self {
            RewrittenSourcesSection::NoHistory => {}
            RewrittenSourcesSection::Checked(rewritten) if rewritten.is_empty() => {
                out.push_str("  every committed source archive still starts with its committed bytes\n");
            }
            RewrittenSourcesSection::Checked(rewritten) => {
                for source in rewritten {
                    let _ = writeln!(
                        out,
                        "  {}: {} {}",
                        source.path,
                        ErrorCode::SourceRewritten.as_str(),
                        describe(source)
                    );
                }
                out.push_str(
                    "  `scriptorium check --repair` restores them from history (altered bytes to the quarantine)\n",
                );
            }
            RewrittenSourcesSection::Unreadable(code, message) => {
                let _ = writeln!(out, "  cannot read history: {code} {message}");
            }
        }
        out
    }
}
