//! [`Workspace::snapshot`]: one consistent read of the workspace — every topic and
//! source file read once under the write lock, the topics parsed leniently, each claim's
//! trust resolved, and the revision those bytes hash to.

use std::collections::BTreeMap;

use scriptorium_archive_format::TrustState;
use scriptorium_topic_markdown::{MemorySources, Mode, SourceLookup, SourceResolver, Unit, Violation, parse_tree};

use crate::error::Error;
use crate::lock::{INTERACTIVE_LOCK_TIMEOUT, WriteLock};
use crate::update::read_tree;
use crate::workspace::Workspace;

/// A claim (topic unit) with its resolved trust.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Claim {
    /// The parsed unit.
    pub unit: Unit,
    /// Whether it cites at least one source and every source it cites resolves and is
    /// trusted; a claim citing any pending or unresolvable source is pending.
    pub trusted: bool,
}

/// One consistent read of a workspace.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Snapshot {
    /// The revision of exactly these bytes.
    pub revision: String,
    /// Every topic file (`topics/**.md`), path → bytes.
    pub topics: BTreeMap<String, Vec<u8>>,
    /// Every file under `sources/`, path → bytes.
    pub sources: BTreeMap<String, Vec<u8>>,
    /// Every claim, in file and line order, with its trust.
    pub claims: Vec<Claim>,
    /// What the lenient parse of the topics found wrong.
    pub violations: Vec<Violation>,
}

impl Workspace {
    /// Read the workspace once, under the write lock (so no install lands halfway
    /// through the read), and resolve every claim's trust.
    pub fn snapshot(&self) -> Result<Snapshot, Error> {
        let lock = self.lock(INTERACTIVE_LOCK_TIMEOUT)?;
        self.snapshot_locked(&lock)
    }

    /// [`Workspace::snapshot`] under a write lock the caller already holds (a backfill
    /// keeps one lock across its batches).
    pub fn snapshot_locked(&self, lock: &WriteLock) -> Result<Snapshot, Error> {
        self.recover(lock)?;
        let revision = self.revision()?;
        let mut topics = read_tree(self.vfs(), "topics")?;
        topics.retain(|path, _| path.ends_with(".md"));
        let sources = read_tree(self.vfs(), "sources")?;

        let resolver =
            SourceResolver::new(sources.iter().map(|(p, b)| (p.clone(), b.clone())).collect::<MemorySources>());
        let (_, units, violations) = parse_tree(&topics, &resolver, Mode::Lenient).into_parts();
        let claims = units
            .into_iter()
            .map(|unit| {
                let trusted =
                    !unit.source_refs.is_empty() && unit.source_refs.iter().all(|id| is_trusted(&resolver, id));
                Claim { unit, trusted }
            })
            .collect();
        Ok(Snapshot { revision, topics, sources, claims, violations })
    }
}

/// A v2 frame must be trusted; any other source (legacy, benchmark) must exist.
fn is_trusted<L: SourceLookup>(resolver: &SourceResolver<L>, id: &str) -> bool {
    match resolver.trust(id) {
        Ok(Some(TrustState::Trusted)) => true,
        Ok(Some(_)) | Err(_) => false,
        Ok(None) => resolver.exists(id).unwrap_or(false),
    }
}
