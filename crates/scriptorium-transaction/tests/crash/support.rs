//! Shared helpers: scratch directories on the real disk, tree copies, child processes,
//! a seedable random generator, the invariant checks I1 and I4, and the scenarios.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use scriptorium_archive_format::{SourceRecord, plan_append};
use scriptorium_transaction::{
    Changes, FileKind, RUNTIME_DIR, RuntimeState, SimVfs, TXN_DIR, Vfs, Workspace, WorkspaceTree, WriteLock, kind_of,
    revision,
};

/// The environment variable that makes this binary a child with the given role.
pub(crate) const ROLE_ENV: &str = "SCRIPTORIUM_CRASH_ROLE";

/// The runtime directory of every test workspace.
pub(crate) const RT: &str = RUNTIME_DIR;

/// The suites' result line: what ran and how much.
pub(crate) type Outcome = Result<String, String>;

/// Fail with a message unless `condition` holds.
#[macro_export]
macro_rules! ensure {
    ($condition:expr, $($message:tt)+) => {
        if !$condition {
            return Err(format!($($message)+));
        }
    };
}

/// A scratch directory under Cargo's per-target temp dir (a real disk, not tmpfs),
/// removed on drop.
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    pub(crate) fn new(label: &str) -> Scratch {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("crash-{label}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("scratch dir");
        Scratch(path)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The shared base workspace of the transaction vectors.
pub(crate) fn tx_base() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/_resources/tx-base")
}

/// Copy the tree at `from` to `to` (files and directories; links are not expected).
pub(crate) fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create copy root");
    for entry in std::fs::read_dir(from).expect("list") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

/// Every file of a real tree by relative path (for loading it into the simulation).
pub(crate) fn read_tree(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("list") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let relative = path.strip_prefix(root).expect("inside root").to_path_buf();
                out.insert(relative, std::fs::read(&path).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// The revision of a real workspace.
pub(crate) fn real_revision(root: &Path) -> String {
    revision(&scriptorium_transaction::RealVfs::new(root), RT).expect("revision")
}

/// SplitMix64, seeded from the environment (`SCRIPTORIUM_SEED`) or the clock, and
/// printed so that a failure can be replayed.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn from_env(suite: &str) -> Rng {
        let seed = std::env::var("SCRIPTORIUM_SEED").ok().and_then(|seed| seed.parse().ok()).unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
        });
        println!("    {suite}: SCRIPTORIUM_SEED={seed}");
        Rng(seed)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub(crate) fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 { 0 } else { self.next() % bound }
    }
}

/// A count from the environment, or `default` (`soak` when `SCRIPTORIUM_SOAK=1`).
pub(crate) fn count(var: &str, default: u64, soak: u64) -> u64 {
    if let Some(value) = std::env::var(var).ok().and_then(|value| value.parse().ok()) {
        return value;
    }
    if std::env::var("SCRIPTORIUM_SOAK").is_ok_and(|value| value == "1") { soak } else { default }
}

/// This test binary as a child with `role`, in workspace `root`.
pub(crate) fn child(role: &str, root: &Path) -> Command {
    let mut command = Command::new(std::env::current_exe().expect("own path"));
    command.env(ROLE_ENV, role).env("SCRIPTORIUM_T_ROOT", root).env_remove(scriptorium_transaction::crashpoint::ENV);
    command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::inherit());
    command
}

/// Whether the child died of SIGABRT (a crash point fired).
pub(crate) fn aborted(status: ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal() == Some(6)
}

