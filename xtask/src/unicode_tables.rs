//! `cargo xtask gen-unicode-tables`: regenerate the retrieval tokenizer's frozen Unicode tables.
//!
//! The tokenizer must classify and fold text exactly as the reference's Python 3.11 does (Unicode 14),
//! so the tables come from CPython's `unicodedata`, not from Rust's std (05-dependencies §A9). The
//! output is committed; building and CI never need Python, only rerunning this command does.

use std::process::Command;

use anyhow::{Context, bail};

use crate::Ctx;

/// The generator script, relative to the workspace root.
const SCRIPT: &str = "xtask/gen/unicode_tables.py";
/// The generated Rust module, relative to the workspace root.
const OUTPUT: &str = "crates/scriptorium-retrieval/src/tokenize/tables.rs";

/// Run `python3 SCRIPT` and write its stdout to `OUTPUT`. `--check` compares instead of writing.
pub(crate) fn main(ctx: &Ctx, args: &[String]) -> anyhow::Result<()> {
    let check = match args {
        [] => false,
        [flag] if flag == "--check" => true,
        _ => bail!("usage: cargo xtask gen-unicode-tables [--check]"),
    };
    let output = Command::new("python3")
        .arg(ctx.root.join(SCRIPT))
        .current_dir(&ctx.root)
        .output()
        .context("cannot start python3 (the generator needs Python 3.11, whose Unicode database is 14.0.0)")?;
    if !output.status.success() {
        bail!("{SCRIPT} failed ({}): {}", output.status, String::from_utf8_lossy(&output.stderr).trim());
    }
    let target = ctx.root.join(OUTPUT);
    if check {
        let committed = std::fs::read(&target).with_context(|| format!("cannot read {OUTPUT}"))?;
        if committed != output.stdout {
            bail!("{OUTPUT} differs from what {SCRIPT} generates: run `cargo xtask gen-unicode-tables`");
        }
        println!("{OUTPUT} is up to date");
    } else {
        std::fs::write(&target, &output.stdout).with_context(|| format!("cannot write {OUTPUT}"))?;
        println!("wrote {OUTPUT}");
    }
    Ok(())
}
