//! T1: every named crash point × every occurrence, in a child that aborts there; the
//! parent reopens (recovering) and checks I1 and I4. On a real file system without power
//! loss the outcome is exact: a crash before the commit point leaves the before-state, a
//! crash after it the after-state. Recovery's own points are exercised on the journals
//! such crashes leave (committed and uncommitted), and the reference-backup points on a
//! workspace the Python reference left mid-install.

use std::path::Path;
use std::time::Duration;

use scriptorium_transaction::crashpoint::{ENV, POINTS};

use crate::ensure;
use crate::support::{
    Outcome, SCENARIOS, Scratch, aborted, child, copy_tree, real_revision, reopen_and_check, tx_base,
};

/// Points before the commit point: a crash there must leave the before-state.
const BEFORE_COMMIT: &[&str] = &["lock.acquired", "stage.after_write", "stage.after_fsync", "journal.manifest_synced"];

/// Points after the commit point: a crash there must leave the after-state.
const AFTER_COMMIT: &[&str] = &["journal.committed", "install.after_rename", "install.synced", "cleanup.uncommitted"];

/// Points hit while recovering a journal.
const RECOVERY: &[&str] =
    &["lock.acquired", "recovery.start", "recovery.after_rename", "recovery.synced", "cleanup.uncommitted"];

/// Points of `Workspace::update` around the install (the derive step and history): they
/// need the derived views, so `scriptorium-cli`'s `crash_pipeline` test enumerates them
/// over the real binary.
const PIPELINE: &[&str] = &["derive.built", "history.objects_written", "history.before_publish", "history.published"];

/// Points hit while resolving a reference backup.
const BACKUP: &[&str] = &["recovery.start", "backup.quarantined", "backup.restored"];

struct Tally {
    cases: usize,
    children: usize,
    max_lock_latency: Duration,
}

/// Run `role` on copies of `state` with `point:1`, `point:2`, … until the child
/// finishes without hitting the point; after each abort, check `expected`.
fn every_occurrence(
    tally: &mut Tally,
    state: &Path,
    role: &str,
    scenario: &str,
    base: &str,
    point: &str,
    expected: &str,
) -> Result<(), String> {
    for nth in 1.. {
        let case = Scratch::new("t1-case");
        copy_tree(state, case.path());
        let status = child(role, case.path())
            .env(ENV, format!("{point}:{nth}"))
            .env("SCRIPTORIUM_T_SCENARIO", scenario)
            .env("SCRIPTORIUM_T_BASE", base)
            .status()
            .map_err(|e| e.to_string())?;
        tally.children += 1;
        if status.success() {
            // Every point of an install is on its path; recovery skips some for some journals.
            ensure!(nth > 1 || role != "install", "{scenario}/{role}: point {point} never reached");
            return Ok(());
        }
        ensure!(aborted(status), "{scenario}/{role} {point}:{nth}: child failed: {status}");
        let what = format!("{scenario}/{role} {point}:{nth}");
        let latency = reopen_and_check(case.path(), expected, &what)?;
        tally.max_lock_latency = tally.max_lock_latency.max(latency);
        tally.cases += 1;
    }
    Ok(())
}

/// The state a crash at `point:1` of `scenario`'s install leaves, in `into`.
fn crashed_state(scenario: &str, base: &str, point: &str, into: &Path) -> Result<(), String> {
    copy_tree(&tx_base(), into);
    let status = child("install", into)
        .env(ENV, format!("{point}:1"))
        .env("SCRIPTORIUM_T_SCENARIO", scenario)
        .env("SCRIPTORIUM_T_BASE", base)
        .status()
        .map_err(|e| e.to_string())?;
    ensure!(aborted(status), "{scenario}: preparing a crash at {point} failed: {status}");
    Ok(())
}

/// The after-state revision of `scenario`: run it to completion once.
fn after_revision(scenario: &str, base: &str) -> Result<String, String> {
    let done = Scratch::new("t1-after");
    copy_tree(&tx_base(), done.path());
    let status = child("install", done.path())
        .env("SCRIPTORIUM_T_SCENARIO", scenario)
        .env("SCRIPTORIUM_T_BASE", base)
        .status()
        .map_err(|e| e.to_string())?;
    ensure!(status.success(), "{scenario}: the uncrashed run failed: {status}");
    let after = real_revision(done.path());
    ensure!(after != base, "{scenario}: the scenario changes nothing");
    Ok(after)
}

pub(crate) fn run() -> Outcome {
    let mut tally = Tally { cases: 0, children: 0, max_lock_latency: Duration::ZERO };
    let before = real_revision(&tx_base());
    for scenario in SCENARIOS {
        let after = after_revision(scenario, &before)?;
        for point in BEFORE_COMMIT {
            every_occurrence(&mut tally, &tx_base(), "install", scenario, &before, point, &before)?;
        }
        for point in AFTER_COMMIT {
            every_occurrence(&mut tally, &tx_base(), "install", scenario, &before, point, &after)?;
        }
        // Crash again while recovering a committed journal (after the first rename) and
        // an uncommitted one (manifest written, not renamed).
        for (left_at, expected) in [("install.after_rename", &after), ("journal.manifest_synced", &before)] {
            let state = Scratch::new("t1-state");
            crashed_state(scenario, &before, left_at, state.path())?;
            for point in RECOVERY {
                every_occurrence(&mut tally, state.path(), "recover", scenario, &before, point, expected)?;
            }
        }
    }

    // The Python reference crashed in its install step 2: new `sources/` and `topics/`
    // in place, everything else still in `.scriptorium-block-backup/`.
    let old = Scratch::new("t1-old");
    copy_tree(&tx_base(), old.path());
    let old_revision = real_revision(old.path());
    let state = Scratch::new("t1-backup");
    let backup = state.path().join(".scriptorium-block-backup");
    std::fs::create_dir_all(backup.join(".scriptorium")).map_err(|e| e.to_string())?;
    copy_tree(&tx_base(), state.path());
    for item in ["sources", "topics", "timeline", "recent_events.jsonl", "relations.json", ".scriptorium/runtime.json"]
    {
        std::fs::rename(state.path().join(item), backup.join(item)).map_err(|e| e.to_string())?;
    }
    copy_tree(&tx_base().join("sources"), &state.path().join("sources"));
    copy_tree(&tx_base().join("topics"), &state.path().join("topics"));
    std::fs::write(state.path().join("topics/prefs.md"), b"new prefs\n").map_err(|e| e.to_string())?;
    std::fs::write(state.path().join("sources/D1.md"), b"new archive\n").map_err(|e| e.to_string())?;
    for point in BACKUP {
        every_occurrence(&mut tally, state.path(), "recover", "reference-backup", "", point, &old_revision)?;
    }

    ensure!(tally.cases >= 80, "only {} crash cases ran", tally.cases);
    let unlisted: Vec<&&str> = POINTS
        .iter()
        .filter(|point| {
            !BEFORE_COMMIT.iter().chain(AFTER_COMMIT).chain(RECOVERY).chain(BACKUP).chain(PIPELINE).any(|p| p == *point)
        })
        .collect();
    ensure!(unlisted.is_empty(), "crash points no suite enumerates: {unlisted:?}");
    Ok(format!(
        "{} crashes checked across {} scenarios + reference backup ({} child processes); max lock latency after recovery {:?}",
        tally.cases,
        SCENARIOS.len(),
        tally.children,
        tally.max_lock_latency
    ))
}