/// Wait for `child`, killing it after `limit` (a watchdog against deadlocks).
pub(crate) fn wait_with_watchdog(child: &mut Child, limit: Duration) -> Result<ExitStatus, String> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("child {} exceeded the {limit:?} watchdog", child.id()));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Reopen (which recovers) and check I1 (the revision is `expected`) and I4 (no journal,
/// no backup, and the lock can be taken within 10 ms). Returns the lock latency.
pub(crate) fn reopen_and_check(root: &Path, expected: &str, what: &str) -> Result<Duration, String> {
    let workspace = Workspace::open(root).map_err(|e| format!("{what}: reopen failed: {e}"))?;
    let got = workspace.revision().map_err(|e| e.to_string())?;
    ensure!(got == expected, "{what}: I1 violated: revision {got}, expected {expected}");
    let txn = root.join(RT).join(TXN_DIR);
    let left = std::fs::read_dir(&txn).map_err(|e| e.to_string())?.count();
    ensure!(left == 0, "{what}: I4 violated: {left} journal(s) left in {}", txn.display());
    ensure!(!root.join(format!("{RT}-block-backup")).exists(), "{what}: I4 violated: backup left");
    let started = Instant::now();
    let lock = WriteLock::acquire(&root.join(RT), Duration::from_millis(10));
    let latency = started.elapsed();
    ensure!(lock.is_ok(), "{what}: I4 violated: the lock is not free");
    Ok(latency)
}

/// The authoritative files of a simulated workspace: what the revision hashes (memory
/// files and the runtime state file), compared directly because hashing every crash
/// state with a debug-built SHA-256 would dominate the suite's time.
pub(crate) fn sim_tree(vfs: &SimVfs) -> BTreeMap<PathBuf, Vec<u8>> {
    let state = Path::new(RT).join(scriptorium_transaction::RUNTIME_STATE_FILE);
    vfs.files()
        .into_iter()
        .filter(|(path, _)| *path == state || !path.to_str().is_some_and(scriptorium_transaction::is_internal_path))
        .collect()
}

/// Whether a simulated workspace is clean (I4): no journal left.
pub(crate) fn sim_clean(vfs: &SimVfs) -> bool {
    let txn = Path::new(RT).join(TXN_DIR);
    match kind_of(vfs, &txn) {
        Ok(Some(FileKind::Dir)) => vfs.list_dir(&txn).is_ok_and(|names| names.is_empty()),
        Ok(None) => true,
        _ => false,
    }
}

/// The scenarios of T1, T3 and T4 (spec 04 §C4 T1, minus restore and legacy `core.md`,
/// which belong to layers not written yet).
pub(crate) const SCENARIOS: &[&str] = &["new-source-and-topic", "edit-topic", "delete-topic", "archive-append"];

fn read<V: Vfs>(vfs: &V, path: &str) -> Vec<u8> {
    vfs.read(Path::new(path)).expect("scenario input exists")
}

/// The whole-file changes scenario `name` makes to the tx-base workspace seen by `vfs`.
pub(crate) fn scenario_changes<V: Vfs>(name: &str, vfs: &V) -> Changes {
    let mut state = RuntimeState::parse(&read(vfs, ".scriptorium/runtime.json"));
    let mut changes = Changes::new();
    let archive = |provider: &str, thread: &str, content: &str| {
        let mut record = SourceRecord::new(provider, thread, "m-crash", 99, "user", content);
        record.timestamp = Some("2024-03-20T09:00:00+00:00".into());
        let plan = plan_append(&[record], &WorkspaceTree::new(vfs)).expect("plan the append");
        plan.files.into_iter().map(|file| (file.path, Some(file.bytes))).collect::<Vec<_>>()
    };
    match name {
        "new-source-and-topic" => {
            changes.extend(archive("claude-code", "crash-thread", "We chose the blue tiles."));
            let topic = "# Renovation\n\nThe blue tiles were chosen.[^e1] ^abcd1234\n\n[^e1]: 2024-03-20 source\n";
            changes.insert("topics/home/renovation.md".into(), Some(topic.as_bytes().to_vec()));
            state.set_rank("abcd1234", state.next_rank());
        }
        "edit-topic" => {
            // Over two pages, so torn writes have somewhere to tear.
            let mut bytes = read(vfs, "topics/prefs.md");
            for line in 0..180 {
                bytes.extend(format!("Line {line} of a long preference note that spans pages.\n").as_bytes());
            }
            changes.insert("topics/prefs.md".into(), Some(bytes));
        }
        "delete-topic" => {
            changes.insert("topics/people/mei.md".into(), None);
            changes.insert("relations.json".into(), Some(b"{\n  \"backlinks\": {},\n  \"outbound\": {}\n}\n".to_vec()));
        }
        "archive-append" => changes.extend(archive("openprogram", "sess-7f2a", "The budget tracker ships on Friday.")),
        other => panic!("unknown scenario {other}"),
    }
    state.local_batches += 1;
    changes.insert(".scriptorium/runtime.json".into(), Some(state.to_bytes()));
    changes
}
