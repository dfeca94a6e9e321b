//! T4: for every scenario, every operation number N of its install, every error kind
//! (EIO, ENOSPC, EDQUOT, EACCES) and both transient and persistent faults: the install
//! returns a clean `TXN_IO` error (or succeeds when the failed operation did not matter),
//! and after reopening — recovery on the live state, faults gone — I1 holds exactly as the
//! error says: `committed: false` means the before-state, success or `committed: true`
//! the after-state. A couple of power-loss states of the failed run are checked too,
//! because a failed fsync leaves data that may not be durable.

use scriptorium_transaction::{ErrorCode, Fault, FaultKind, SimVfs, install, recover};
use serde_json::Value;

use crate::ensure;
use crate::support::{Outcome, RT, Rng, SCENARIOS, read_tree, scenario_changes, sim_clean, sim_tree, tx_base};

fn ok() -> Result<(), scriptorium_transaction::Error> {
    Ok(())
}

fn rev(vfs: &SimVfs) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    sim_tree(vfs)
}

pub(crate) fn run() -> Outcome {
    let mut rng = Rng::from_env("t4");
    let files = read_tree(&tx_base());
    let (mut cases, mut errors, mut committed_errors, mut crash_states) = (0u64, 0u64, 0u64, 0u64);
    for scenario in SCENARIOS {
        let clean = SimVfs::from_files(files.clone()).map_err(|e| e.to_string())?;
        let before = rev(&clean);
        let changes = scenario_changes(scenario, &clean);
        clean.set_fault(None);
        install(&clean, RT, &changes, &ok).map_err(|e| e.to_string())?;
        let operations = clean.op_count();
        let after = rev(&clean.live_copy());

        for kind in FaultKind::ALL {
            for persistent in [false, true] {
                for at in 1..=operations + 1 {
                    let sim = SimVfs::from_files(files.clone()).map_err(|e| e.to_string())?;
                    sim.set_fault(Some(Fault { at, kind, persistent }));
                    let result = install(&sim, RT, &changes, &ok);
                    let what = format!("{scenario} {kind:?} at {at} persistent={persistent}");
                    cases += 1;
                    let expected = match &result {
                        Ok(_) => &after,
                        Err(error) => {
                            errors += 1;
                            ensure!(error.code() == ErrorCode::Io, "{what}: unclean error code {}", error.code());
                            match error.details().get("committed") {
                                Some(Value::Bool(true)) => {
                                    committed_errors += 1;
                                    &after
                                }
                                _ => &before,
                            }
                        }
                    };
                    // Reopen: the live state with the faults gone, recovered.
                    let reopened = sim.live_copy();
                    recover(&reopened, RT).map_err(|e| format!("{what}: recovery after the fault failed: {e}"))?;
                    let got = rev(&reopened);
                    ensure!(&got == expected, "{what}: I1 violated ({result:?})");
                    ensure!(sim_clean(&reopened), "{what}: I4 violated after reopen");

                    // Power loss after the failure: before or after, never a mix; an
                    // uncommitted failure can only ever be the before-state.
                    for _ in 0..2 {
                        let image = sim.crash(rng.below(sim.trace_len() as u64 + 1) as usize, rng.next());
                        recover(&image.vfs, RT).map_err(|e| format!("{what}: recovery after power loss: {e}"))?;
                        let got = rev(&image.vfs);
                        crash_states += 1;
                        let allowed = if expected == &before { got == before } else { got == before || got == after };
                        ensure!(allowed, "{what}: I1 violated after power loss");
                    }
                }
            }
        }
    }
    ensure!(cases >= 1000, "only {cases} fault cases");
    Ok(format!(
        "{cases} fault cases ({errors} clean TXN_IO errors, {committed_errors} of them after the commit point) + {crash_states} power-loss states after a fault"
    ))
}
