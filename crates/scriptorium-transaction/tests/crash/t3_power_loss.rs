//! T3: simulated power loss. Each scenario installs on `SimVfs`; then crash states are
//! generated over every prefix of the trace (unsynced operations kept or lost, unsynced
//! writes kept, dropped or torn at 4 KiB, ordered or reordered) and recovered. Checked:
//! I1 (the revision is the before- or after-state), the durable ack (a crash after
//! `install` returned gives the after-state), I4 (no journal left), and recovery of a
//! crash *during* recovery (it must reach the same state). Two back-to-back installs check
//! that a finished journal is never replayed over a later transaction, nor, when a power
//! loss brings it back, over hand edits made since (a changed file, a deleted file
//! recreated with its old bytes). The reference's `-block-backup` leftovers and journals
//! of the older directory layout are recovered the same way.
//!
//! Default ≥ 10,000 states; `SCRIPTORIUM_T3_STATES=n` or `SCRIPTORIUM_SOAK=1` (10⁶).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use scriptorium_transaction::{Changes, SimVfs, TXN_DIR, install, recover, revision, write_atomic};

use crate::ensure;
use crate::support::{Outcome, RT, Rng, SCENARIOS, read_tree, scenario_changes, sim_clean, sim_tree, tx_base};

fn ok() -> Result<(), scriptorium_transaction::Error> {
    Ok(())
}

/// The revision of a tree, for messages and one cross-check.
fn tree_revision(tree: &Tree) -> String {
    revision(&SimVfs::from_files(tree.clone()).expect("tree"), RT).expect("revision")
}

fn base() -> SimVfs {
    SimVfs::from_files(read_tree(&tx_base())).expect("load tx-base")
}

/// A workspace state: its authoritative files.
type Tree = BTreeMap<PathBuf, Vec<u8>>;

fn rev(vfs: &SimVfs) -> Tree {
    sim_tree(vfs)
}

struct Tally {
    states: u64,
    after_restart: u64,
    nested: u64,
    after: u64,
    torn: u64,
    dropped: u64,
}

/// Recover crash state (`prefix`, `seed`) of `sim` and check it lands on one of
/// `allowed`; then crash that recovery at a random point and check the second recovery
/// lands on the same state.
fn check_state(
    sim: &SimVfs,
    prefix: usize,
    seed: u64,
    allowed: &[&Tree],
    what: &str,
    tally: &mut Tally,
) -> Result<Tree, String> {
    let image = sim.crash(prefix, seed);
    tally.states += 1;
    tally.torn += image.torn as u64;
    tally.dropped += image.dropped as u64;
    let crashed = image.vfs;
    recover(&crashed, RT).map_err(|e| format!("{what} prefix {prefix} seed {seed}: recovery failed: {e}"))?;
    let got = rev(&crashed);
    if !allowed.contains(&&got) {
        // Say it with revisions, which are short.
        let hashes: Vec<String> = allowed.iter().map(|tree| tree_revision(tree)).collect();
        return Err(format!(
            "{what} prefix {prefix} seed {seed}: I1 violated: {} not in {hashes:?}",
            tree_revision(&got)
        ));
    }
    ensure!(sim_clean(&crashed), "{what} prefix {prefix} seed {seed}: I4 violated: journal left");

    let length = crashed.trace_len();
    if length > 0 {
        let again = crashed.crash(seed as usize % (length + 1), seed.rotate_left(17));
        tally.nested += 1;
        recover(&again.vfs, RT).map_err(|e| format!("{what} prefix {prefix} seed {seed}: second recovery: {e}"))?;
        let second = rev(&again.vfs);
        ensure!(second == got, "{what} prefix {prefix} seed {seed}: a crash during recovery changed the outcome");
    }
    Ok(got)
}

/// Sweep every prefix of `sim`'s trace with `per_prefix` seeds each.
fn sweep(
    sim: &SimVfs,
    per_prefix: u64,
    rng: &mut Rng,
    what: &str,
    allowed_at: impl Fn(usize) -> Vec<Tree>,
    tally: &mut Tally,
) -> Result<(), String> {
    for prefix in 0..=sim.trace_len() {
        let allowed = allowed_at(prefix);
        let allowed: Vec<&Tree> = allowed.iter().collect();
        for _ in 0..per_prefix {
            let got = check_state(sim, prefix, rng.next(), &allowed, what, tally)?;
            tally.after += u64::from(Some(&&got) == allowed.last());
        }
    }
    Ok(())
}

