//! The `topics` section of `check`: every topic file parsed strictly, every citation
//! resolved against the archives on disk, every violation reported with its stable
//! code and `file:line`.
//!
//! The validation is the transaction layer's [`validate_topics`], the checks an install
//! runs (the strict parse, block links, cited sources), so every violation reported here
//! is one an install would refuse. A hidden topic file (`topics/.git/x.md`, a name that
//! is not UTF-8) is `TOPIC_INVALID_PATH`: no reader lists it and no write may create it.
//! Any violation fails the check.

use std::cmp::Ordering;
use std::fmt::Write as _;
use std::path::Path;

use scriptorium_backend_api::layers::topic_markdown::{ErrorCode, SourceResolver, Unit, UnitKind, Violation};
use scriptorium_backend_api::layers::transaction::{FileClass, RealVfs, WorkspaceSources, validate_topics};
use serde_json::{Value, json};

use crate::check::Section;
use crate::error::{CliError, CliErrorCode};
use crate::listing::WorkspaceListing;
use crate::output::count;

/// The most violations the human report prints; the rest are counted (JSON lists all).
const MAX_PRINTED: usize = 200;

/// The topics section: per-file counts, tree totals and every finding.
#[derive(Debug)]
pub(crate) struct TopicsSection {
    /// The topic files read, in component-wise path order.
    files: Vec<FileSummary>,
    totals: Totals,
    /// Sorted by path (component-wise), then line; no two equal.
    findings: Vec<Finding>,
}

/// What one topic file holds.
#[derive(Debug)]
struct FileSummary {
    path: String,
    blocks: usize,
    citations: usize,
    violations: usize,
}

#[derive(Debug, Default)]
struct Totals {
    blocks: usize,
    aliases: usize,
    legacy_records: usize,
    citations: usize,
    cited_sources: usize,
    resolved_sources: usize,
}

/// One problem: a topic violation (`TOPIC_*`) or a file that could not be read (`CLI_*`).
#[derive(Debug, PartialEq, Eq)]
struct Finding {
    /// Workspace-relative path; empty for a rule about the whole tree.
    path: String,
    /// 1-based line, when the rule points at one.
    line: Option<u32>,
    code: &'static str,
    detail: String,
}

impl Finding {
    fn from_violation(v: &Violation) -> Self {
        Finding { path: v.file().to_owned(), line: v.line(), code: v.code().as_str(), detail: v.detail().to_owned() }
    }

    fn from_error(path: String, err: &CliError) -> Self {
        Finding { path, line: None, code: err.code().as_str(), detail: err.message().to_owned() }
    }
}

/// The order of the report: by path component-wise (`a/b.md` before `a-c.md`, as the
/// files are read), tree-wide rules last, then by line.
fn report_order(a: &Finding, b: &Finding) -> Ordering {
    (a.path.is_empty().cmp(&b.path.is_empty()))
        .then_with(|| a.path.split('/').cmp(b.path.split('/')))
        .then_with(|| a.line.cmp(&b.line))
}

impl TopicsSection {
    /// Read and validate every topic file of the listing. Reads only.
    pub(crate) fn scan(root: &Path, listing: &WorkspaceListing) -> Self {
        let (texts, mut findings) = read_topics(listing);
        let vfs = RealVfs::new(root);
        let sources = SourceResolver::new(WorkspaceSources::new(&vfs));
        let check = validate_topics(texts.iter().map(|(path, bytes)| (path, bytes)), &sources);
        let units = check.units;
        findings.extend(check.violations.iter().map(Finding::from_violation));
        findings.sort_by(report_order);
        // A paragraph that cites one undefined footnote twice is one problem, not two lines.
        findings.dedup();

        let mut files: Vec<FileSummary> =
            texts.into_iter().map(|(path, _)| FileSummary { path, blocks: 0, citations: 0, violations: 0 }).collect();
        let mut totals = Totals {
            cited_sources: check.cited_sources,
            resolved_sources: check.resolved_sources,
            ..Totals::default()
        };
        for unit in &units {
            match unit.kind {
                UnitKind::Block => totals.blocks += 1,
                UnitKind::Alias { .. } => totals.aliases += 1,
                UnitKind::Legacy => totals.legacy_records += 1,
                // A kind added later is still parsed and checked, just not counted here.
                _ => {}
            }
            totals.citations += citations(unit);
            if let Some(file) = summary_of(&mut files, &unit.path) {
                file.blocks += usize::from(unit.kind == UnitKind::Block);
                file.citations += citations(unit);
            }
        }
        for finding in &findings {
            if let Some(file) = summary_of(&mut files, &finding.path) {
                file.violations += 1;
            }
        }
        TopicsSection { files, totals, findings }
    }
}

