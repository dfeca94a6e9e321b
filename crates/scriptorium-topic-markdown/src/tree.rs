//! Parse a whole topic tree into units, collecting every violation (spec 01 §6.3–§6.7).

use crate::definition::Definition;
use crate::document::{Paragraph, TopicDocument};
use crate::error::{ErrorCode, Violation, Violations};
use crate::hash::{FastMap, FastSet};
use crate::paths::{component_cmp, is_topic_path, topic_relative};
use crate::source::{SourceLookup, SourceResolver};
use crate::syntax::block_links;
use crate::text::{collapse_whitespace, is_blank};
use crate::unit::{Evidence, Unit, UnitKind};

/// How strictly to parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Mode {
    /// Every rule: also unused definitions, prose after the last citation, blocks
    /// without citation and paragraphs without block id.
    Strict,
    /// What readers need: structural errors only; the four strict-only rules are
    /// skipped and their paragraphs still yield what units they can.
    Lenient,
}

/// A parsed topic tree: documents in component-wise path order, units in parse order,
/// and every violation found.
#[derive(Clone, Debug)]
#[must_use = "a parsed tree may hold violations: call `check` or read `violations`"]
pub struct ParsedTree {
    documents: Vec<TopicDocument>,
    units: Vec<Unit>,
    violations: Vec<Violation>,
}

impl ParsedTree {
    /// The documents, in component-wise path order.
    pub fn documents(&self) -> &[TopicDocument] {
        &self.documents
    }

    /// The units, in parse order (files sorted, paragraphs in order, run ids left to right).
    pub fn units(&self) -> &[Unit] {
        &self.units
    }

    /// Every violation, in discovery order.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// The units when there is no violation, else all violations.
    pub fn check(self) -> Result<Vec<Unit>, Violations> {
        if self.violations.is_empty() { Ok(self.units) } else { Err(Violations::new(self.violations)) }
    }

    /// Split into documents, units and violations.
    pub fn into_parts(self) -> (Vec<TopicDocument>, Vec<Unit>, Vec<Violation>) {
        (self.documents, self.units, self.violations)
    }
}

/// Parse topic files (workspace-relative `topics/**.md` path → bytes), resolving
/// citations through `sources`.
pub fn parse_tree<'f, L, I, P, B>(files: I, sources: &SourceResolver<L>, mode: Mode) -> ParsedTree
where
    L: SourceLookup,
    I: IntoIterator<Item = (&'f P, &'f B)>,
    P: AsRef<str> + ?Sized + 'f,
    B: AsRef<[u8]> + ?Sized + 'f,
{
    let mut violations = Vec::new();
    let mut documents = Vec::new();
    for (path, bytes) in files {
        let path = path.as_ref();
        if !is_topic_path(path) {
            violations.push(Violation::new(ErrorCode::InvalidPath, path, None, format!("not a topic path: {path}")));
            continue;
        }
        match TopicDocument::parse(path, bytes.as_ref()) {
            Ok(document) => documents.push(document),
            Err(violation) => violations.push(violation),
        }
    }
    let mut parsed = parse_documents(documents, sources, mode);
    violations.append(&mut parsed.violations);
    parsed.violations = violations;
    parsed
}

/// Parse already-split documents (sorted here) into units.
pub fn parse_documents<L: SourceLookup>(
    mut documents: Vec<TopicDocument>,
    sources: &SourceResolver<L>,
    mode: Mode,
) -> ParsedTree {
    documents.sort_by(|a, b| component_cmp(a.path(), b.path()));
    // One unit per block id and alias (legacy records aside): sized once, as a 20,000
    // block tree would otherwise regrow and copy megabytes of units.
    let expected: usize = documents.iter().flat_map(|d| d.paragraphs()).map(|(_, p)| p.ids.len()).sum();
    let mut builder = Builder {
        sources,
        mode,
        units: Vec::with_capacity(expected),
        seen: FastSet::with_capacity_and_hasher(expected, Default::default()),
        violations: Vec::new(),
    };
    for document in &documents {
        builder.document(document);
    }
    let Builder { units, violations, .. } = builder;
    ParsedTree { documents, units, violations }
}

/// A definition with its link targets resolved (`None` where a target did not resolve).
pub(crate) struct Resolved<'d> {
    pub(crate) definition: &'d Definition,
    pub(crate) refs: Vec<Option<String>>,
}