/// The process dies after each prefix of `sim`'s trace while the machine keeps running,
/// restarts and recovers (the outcome must be allowed at that prefix); then power is lost
/// during or after that recovery. Once recovery returned its outcome is durable; before,
/// anything allowed at the prefix is. Returns the number of restarts.
fn restart_sweep(
    sim: &SimVfs,
    what: &str,
    allowed_at: impl Fn(usize) -> Vec<Tree>,
    rounds: u64,
    rng: &mut Rng,
    tally: &mut Tally,
) -> Result<u64, String> {
    for died_at in 0..=sim.trace_len() {
        let what = format!("{what} died at {died_at}");
        let allowed = allowed_at(died_at);
        let restarted = sim.restart(died_at);
        recover(&restarted, RT).map_err(|e| format!("{what}: recovery: {e}"))?;
        let outcome = rev(&restarted);
        ensure!(allowed.contains(&outcome), "{what}: I1 violated after restart");
        ensure!(sim_clean(&restarted), "{what}: I4 violated after restart");
        let end = restarted.trace_len();
        // Every point of the recovery once, then random ones.
        let points =
            (died_at..=end).chain((0..rounds).map(|_| died_at + rng.below((end - died_at) as u64 + 1) as usize));
        for at in points.collect::<Vec<_>>() {
            let permitted: Vec<&Tree> = if at == end { vec![&outcome] } else { allowed.iter().collect() };
            check_state(&restarted, at, rng.next(), &permitted, &what, tally)?;
            tally.after_restart += 1;
        }
    }
    Ok(sim.trace_len() as u64 + 1)
}

