//! Units: what the layers above read from topics (one per block id, alias or legacy
//! `mem_` record), with their evidence annotations.

/// One citation of a block: the claim it supports and where its sources are.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Evidence {
    /// The footnote id cited.
    pub citation_id: String,
    /// The prose of the claim (stripped text before the citation group).
    pub quote: String,
    /// The evidence time, `None` when `undated`.
    pub when: Option<String>,
    /// The source ids, one per definition link, in order.
    pub source_refs: Vec<String>,
    /// The link labels, aligned with `source_refs`.
    pub source_labels: Vec<String>,
    /// The link targets as written, aligned with `source_refs`.
    pub source_links: Vec<String>,
}

/// Which syntax a unit came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UnitKind {
    /// The identity of a block (the last id of its run).
    Block,
    /// An earlier id of a block's run, left by a merge; content equals the block's.
    Alias {
        /// The block's identity.
        of: String,
    },
    /// A legacy `text[^mem_x]` record inside a paragraph without block id.
    Legacy,
}

/// A parsed memory unit.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Unit {
    /// The block id, alias or `mem_` id.
    pub memory_id: String,
    /// Which syntax it came from.
    pub kind: UnitKind,
    /// The workspace-relative topic file (`topics/…`).
    pub path: String,
    /// The 1-based line where its paragraph starts.
    pub line: usize,
    /// The heading path of its paragraph.
    pub headings: Vec<String>,
    /// The prose with citations (and the block-id run) removed, stripped.
    pub content: String,
    /// One annotation per citation (empty for legacy units).
    pub evidence: Vec<Evidence>,
    /// The union of the cited source ids, in first-seen order.
    pub source_refs: Vec<String>,
    /// The label of each of `source_refs` where it was first seen.
    pub source_labels: Vec<String>,
    /// The link target of each of `source_refs` where it was first seen.
    pub source_links: Vec<String>,
    /// Block ids this unit links to (`[…](…#^id)`), in order, without repeats.
    pub relation_targets: Vec<String>,
    /// The first dated evidence time (legacy: the definition's time).
    pub when: Option<String>,
    /// The unit's position in the parse order of the whole tree; every alias of a block
    /// carries the block paragraph's order (the position of its first unit).
    pub created_order: usize,
}

impl Unit {
    /// The topic path relative to `topics/`, as the reference reports `topic_path`.
    pub fn topic_path(&self) -> &str {
        crate::paths::topic_relative(&self.path)
    }

    /// Every distinct non-`undated` evidence time, in order (a timeline's `whens`).
    pub fn whens(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for when in self.evidence.iter().filter_map(|e| e.when.as_deref()) {
            if !out.contains(&when) {
                out.push(when);
            }
        }
        out
    }
}