/// Resolve every definition of a document, first definition of an id winning.
/// Pushes definition-level violations when `violations` is given.
pub(crate) fn resolve_definitions<'d, L: SourceLookup>(
    document: &'d TopicDocument,
    sources: &SourceResolver<L>,
    mut violations: Option<&mut Vec<Violation>>,
    last_wins: bool,
) -> FastMap<&'d str, Resolved<'d>> {
    let path = document.path();
    let mut map: FastMap<&str, Resolved<'_>> = FastMap::default();
    for (item, definition) in document.definitions() {
        let line = Some(item.line_number());
        let mut push = |code, detail: String| {
            if let Some(list) = violations.as_deref_mut() {
                list.push(Violation::new(code, path, line, detail));
            }
        };
        let duplicate = map.contains_key(definition.id.as_str());
        if duplicate {
            push(ErrorCode::DuplicateFootnote, format!("duplicate footnote definition: {}", definition.id));
        }
        if !definition.time.is_valid() {
            push(ErrorCode::InvalidDate, format!("invalid evidence date: {}", definition.time.as_str()));
        }
        if definition.links.is_empty() {
            push(ErrorCode::MissingSourceLinks, format!("memory source links required: {}", definition.id));
        } else if definition.links.iter().any(|link| is_blank(&link.label)) {
            push(ErrorCode::EmptySourceLabel, format!("memory source labels required: {}", definition.id));
        }
        let mut refs = Vec::with_capacity(definition.links.len());
        for link in &definition.links {
            match sources.resolve_target(path, &link.target) {
                Ok(Some(id)) => refs.push(Some(id)),
                Ok(None) => {
                    push(ErrorCode::InvalidSourceTarget, format!("invalid source target: {}", link.target));
                    refs.push(None);
                }
                Err(e) => {
                    push(ErrorCode::SourceReadFailed, e.to_string());
                    refs.push(None);
                }
            }
        }
        if !duplicate || last_wins {
            map.insert(definition.id.as_str(), Resolved { definition, refs });
        }
    }
    map
}

struct Builder<'s, 'd, L> {
    sources: &'s SourceResolver<L>,
    mode: Mode,
    units: Vec<Unit>,
    /// Unit ids so far, borrowed from the documents (which outlive the builder).
    seen: FastSet<&'d str>,
    violations: Vec<Violation>,
}

impl<'d, L: SourceLookup> Builder<'_, 'd, L> {
    fn document(&mut self, document: &'d TopicDocument) {
        let path = document.path();
        let strict = self.mode == Mode::Strict;
        let definitions = resolve_definitions(document, self.sources, Some(&mut self.violations), false);
        let mut used: FastSet<&str> = FastSet::default();
        for (item, paragraph) in document.paragraphs() {
            let line = item.line_number();
            used.extend(paragraph.cited());
            if let Some(token) = &paragraph.invalid_id {
                self.violate(ErrorCode::InvalidBlockId, path, line, format!("invalid block_id: {token}"));
            } else if paragraph.ids.is_empty() {
                self.legacy(path, line, paragraph, &definitions, strict);
            } else {
                self.block(path, line, paragraph, &definitions, strict);
            }
        }
        if strict {
            for (item, definition) in document.definitions() {
                if !used.contains(definition.id.as_str()) {
                    let detail = format!("unused footnote definition: {}", definition.id);
                    self.violate(ErrorCode::UnusedFootnote, path, item.line_number(), detail);
                }
            }
        }
    }

    fn violate(&mut self, code: ErrorCode, path: &str, line: usize, detail: String) {
        self.violations.push(Violation::new(code, path, Some(line), detail));
    }

    fn block(
        &mut self,
        path: &str,
        line: usize,
        paragraph: &'d Paragraph,
        definitions: &FastMap<&str, Resolved<'_>>,
        strict: bool,
    ) {
        let block_id = paragraph.block_id().unwrap_or_default();
        let mut evidence = Vec::new();
        for claim in &paragraph.claims {
            if claim.quote().is_empty() {
                let first = claim.citations.first().map(String::as_str).unwrap_or_default();
                self.violate(ErrorCode::MissingContent, path, line, format!("missing memory content before {first}"));
            }
            for citation in &claim.citations {
                match definitions.get(citation.as_str()) {
                    Some(resolved) => evidence.push(annotation(citation, claim.quote(), resolved)),
                    None => self.violate(
                        ErrorCode::UndefinedFootnote,
                        path,
                        line,
                        format!("undefined footnote: {citation}"),
                    ),
                }
            }
        }
        if strict && paragraph.claims.is_empty() {
            let detail = format!("memory source footnote required: {block_id}");
            self.violate(ErrorCode::MissingCitation, path, line, detail);
        }
        if strict && !paragraph.claims.is_empty() && !is_blank(&paragraph.tail) {
            let detail = format!("content after final evidence: {block_id}");
            self.violate(ErrorCode::ContentAfterEvidence, path, line, detail);
        }
        let content = paragraph.content();
        let relation_targets = relation_targets(&content);
        let when = evidence.iter().find_map(|e: &Evidence| e.when.clone());
        let (source_refs, source_labels, source_links) = union_sources(&evidence);
        let unit = Unit {
            memory_id: block_id.to_owned(),
            kind: UnitKind::Block,
            path: path.to_owned(),
            line,
            headings: paragraph.headings.clone(),
            content,
            evidence,
            source_refs,
            source_labels,
            source_links,
            relation_targets,
            when,
            // The paragraph's creation order, shared by every alias and the block.
            created_order: self.units.len(),
        };
        // Aliases come first, in run order; they share everything but their id.
        for alias in paragraph.ids.iter().take(paragraph.ids.len().saturating_sub(1)) {
            let kind = UnitKind::Alias { of: block_id.to_owned() };
            self.push_ordered(alias, Unit { memory_id: alias.clone(), kind, ..unit.clone() });
        }
        self.push_ordered(block_id, unit);
    }

    fn legacy(
        &mut self,
        path: &str,
        line: usize,
        paragraph: &'d Paragraph,
        definitions: &FastMap<&str, Resolved<'_>>,
        strict: bool,
    ) {
        let mut found = false;
        for claim in &paragraph.claims {
            for citation in claim.citations.iter().filter(|c| c.starts_with("mem_")) {
                found = true;
                if claim.quote().is_empty() {
                    let detail = format!("missing memory content before {citation}");
                    self.violate(ErrorCode::MissingContent, path, line, detail);
                }
                let Some(resolved) = definitions.get(citation.as_str()) else {
                    self.violate(ErrorCode::UndefinedFootnote, path, line, format!("undefined footnote: {citation}"));
                    continue;
                };
                let source = annotation(citation, claim.quote(), resolved);
                self.push(
                    citation,
                    Unit {
                        memory_id: citation.clone(),
                        kind: UnitKind::Legacy,
                        path: path.to_owned(),
                        line,
                        headings: paragraph.headings.clone(),
                        content: claim.quote().to_owned(),
                        evidence: Vec::new(),
                        relation_targets: relation_targets(claim.quote()),
                        when: source.when,
                        source_refs: source.source_refs,
                        source_labels: source.source_labels,
                        source_links: source.source_links,
                        created_order: 0,
                    },
                );
            }
        }
        if strict && !found {
            let code = if paragraph.claims.is_empty() { ErrorCode::UncitedText } else { ErrorCode::MissingBlockId };
            self.violate(code, path, line, format!("memory block ID required: {}", topic_relative(path)));
        }
    }

    /// Add a unit whose `memory_id` is `id`, unless the id is taken; its creation order
    /// is its position.
    fn push(&mut self, id: &'d str, mut unit: Unit) {
        unit.created_order = self.units.len();
        self.push_ordered(id, unit);
    }

    /// [`Self::push`], keeping the creation order the unit already carries.
    fn push_ordered(&mut self, id: &'d str, unit: Unit) {
        if !self.seen.insert(id) {
            let detail = format!("duplicate memory_id: {}", unit.memory_id);
            self.violations.push(Violation::new(ErrorCode::DuplicateBlockId, &unit.path, Some(unit.line), detail));
            return;
        }
        self.units.push(unit);
    }
}