pub(crate) fn run() -> Outcome {
    let target = crate::support::count("SCRIPTORIUM_T3_STATES", 10_000, 1_000_000);
    let mut rng = Rng::from_env("t3");
    let mut tally = Tally { states: 0, after_restart: 0, nested: 0, after: 0, torn: 0, dropped: 0 };

    // Measure the traces first to spread the target over every prefix.
    let mut runs: Vec<(String, SimVfs, Tree, Tree)> = Vec::new();
    for scenario in SCENARIOS {
        let sim = base();
        let before = rev(&sim);
        // The direct comparison stands for the revision: check they agree.
        ensure!(tree_revision(&before) == revision(&sim, RT).map_err(|e| e.to_string())?, "tree/revision mismatch");
        let changes = scenario_changes(scenario, &sim);
        sim.checkpoint();
        install(&sim, RT, &changes, &ok).map_err(|e| format!("{scenario}: {e}"))?;
        let after = rev(&sim.live_copy());
        ensure!(after != before, "{scenario} changes nothing");
        runs.push(((*scenario).to_owned(), sim, before, after));
    }
    let prefixes: usize = runs.iter().map(|(_, sim, _, _)| sim.trace_len() + 1).sum();
    let per_prefix = (target / prefixes as u64 / 2).max(1);
    // Power losses after each process restart: the first at the end of recovery.
    let rounds = (per_prefix / 4).max(3);

    for (scenario, sim, before, after) in &runs {
        let end = sim.trace_len();
        sweep(
            sim,
            per_prefix,
            &mut rng,
            scenario,
            |prefix| if prefix == end { vec![after.clone()] } else { vec![before.clone(), after.clone()] },
            &mut tally,
        )?;
    }

    let mut restarts = 0u64;
    for (scenario, sim, before, after) in &runs {
        let end = sim.trace_len();
        let allowed =
            |prefix: usize| if prefix == end { vec![after.clone()] } else { vec![before.clone(), after.clone()] };
        restarts += restart_sweep(sim, scenario, allowed, rounds, &mut rng, &mut tally)?;
    }

    // Two installs back to back: once the first returned, the state is s1 or s2, never
    // s0, and the first journal is never replayed over the second.
    let sim = base();
    let s0 = rev(&sim);
    let mei = scriptorium_transaction::Vfs::read(&sim, Path::new("topics/people/mei.md")).map_err(|e| e.to_string())?;
    let first = scenario_changes("delete-topic", &sim);
    sim.checkpoint();
    install(&sim, RT, &first, &ok).map_err(|e| e.to_string())?;
    let first_returned = sim.trace_len();
    let s1 = rev(&sim.live_copy());
    // The second transaction brings back the bytes the first deleted: replaying the
    // first journal's delete over it would lose them.
    let mut second: Changes = scenario_changes("archive-append", &sim);
    second.insert("topics/people/mei.md".into(), Some(mei));
    second.insert("topics/prefs.md".into(), Some(b"rewritten by the second transaction\n".to_vec()));
    install(&sim, RT, &second, &ok).map_err(|e| e.to_string())?;
    let s2 = rev(&sim.live_copy());
    let end = sim.trace_len();
    let per_prefix_pair = (target / 2 / (end as u64 + 1)).max(1);
    let allowed = |prefix: usize| match prefix {
        p if p == end => vec![s2.clone()],
        p if p >= first_returned => vec![s1.clone(), s2.clone()],
        _ => vec![s0.clone(), s1.clone()],
    };
    sweep(&sim, per_prefix_pair, &mut rng, "two installs", allowed, &mut tally)?;
    restarts += restart_sweep(&sim, "two installs", allowed, rounds, &mut rng, &mut tally)?;

    // Hand edits after an install returned, made durable the careful way: a power loss
    // may bring back the finished journal (its unlink is synced only by the next install
    // or for a delete), and replaying it must leave the edits alone.
    for (scenario, path, edit) in [
        ("edit-topic", "topics/prefs.md", None),
        ("delete-topic", "topics/people/mei.md", None),
        ("edit-topic", "topics/prefs.md", Some(&b"edited by hand after the install\n"[..])),
    ] {
        let sim = base();
        let old = scriptorium_transaction::Vfs::read(&sim, Path::new(path)).map_err(|e| e.to_string())?;
        let changes = scenario_changes(scenario, &sim);
        sim.checkpoint();
        install(&sim, RT, &changes, &ok).map_err(|e| format!("{scenario}: {e}"))?;
        // Without an edit given: put the old bytes back (undoing the transaction's change
        // to that file by hand, as `git checkout` would).
        write_atomic(&sim, Path::new(path), edit.unwrap_or(&old)).map_err(|e| e.to_string())?;
        let edited = rev(&sim.live_copy());
        let what = format!("{scenario}, then {path} edited by hand");
        let end = sim.trace_len();
        for _ in 0..per_prefix.max(50) {
            check_state(&sim, end, rng.next(), &[&edited], &what, &mut tally)?;
        }
    }

    // A committed journal of the older layout (`txn/<id>/`), one file already installed.
    {
        let sim = base();
        let changes = scenario_changes("edit-topic", &sim);
        let journal = Path::new(RT).join(TXN_DIR).join("0000000000000000000000001-00000001");
        let mut manifest = Vec::new();
        for (index, (path, bytes)) in changes.iter().enumerate() {
            let bytes = bytes.as_deref().ok_or("edit-topic deletes nothing")?;
            let old = scriptorium_transaction::Vfs::read(&sim, Path::new(path)).map_err(|e| e.to_string())?;
            manifest.push(format!(r#"{{"path":"{path}","old":"{}","new":"{}"}}"#, sha256_hex(&old), sha256_hex(bytes)));
            sim.put_file(&journal.join(format!("{index}.staged")), bytes).map_err(|e| e.to_string())?;
        }
        let (first, bytes) = changes.iter().next().ok_or("no change")?;
        sim.put_file(Path::new(first), bytes.as_deref().unwrap_or_default()).map_err(|e| e.to_string())?;
        scriptorium_transaction::Vfs::remove_file(&sim, &journal.join("0.staged")).map_err(|e| e.to_string())?;
        let manifest = format!(r#"{{"format":"scriptorium-txn-v1","entries":[{}]}}"#, manifest.join(","));
        sim.put_file(&journal.join("COMMITTED"), manifest.as_bytes()).map_err(|e| e.to_string())?;
        sim.checkpoint();
        let live = sim.live_copy();
        recover(&live, RT).map_err(|e| format!("old layout: {e}"))?;
        let expected = rev(&live);
        let after = base();
        for (path, bytes) in &changes {
            after.put_file(Path::new(path), bytes.as_deref().unwrap_or_default()).map_err(|e| e.to_string())?;
        }
        ensure!(expected == rev(&after), "old layout: the journal was not rolled forward");
        recover(&sim, RT).map_err(|e| format!("old layout: {e}"))?;
        sweep(&sim, per_prefix.max(20), &mut rng, "old layout", |_| vec![expected.clone()], &mut tally)?;
        restarts += restart_sweep(&sim, "old layout", |_| vec![expected.clone()], rounds, &mut rng, &mut tally)?;
    }

    // The reference's interrupted install (rolled back to the old tree) and its
    // completed one (kept), recovered under power loss.
    for (label, keep_new) in [("reference backup, interrupted", false), ("reference backup, completed", true)] {
        let sim = base();
        let old = rev(&sim);
        let backup = Path::new(".scriptorium-block-backup");
        for item in ["sources", "topics", "timeline", ".scriptorium/runtime.json"] {
            if keep_new && item != "topics" {
                continue;
            }
            scriptorium_transaction::create_dir_all(&sim, backup.join(item).parent().expect("parent"))
                .map_err(|e| e.to_string())?;
            scriptorium_transaction::Vfs::rename(&sim, Path::new(item), &backup.join(item))
                .map_err(|e| e.to_string())?;
        }
        sim.put_file(Path::new("topics/prefs.md"), b"new prefs\n").map_err(|e| e.to_string())?;
        sim.put_file(Path::new("topics/people/mei.md"), b"new mei\n").map_err(|e| e.to_string())?;
        let new = rev(&sim);
        sim.checkpoint();
        recover(&sim, RT).map_err(|e| format!("{label}: {e}"))?;
        let expected = if keep_new { new } else { old };
        ensure!(rev(&sim) == expected, "{label}: recovery went the wrong way");
        sweep(&sim, per_prefix.max(20), &mut rng, label, |_| vec![expected.clone()], &mut tally)?;
        restarts += restart_sweep(&sim, label, |_| vec![expected.clone()], rounds, &mut rng, &mut tally)?;
    }

    ensure!(tally.states >= target, "only {} states for a target of {target}", tally.states);
    Ok(format!(
        "{} power-loss states ({} torn writes, {} dropped operations; {} of them after {restarts} process restarts) + {} power losses during recovery; {} landed on the after-state",
        tally.states, tally.torn, tally.dropped, tally.after_restart, tally.nested, tally.after
    ))
}

/// A SHA-256 in lowercase hex, as journal manifests write it.
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|byte| format!("{byte:02x}")).collect()
}
