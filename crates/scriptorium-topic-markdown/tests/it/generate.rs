//! Generated topic trees that are valid by construction: headings, blocks with 1-3
//! citations per group, merge aliases, links between files, CJK text, CRLF files.

use std::collections::BTreeMap;

use proptest::prelude::*;
use scriptorium_archive_format::source_anchor;

/// Where generated files live (three depths, so relative links differ).
pub(crate) const PATHS: [&str; 3] = ["topics/a.md", "topics/people/b.md", "topics/x/y/c.md"];
const WORDS: [&str; 14] = [
    "Craig",
    "likes",
    "green",
    "tea",
    "京都",
    "宇治の抹茶",
    "budget",
    "tracker,",
    "2024-03-15",
    "한국어",
    "Ünïcödé",
    "naïve",
    "x",
    "due.",
];
const TIMES: [&str; 4] = ["undated", "2024", "2024-03", "2024-03-15"];

#[derive(Clone, Debug)]
pub(crate) struct Claim {
    words: Vec<usize>,
    cites: Vec<usize>,
    link: Option<usize>,
}

#[derive(Clone, Debug)]
pub(crate) struct Block {
    claims: Vec<Claim>,
    alias: bool,
    multiline: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct Section {
    level: usize,
    title: Vec<usize>,
    blocks: Vec<Block>,
}

#[derive(Clone, Debug)]
pub(crate) struct Footnote {
    time: usize,
    sources: Vec<bool>,
}

#[derive(Clone, Debug)]
pub(crate) struct File {
    sections: Vec<Section>,
    footnotes: Vec<Footnote>,
    crlf: bool,
}

/// A whole tree and whether its links are already canonical relative paths.
#[derive(Clone, Debug)]
pub(crate) struct Tree {
    files: Vec<File>,
    pub(crate) canonical: bool,
}

fn claim() -> impl Strategy<Value = Claim> {
    (
        prop::collection::vec(0..WORDS.len(), 1..5),
        prop::collection::vec(0..3usize, 1..4),
        prop::option::weighted(0.2, 0..50usize),
    )
        .prop_map(|(words, cites, link)| Claim { words, cites, link })
}

fn block() -> impl Strategy<Value = Block> {
    (prop::collection::vec(claim(), 1..4), prop::bool::weighted(0.2), any::<bool>())
        .prop_map(|(claims, alias, multiline)| Block { claims, alias, multiline })
}

fn section() -> impl Strategy<Value = Section> {
    (1..4usize, prop::collection::vec(0..WORDS.len(), 1..3), prop::collection::vec(block(), 1..4))
        .prop_map(|(level, title, blocks)| Section { level, title, blocks })
}

fn file() -> impl Strategy<Value = File> {
    let footnote = (0..TIMES.len(), prop::collection::vec(any::<bool>(), 1..3))
        .prop_map(|(time, sources)| Footnote { time, sources });
    (prop::collection::vec(section(), 1..4), prop::collection::vec(footnote, 3), prop::bool::weighted(0.3))
        .prop_map(|(sections, footnotes, crlf)| File { sections, footnotes, crlf })
}

/// Trees of one to three files.
pub(crate) fn tree() -> impl Strategy<Value = Tree> {
    (prop::collection::vec(file(), 1..=PATHS.len()), any::<bool>())
        .prop_map(|(files, canonical)| Tree { files, canonical })
}

/// `posixpath.relpath(target, dirname(from))` for the generated layout.
pub(crate) fn relative(target: &str, from: &str) -> String {
    let depth = from.matches('/').count();
    let from_dirs: Vec<&str> = from.split('/').take(depth).collect();
    let target_parts: Vec<&str> = target.split('/').collect();
    let common = from_dirs.iter().zip(&target_parts).take_while(|(a, b)| a == b).count();
    let mut out: Vec<&str> = std::iter::repeat_n("..", depth - common).collect();
    out.extend(target_parts.iter().skip(common));
    out.join("/")
}

impl Tree {
    /// The block identities, in order, with their files.
    fn identities(&self) -> Vec<(String, &'static str)> {
        let mut ids = Vec::new();
        for (f, file) in self.files.iter().enumerate() {
            let count: usize = file.sections.iter().map(|s| s.blocks.len()).sum();
            for _ in 0..count {
                ids.push((format!("{:08x}", 0x1000_0000 + ids.len() * 7919), PATHS[f]));
            }
        }
        ids
    }

    /// Render every file (workspace-relative path → bytes).
    pub(crate) fn render(&self) -> BTreeMap<String, Vec<u8>> {
        let identities = self.identities();
        let mut next_block = 0;
        let mut files = BTreeMap::new();
        for (f, spec) in self.files.iter().enumerate() {
            let path = PATHS[f];
            let mut out = String::new();
            let mut cited = [false; 3];
            for section in &spec.sections {
                let title: Vec<&str> = section.title.iter().map(|&w| WORDS[w]).collect();
                out.push_str(&format!("{} {}\n\n", "#".repeat(section.level), title.join(" ")));
                for block in &section.blocks {
                    let (id, _) = &identities[next_block];
                    next_block += 1;
                    let mut text = String::new();
                    for (n, claim) in block.claims.iter().enumerate() {
                        if n > 0 {
                            text.push_str(if block.multiline { "\n" } else { " " });
                        }
                        let words: Vec<&str> = claim.words.iter().map(|&w| WORDS[w]).collect();
                        text.push_str(&words.join(" "));
                        if let Some(target) = claim.link {
                            let (target_id, home) = &identities[target % identities.len()];
                            text.push_str(&format!(" [see]({}#^{target_id})", relative(home, path)));
                        }
                        for &c in &claim.cites {
                            cited[c] = true;
                            text.push_str(&format!("[^e-{:010x}]", f * 16 + c));
                        }
                    }
                    if block.alias {
                        text.push_str(&format!(" ^a{}", &id[1..]));
                    }
                    out.push_str(&format!("{text} ^{id}\n\n"));
                }
            }
            for (c, footnote) in spec.footnotes.iter().enumerate() {
                if !cited[c] {
                    continue;
                }
                let links: Vec<String> = footnote
                    .sources
                    .iter()
                    .map(|&d1| match (d1, self.canonical) {
                        (true, true) => format!("[D1:1]({}#d1-1)", relative("sources/D1.md", path)),
                        (true, false) => "[D1:1](D1:1)".to_owned(),
                        (false, true) => format!(
                            "[m1]({}#{})",
                            relative("sources/openprogram/_v2/t.md", path),
                            source_anchor("openprogram/t/m1")
                        ),
                        (false, false) => "[m1](openprogram/t/m1)".to_owned(),
                    })
                    .collect();
                out.push_str(&format!(
                    "[^e-{:010x}]: Time: `{}`; Sources: {}\n",
                    f * 16 + c,
                    TIMES[footnote.time],
                    links.join(", ")
                ));
            }
            let text = if spec.crlf { out.replace('\n', "\r\n") } else { out };
            files.insert(path.to_owned(), text.into_bytes());
        }
        files
    }
}

/// The LF form of a generated tree (what normalization writes back).
pub(crate) fn lf(files: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    files.iter().map(|(p, b)| (p.clone(), String::from_utf8_lossy(b).replace("\r\n", "\n").into_bytes())).collect()
}