/// One evidence annotation from a resolved definition (unresolved links left out).
fn annotation(citation: &str, quote: &str, resolved: &Resolved<'_>) -> Evidence {
    let mut evidence = Evidence {
        citation_id: citation.to_owned(),
        quote: quote.to_owned(),
        when: resolved.definition.time.when().map(str::to_owned),
        source_refs: Vec::new(),
        source_labels: Vec::new(),
        source_links: Vec::new(),
    };
    for (link, id) in resolved.definition.links.iter().zip(&resolved.refs) {
        if let Some(id) = id {
            evidence.source_refs.push(id.clone());
            evidence.source_labels.push(link.label.clone());
            evidence.source_links.push(link.target.clone());
        }
    }
    evidence
}

/// The union of the evidence sources by id, keeping each id's first label and link.
fn union_sources(evidence: &[Evidence]) -> (Vec<String>, Vec<String>, Vec<String>) {
    let (mut refs, mut labels, mut links) = (Vec::new(), Vec::new(), Vec::new());
    for e in evidence {
        for ((id, label), link) in e.source_refs.iter().zip(&e.source_labels).zip(&e.source_links) {
            if !refs.contains(id) {
                refs.push(id.clone());
                labels.push(label.clone());
                links.push(link.clone());
            }
        }
    }
    (refs, labels, links)
}

/// Block ids linked from `content`, in order, without repeats.
pub(crate) fn relation_targets(content: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for link in block_links(content) {
        if !out.iter().any(|t| t == link.target) {
            out.push(link.target.to_owned());
        }
    }
    out
}

/// The prose of a tree: every paragraph's text without citations and block ids, its
/// whitespace collapsed to single spaces (Python `" ".join(text.split())`, as the
/// reference does), non-empty ones joined with LF, files in component-wise order.
pub fn topic_prose(documents: &[TopicDocument]) -> String {
    let mut sorted: Vec<&TopicDocument> = documents.iter().collect();
    sorted.sort_by(|a, b| component_cmp(a.path(), b.path()));
    let mut out = Vec::new();
    for document in sorted {
        for (_, paragraph) in document.paragraphs() {
            let content = collapse_whitespace(&paragraph.content());
            if !content.is_empty() {
                out.push(content);
            }
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests;
