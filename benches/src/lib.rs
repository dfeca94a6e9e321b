//! Seeded corpus generators for the benchmarks: the same seed gives the same bytes on
//! every machine, so anyone can rerun a figure (spec 03: "each benchmark generates its
//! own corpus deterministically").
//!
//! Archives are produced by the real writer ([`plan_append`]), so they are canonical
//! v2 files: mixed English and Chinese bodies, multi-line and CRLF text, speaker lines,
//! every metadata shape, and the occasional body that imitates frame lines.

use scriptorium_archive_format::{MemoryTree, SourceRecord, parse_bytes, plan_append};

pub mod topics;
pub mod transcripts;

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast, well-mixed 64-bit generator.
/// Not for cryptography; enough to make corpora look varied and stay reproducible.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`); the modulo bias is irrelevant here.
    pub fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next_u64() % n.max(1) as u64).unwrap_or(0)
    }

    /// Whether an event of probability `percent`/100 happens.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// One element of a non-empty slice.
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items.get(self.below(items.len())).copied().unwrap_or_default()
    }
}

pub(crate) const ENGLISH: &[&str] = &[
    "the",
    "budget",
    "tracker",
    "ships",
    "in",
    "April",
    "please",
    "remember",
    "that",
    "Ada",
    "prefers",
    "short",
    "answers",
    "meeting",
    "moved",
    "to",
    "Thursday",
    "and",
    "the",
    "deploy",
    "failed",
    "because",
    "of",
    "a",
    "missing",
    "index",
    "we",
    "should",
    "retry",
    "after",
    "lunch",
    "notes:",
    "TODO",
    "done",
    "約",
    "API",
    "key",
    "rotation",
    "is",
    "scheduled",
    "for",
    "next",
    "week",
    "ok",
];

pub(crate) const CHINESE: &[&str] = &[
    "预算",
    "跟踪器",
    "四月",
    "发布",
    "请记住",
    "她",
    "喜欢",
    "简短的",
    "回答",
    "会议",
    "改到",
    "星期四",
    "部署",
    "失败了",
    "因为",
    "缺少",
    "索引",
    "我们",
    "应该",
    "午饭后",
    "重试",
    "密钥",
    "轮换",
    "下周",
    "好的",
    "。",
    "，",
];

const DISPLAYS: &[&str] = &["Ada", "Bo", "Cal", "梅", "Dave Smith", "Owner", "李雷"];

/// One generated message body: one to three lines of English or Chinese, with
/// occasional CRLF, a trailing LF, trailing spaces, or a line that imitates a frame.
fn body(rng: &mut SplitMix64) -> String {
    let lines = 1 + rng.below(3);
    let crlf = rng.chance(10);
    let mut out = String::new();
    for n in 0..lines {
        if n > 0 {
            out.push_str(if crlf { "\r\n" } else { "\n" });
        }
        if rng.chance(3) {
            out.push_str(rng.pick(&["<!-- record-lines:3 -->", "<a id=\"source-0000000000000000\"></a>", ""]));
            continue;
        }
        let chinese = rng.chance(40);
        let words = 3 + rng.below(12);
        for w in 0..words {
            if chinese {
                out.push_str(rng.pick(CHINESE));
            } else {
                if w > 0 {
                    out.push(' ');
                }
                out.push_str(rng.pick(ENGLISH));
            }
        }
    }
    if rng.chance(5) {
        out.push_str("  \n");
    }
    out
}

fn record(rng: &mut SplitMix64, thread: &str, ordinal: i64) -> SourceRecord {
    let role = if rng.chance(50) { "user" } else { "assistant" };
    let mut record = SourceRecord::new("openprogram", thread, format!("n{ordinal:06}"), ordinal, role, body(rng));
    let minute = ordinal % 60;
    let hour = (ordinal / 60) % 24;
    record.timestamp = Some(format!("2026-08-10T{hour:02}:{minute:02}:00+08:00"));
    if role == "user" {
        let display = rng.pick(DISPLAYS);
        record.speaker_display = Some(display.to_owned());
        if rng.chance(80) {
            record.speaker_id = Some(format!("telegram/{}-{}", 1000 + rng.below(50), display.len()));
        }
        record.speaker_kind = "human".to_owned();
        record.principal_id = format!("telegram:{}", rng.below(50));
        if rng.chance(20) {
            record.trust_state = "pending".to_owned();
        }
        if rng.chance(30) {
            record.authority_tier = Some("paired".to_owned());
        }
    } else {
        record.speaker_kind = "assistant".to_owned();
        record.principal_id = "owner/local".to_owned();
        record.authority_tier = Some("owner".to_owned());
    }
    record
}

/// One generated archive file.
#[derive(Clone, Debug)]
pub struct ArchiveFile {
    /// Its workspace-relative path.
    pub path: String,
    /// Its bytes, as the writer produced them.
    pub bytes: Vec<u8>,
    /// How many frames it holds.
    pub frames: usize,
}

/// A generated set of archives, one per thread.
#[derive(Clone, Debug)]
pub struct ArchiveSet {
    /// The files, in generation order.
    pub files: Vec<ArchiveFile>,
}

impl ArchiveSet {
    /// The total size of all files in bytes.
    pub fn total_bytes(&self) -> usize {
        self.files.iter().map(|f| f.bytes.len()).sum()
    }

    /// The total number of frames.
    pub fn total_frames(&self) -> usize {
        self.files.iter().map(|f| f.frames).sum()
    }

    /// The source id of every frame, file by file in generation order: what generated
    /// topics cite.
    pub fn source_ids(&self) -> Vec<String> {
        let frames = self.files.iter().flat_map(|file| parse_bytes(&file.bytes, &file.path).frames);
        frames.map(|frame| frame.source_id.to_owned()).collect()
    }
}

/// Generate about `target_bytes` of canonical v2 archives from `seed`, in files of
/// about `file_bytes` each (the last one may be smaller).
pub fn archive_set(seed: u64, target_bytes: usize, file_bytes: usize) -> ArchiveSet {
    let mut rng = SplitMix64::new(seed);
    let mut files = Vec::new();
    let mut total = 0;
    while total < target_bytes {
        let thread = format!("sess-{:04}", files.len());
        let budget = file_bytes.min(target_bytes - total);
        let mut records = Vec::new();
        // Frames average ~440 bytes, as in the reference's measured set; generate until
        // the estimate fills the budget.
        let mut estimate = 40;
        while estimate < budget {
            let next = record(&mut rng, &thread, i64::try_from(records.len()).unwrap_or(i64::MAX));
            estimate += next.content.len() + 330;
            records.push(next);
        }
        let plan = plan_append(&records, &MemoryTree::new()).expect("generated records are valid");
        for planned in plan.files {
            total += planned.bytes.len();
            files.push(ArchiveFile { path: planned.path, bytes: planned.bytes, frames: planned.appended.len() });
        }
    }
    ArchiveSet { files }
}

/// The default benchmark corpus: ~20 MB in ~0.5 MB threads, like the 20 MB, 45,649-frame
/// set the Python reference was measured on (spec 03 §B2).
pub fn reference_sized_set() -> ArchiveSet {
    archive_set(0x5c21_9701_d00d_f00d, 20 << 20, 512 << 10)
}