/// The summary of the file at `path`; `files` is in listing (component-wise) order.
fn summary_of<'a>(files: &'a mut [FileSummary], path: &str) -> Option<&'a mut FileSummary> {
    let i = files.binary_search_by(|f| f.path.split('/').cmp(path.split('/'))).ok()?;
    files.get_mut(i)
}

/// The bytes of every topic file, in listing order, and a finding for each file or
/// directory that could not be read, and for each hidden topic file.
fn read_topics(listing: &WorkspaceListing) -> (Vec<(String, Vec<u8>)>, Vec<Finding>) {
    let listed = listing.files(FileClass::Topic);
    let mut texts = Vec::with_capacity(listed.len());
    let mut findings = Vec::new();
    for file in listing.hidden("topics") {
        let detail = format!("hidden topic path (a component starts with '.' or is not UTF-8): {}", file.relative);
        findings.push(Finding::from_violation(&Violation::new(ErrorCode::InvalidPath, &file.relative, None, detail)));
    }
    for file in listed {
        match std::fs::read(&file.path) {
            Ok(bytes) => texts.push((file.relative, bytes)),
            Err(err) => findings.push(Finding::from_error(file.relative, &CliError::read(&file.path, &err))),
        }
    }
    for e in listing.unreadable("topics") {
        let err = CliError::new(CliErrorCode::ReadFailed, format!("cannot list directory: {}", e.error));
        findings.push(Finding::from_error(e.path.clone(), &err));
    }
    (texts, findings)
}

/// Citations a unit contributes: one per `[^id]` of a block, one per legacy record,
/// none for an alias (it repeats its block's).
fn citations(unit: &Unit) -> usize {
    match unit.kind {
        UnitKind::Block => unit.evidence.len(),
        UnitKind::Legacy => 1,
        _ => 0,
    }
}

impl Section for TopicsSection {
    fn name(&self) -> &'static str {
        "topics"
    }

    fn failed(&self) -> bool {
        !self.findings.is_empty()
    }

    fn to_json(&self) -> Value {
        let files: Vec<Value> = self
            .files
            .iter()
            .map(
                |f| json!({ "path": f.path, "blocks": f.blocks, "citations": f.citations, "violations": f.violations }),
            )
            .collect();
        let violations: Vec<Value> = self
            .findings
            .iter()
            .map(|f| json!({ "path": f.path, "line": f.line, "code": f.code, "detail": f.detail }))
            .collect();
        let t = &self.totals;
        json!({
            "ok": !self.failed(),
            "blocks": t.blocks,
            "aliases": t.aliases,
            "legacy_records": t.legacy_records,
            "citations": t.citations,
            "cited_sources": t.cited_sources,
            "resolved_sources": t.resolved_sources,
            "files": files,
            "violations": violations,
        })
    }

    fn to_human(&self) -> String {
        let mut out = String::new();
        if self.files.is_empty() && self.findings.is_empty() {
            out.push_str("  no topic files under topics/\n");
        }
        for f in self.findings.iter().take(MAX_PRINTED) {
            let _ = match (f.path.is_empty(), f.line) {
                (true, _) => writeln!(out, "  {} {}", f.code, f.detail),
                (false, None) => writeln!(out, "  {}: {} {}", f.path, f.code, f.detail),
                (false, Some(line)) => writeln!(out, "  {}:{line}: {} {}", f.path, f.code, f.detail),
            };
        }
        if self.findings.len() > MAX_PRINTED {
            let _ = writeln!(
                out,
                "  … and {} more violations (`check --json` lists them all)",
                self.findings.len() - MAX_PRINTED
            );
        }
        let t = &self.totals;
        let _ = write!(
            out,
            "  {}, {}, {}, {} of {} resolved",
            count(self.files.len(), "topic file", "topic files"),
            count(t.blocks, "block", "blocks"),
            count(t.citations, "citation", "citations"),
            t.resolved_sources,
            count(t.cited_sources, "cited source", "cited sources"),
        );
        if t.legacy_records > 0 {
            let _ = write!(out, ", {}", count(t.legacy_records, "legacy record", "legacy records"));
        }
        let _ = writeln!(out, ": {}", count(self.findings.len(), "violation", "violations"));
        out
    }
}
