//! A seeded topic workspace for the topic benchmarks (spec 03 §B5): topic files in
//! normal form whose footnotes cite frames of canonical v2 archives made by the real
//! writer, so a strict parse finds no violation and normalizing changes nothing.
//!
//! Each file has a title, `##`/`###` sections, paragraphs of English or Chinese prose
//! with one to three citation groups (one or two footnotes each), the odd two-line
//! paragraph, merge aliases (`^old ^id`), and block links to earlier blocks of other
//! files. Definitions close the file, each cited once, with one or two source links.

use std::collections::{BTreeMap, BTreeSet};

use scriptorium_archive_format::{source_anchor, v2_location};

use crate::{ArchiveSet, CHINESE, ENGLISH, SplitMix64, archive_set};

const AREAS: &[&str] = &["people", "projects", "infra", "home"];

/// A generated workspace: topic files and the archives they cite.
#[derive(Clone, Debug)]
pub struct TopicWorkspace {
    /// Topic files, workspace-relative path (`topics/<area>/<name>.md`) → bytes.
    pub topics: BTreeMap<String, Vec<u8>>,
    /// The source archives (`sources/openprogram/_v2/<thread>.md`).
    pub sources: ArchiveSet,
    /// How many blocks (block ids, aliases not counted) the topics hold.
    pub blocks: usize,
}

impl TopicWorkspace {
    /// Write every archive and topic file under `dir` (created as needed).
    pub fn write_to(&self, dir: &std::path::Path) -> std::io::Result<()> {
        let files = self.sources.files.iter().map(|f| (&f.path, &f.bytes)).chain(self.topics.iter());
        for (path, bytes) in files {
            let path = dir.join(path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, bytes)?;
        }
        Ok(())
    }

    /// The total size of the topic files in bytes.
    pub fn topic_bytes(&self) -> usize {
        self.topics.values().map(Vec::len).sum()
    }
}

/// A fresh, unused id of `len` lowercase hex digits.
fn fresh_hex(rng: &mut SplitMix64, len: usize, used: &mut BTreeSet<String>) -> String {
    loop {
        let id: String = format!("{:016x}", rng.next_u64()).chars().take(len).collect();
        if used.insert(id.clone()) {
            return id;
        }
    }
}

fn sentence(rng: &mut SplitMix64, out: &mut String) {
    let words = 4 + rng.below(14);
    if rng.chance(35) {
        for _ in 0..words {
            out.push_str(rng.pick(CHINESE));
        }
    } else {
        for w in 0..words {
            if w > 0 {
                out.push(' ');
            }
            out.push_str(rng.pick(ENGLISH));
        }
        out.push('.');
    }
}

fn when(rng: &mut SplitMix64) -> String {
    match rng.below(10) {
        0 => "undated".to_owned(),
        1 => format!("2026-{:02}", 1 + rng.below(12)),
        2 => "2025".to_owned(),
        _ => format!("2026-{:02}-{:02}", 1 + rng.below(12), 1 + rng.below(28)),
    }
}

/// The seed of ws-10k, the commit bench's 10,000-topic workspace.
pub const WS10K_SEED: u64 = 0xc0_3317_be4c_0001;

/// ws-10k written once under `root/ws-10k` (a marker file says it is complete) and
/// opened once as a workspace; returns its directory.
pub fn ws10k_on_disk(root: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
    let dir = root.join("ws-10k");
    let marker = root.join("ws-10k.complete");
    if !marker.exists() {
        let _ = std::fs::remove_dir_all(&dir);
        topic_workspace(WS10K_SEED, 10_000, 3).write_to(&dir)?;
        scriptorium_transaction::Workspace::open(&dir).map_err(std::io::Error::other)?;
        std::fs::write(&marker, b"")?;
    }
    Ok(dir)
}

/// Generate `files` topic files of `blocks_per_file` blocks each, citing a seeded set of
/// archives (about 64 KiB of archive per 1,000 blocks, at least 1 MiB).
pub fn topic_workspace(seed: u64, files: usize, blocks_per_file: usize) -> TopicWorkspace {
    let blocks = files * blocks_per_file;
    topic_workspace_sized(seed, &vec![blocks_per_file; files], (blocks * 64).max(1 << 20), 0)
}

