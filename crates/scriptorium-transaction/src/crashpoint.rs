//! Named crash points for the child-process crash suite (spec 04 §C4 T1).
//!
//! `crashpoint!("name")` aborts the process on the n-th time the point is reached when
//! the environment holds `SCRIPTORIUM_CRASH_AT=name:n`. The points are always compiled
//! (so the suite tests the code that ships); when the variable is unset a point costs one
//! `OnceLock` read, because the variable is looked up once per process.
//!
//! `SCRIPTORIUM_PAUSE_AT=name:n` with `SCRIPTORIUM_PAUSE_FILE=path` pauses there instead:
//! the process creates `path` and waits until the parent removes it (at most a minute),
//! so a test can send a real signal at exactly that point.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that arms one crash point: `name:n` (n ≥ 1).
pub const ENV: &str = "SCRIPTORIUM_CRASH_AT";

/// The environment variable that arms one pause point: `name:n` (n ≥ 1).
pub const PAUSE_ENV: &str = "SCRIPTORIUM_PAUSE_AT";

/// The file a paused process creates, and waits for the parent to remove.
pub const PAUSE_FILE_ENV: &str = "SCRIPTORIUM_PAUSE_FILE";

/// The longest a pause waits, so a forgotten child never hangs a test run.
const PAUSE_MAX: std::time::Duration = std::time::Duration::from_secs(60);

/// Every crash point, in protocol order (docs/durability.md describes each).
pub const POINTS: &[&str] = &[
    "lock.acquired",
    "derive.built",
    "history.objects_written",
    "stage.after_write",
    "stage.after_fsync",
    "journal.manifest_synced",
    "journal.committed",
    "install.after_rename",
    "install.synced",
    "cleanup.uncommitted",
    "history.before_publish",
    "history.published",
    "recovery.start",
    "recovery.after_rename",
    "recovery.synced",
    "backup.quarantined",
    "backup.restored",
];

struct Armed {
    name: String,
    nth: u64,
    hits: AtomicU64,
}

static ARMED: OnceLock<Option<Armed>> = OnceLock::new();
static PAUSE: OnceLock<Option<(Armed, std::path::PathBuf)>> = OnceLock::new();

fn load() -> Option<Armed> {
    armed(ENV)
}

fn load_pause() -> Option<(Armed, std::path::PathBuf)> {
    Some((armed(PAUSE_ENV)?, std::env::var_os(PAUSE_FILE_ENV)?.into()))
}

fn armed(var: &str) -> Option<Armed> {
    let value = std::env::var(var).ok()?;
    let (name, nth) = value.rsplit_once(':')?;
    let nth = nth.parse().ok()?;
    Some(Armed { name: name.to_owned(), nth, hits: AtomicU64::new(0) })
}

/// Count a pass through the point `name` and abort if it is the armed occurrence.
/// Use the [`crashpoint!`](crate::crashpoint!) macro rather than calling this.
pub fn hit(name: &'static str) {
    hit_listed(POINTS, name);
}

/// [`hit`] for a crash point of a layer above, which keeps its own list of points
/// (`points`) and shares this mechanism and its environment variable.
pub fn hit_listed(points: &[&str], name: &'static str) {
    debug_assert!(points.contains(&name), "crash point `{name}` is missing from its POINTS");
    if let Some(armed) = ARMED.get_or_init(load)
        && armed.name == name
        && armed.hits.fetch_add(1, Ordering::SeqCst) + 1 == armed.nth
    {
        // abort(), not exit(): no destructors, no buffered writes, no lock release other
        // than the kernel's, exactly like a crash.
        std::process::abort();
    }
    if let Some((armed, file)) = PAUSE.get_or_init(load_pause)
        && armed.name == name
        && armed.hits.fetch_add(1, Ordering::SeqCst) + 1 == armed.nth
        && std::fs::write(file, name).is_ok()
    {
        let started = std::time::Instant::now();
        while file.exists() && started.elapsed() < PAUSE_MAX {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

/// Mark a named crash point (see the module documentation).
#[macro_export]
#[doc(hidden)]
macro_rules! crashpoint {
    ($name:literal) => {
        $crate::crashpoint::hit($name)
    };
}

#[cfg(test)]
mod tests {
    use super::POINTS;

    /// Every `crashpoint!("name")` in the sources names a listed point, and every listed
    /// point is used, so the crash suite's enumeration stays complete.
    #[test]
    fn points_and_uses_agree() {
        fn sources(dir: &std::path::Path, out: &mut String) {
            for entry in std::fs::read_dir(dir).expect("list src") {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    sources(&path, out);
                } else if path.extension().is_some_and(|ext| ext == "rs") {
                    let text = std::fs::read_to_string(&path).expect("read source");
                    // Code only: the documentation mentions the macro too.
                    for line in text.lines().filter(|line| !line.trim_start().starts_with("//")) {
                        out.push_str(line);
                        out.push('\n');
                    }
                }
            }
        }
        let mut text = String::new();
        sources(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut text);
        let marker = concat!("crashpoint", "!(\"");
        let used: std::collections::BTreeSet<&str> =
            text.split(marker).skip(1).filter_map(|rest| rest.split('"').next()).collect();
        for name in &used {
            assert!(POINTS.contains(name), "`{name}` is used but not listed");
        }
        for name in POINTS {
            assert!(used.contains(name), "`{name}` is listed but never used");
        }
    }
}
