//! `cargo xtask bench [ARGS…]`: the criterion benchmarks, which live in their own member.
//!
//! `scriptorium-benches` is left out of `default-members` so that a plain `cargo build` never pays for
//! criterion; this command names it explicitly. Benches are not part of CI: a shared 2-core machine
//! gives noise, not numbers.

use crate::{Ctx, run_checked};

/// Run `cargo bench -p scriptorium-benches -- ARGS`; ARGS go to criterion (a filter, `--save-baseline`, …).
pub(crate) fn main(ctx: &Ctx, args: &[String]) -> anyhow::Result<()> {
    let mut cmd = ctx.cargo();
    cmd.args(["bench", "-p", "scriptorium-benches", "--"]).args(args);
    run_checked(&mut cmd)
}