/// Generate one topic file per entry of `blocks`, of that many blocks, citing about
/// `archive_bytes` of seeded archives (for a workspace of one huge file and a few
/// small ones, as the large-file bench does).
///
/// `shared_footnotes` 0 gives the varied blocks above; `n > 0` gives lean blocks (one
/// sentence, one citation of one of the file's first `n` footnotes, about 90 bytes).
pub fn topic_workspace_sized(
    seed: u64,
    blocks: &[usize],
    archive_bytes: usize,
    shared_footnotes: usize,
) -> TopicWorkspace {
    let files = blocks.len();
    let total: usize = blocks.iter().sum();
    let sources = archive_set(seed ^ 0xa5a5, archive_bytes, 256 << 10);
    let frames = sources.source_ids();
    let mut rng = SplitMix64::new(seed);
    let mut used_ids = BTreeSet::new();
    // Blocks already written: (file path, block id), for block links.
    let mut written: Vec<(String, String)> = Vec::new();
    let mut topics = BTreeMap::new();
    for n in 0..files {
        let area = AREAS.get(n % AREAS.len()).copied().unwrap_or("misc");
        let path = format!("topics/{area}/t{n:04}.md");
        let mut out = String::new();
        let mut definitions = String::new();
        let mut used_footnotes = BTreeSet::new();
        let mut pool: Vec<String> = Vec::new();
        out.push_str(&format!("# Topic {n} {}\n", rng.pick(CHINESE)));
        for b in 0..blocks.get(n).copied().unwrap_or(0) {
            if b % 6 == 0 {
                out.push_str(&format!("\n## {} {}\n", rng.pick(ENGLISH), b / 6));
            } else if rng.chance(5) {
                out.push_str(&format!("\n### {}\n", rng.pick(CHINESE)));
            }
            out.push('\n');
            if shared_footnotes > 0 {
                sentence(&mut rng, &mut out);
                let footnote = if pool.len() < shared_footnotes {
                    let footnote = define(&mut rng, &frames, &mut used_footnotes, &mut definitions);
                    pool.push(footnote.clone());
                    footnote
                } else {
                    pool.get(rng.below(pool.len())).cloned().unwrap_or_default()
                };
                let id = fresh_hex(&mut rng, 8, &mut used_ids);
                out.push_str(&format!("[^{footnote}] ^{id}\n"));
                continue;
            }
            let claims = 1 + rng.below(3);
            for c in 0..claims {
                if c > 0 {
                    out.push(' ');
                }
                sentence(&mut rng, &mut out);
                if c == 0 && rng.chance(10) {
                    out.push('\n');
                    sentence(&mut rng, &mut out);
                }
                if c == 0 && rng.chance(10) && !written.is_empty() {
                    let (home, id) = written.get(rng.below(written.len())).cloned().unwrap_or_default();
                    let (home_area, name) = home.trim_start_matches("topics/").split_once('/').unwrap_or_default();
                    let relative = if home_area == area { name.to_owned() } else { format!("../{home_area}/{name}") };
                    out.push_str(&format!(" See [{}]({relative}#^{id}).", rng.pick(ENGLISH)));
                }
                for _ in 0..1 + usize::from(rng.chance(20)) {
                    let footnote = define(&mut rng, &frames, &mut used_footnotes, &mut definitions);
                    out.push_str(&format!("[^{footnote}]"));
                }
            }
            if rng.chance(5) {
                out.push_str(&format!(" ^{}", fresh_hex(&mut rng, 8, &mut used_ids)));
            }
            let id = fresh_hex(&mut rng, 8, &mut used_ids);
            out.push_str(&format!(" ^{id}\n"));
            written.push((path.clone(), id));
        }
        out.push('\n');
        out.push_str(&definitions);
        topics.insert(path, out.into_bytes());
    }
    TopicWorkspace { topics, sources, blocks: total }
}

/// A fresh footnote id, its definition (one or two source links) added to `definitions`.
fn define(
    rng: &mut SplitMix64,
    frames: &[String],
    used_footnotes: &mut BTreeSet<String>,
    definitions: &mut String,
) -> String {
    let footnote = format!("e-{}", fresh_hex(rng, 10, used_footnotes));
    definitions.push_str(&format!("[^{footnote}]: Time: `{}`; Sources: ", when(rng)));
    for l in 0..1 + usize::from(rng.chance(25)) {
        let id = frames.get(rng.below(frames.len())).map(String::as_str).unwrap_or_default();
        let location = v2_location(id).unwrap_or_default();
        let label = if rng.chance(20) { "会话记录".to_owned() } else { id.to_owned() };
        if l > 0 {
            definitions.push_str(", ");
        }
        definitions.push_str(&format!("[{label}](../../{location}#{})", source_anchor(id)));
    }
    definitions.push('\n');
    footnote
}

/// The text of a generated topic file with `mark` toggled at the start of its first
/// paragraph after the first section heading: a one-line, one-block edit.
pub fn toggle_first_paragraph(bytes: &[u8], mark: &str) -> Option<String> {
    let text = String::from_utf8(bytes.to_vec()).ok()?;
    let heading = text.find("\n## ")?;
    let start = heading + text.get(heading + 1..)?.find("\n\n")? + 3;
    let mut out = text.get(..start)?.to_owned();
    let rest = text.get(start..)?;
    match rest.strip_prefix(mark) {
        Some(unmarked) => out.push_str(unmarked),
        None => {
            out.push_str(mark);
            out.push_str(rest);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use scriptorium_topic_markdown::{Baseline, MemorySources, Mode, NormalizeOptions, SourceResolver, normalize};

    use super::*;

    #[test]
    fn generated_topics_are_valid_and_normal() {
        let workspace = topic_workspace(3, 6, 14);
        assert_eq!(workspace.topics, topic_workspace(3, 6, 14).topics, "same seed, same workspace");
        let sources: MemorySources =
            workspace.sources.files.iter().map(|f| (f.path.clone(), f.bytes.clone())).collect();
        let resolver = SourceResolver::new(&sources);
        let parsed = scriptorium_topic_markdown::parse_tree(&workspace.topics, &resolver, Mode::Strict);
        assert!(parsed.violations().is_empty(), "{:?}", parsed.violations());
        assert!(parsed.units().len() >= 6 * 14);
        let text: String = workspace.topics.values().map(|b| String::from_utf8_lossy(b).into_owned()).collect();
        assert!(text.contains("#^") && text.contains("; Sources: [") && text.contains("会"), "missing features");
        let baseline = Baseline::from_units(parsed.units().to_vec());
        let normalized = normalize(&workspace.topics, &baseline, &resolver, &NormalizeOptions::default())
            .unwrap_or_else(|violations| panic!("{violations}"));
        assert_eq!(normalized.files, workspace.topics);
    }
}
