//! `cargo xtask fuzz …`: cargo-fuzz with a time budget, a scratch corpus and deliberate merges.
//!
//! - `list`: the targets, read from the `[[bin]]` names of `fuzz/Cargo.toml`.
//! - `run [TARGET…] [--budget 60s]`: fuzz each target (all by default) for a share of the budget,
//!   at least 10 s each, then report how many inputs each one executed.
//! - `replay`: run the `fuzz_replay` tests through `cargo test`; they walk the committed corpora and
//!   crashers on stable with no cargo-fuzz.
//! - `merge TARGET`: add the scratch inputs that raise coverage to `fuzz/corpus/TARGET`, within caps.
//! - `tmin TARGET ARTIFACT`: minimise a crasher before it is committed.
//!
//! New inputs land in `target/fuzz-scratch/<target>`, which is passed to libFuzzer *first*: libFuzzer
//! writes only into its first corpus directory, so the committed seeds in `fuzz/corpus/<target>` stay
//! untouched and the committed corpus grows only through `merge`, a reviewable change.
//!
//! The machine has only the stable toolchain, so targets build with `--sanitizer none` (cargo-fuzz's
//! reduced mode); sanitizer runs are for machines with nightly. `RUSTC_BOOTSTRAP` is never set: it does
//! not give working sanitizers and would hide which toolchain is really in use.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail, ensure};

use crate::{Ctx, run_checked};

/// The budget of `run` when `--budget` is not given, in seconds.
const DEFAULT_BUDGET_SECS: u64 = 60;
/// Below this a run spends most of its time loading the corpus, so shorter shares are raised to it.
const MIN_SECS_PER_TARGET: u64 = 10;
/// The largest input libFuzzer may generate, and the largest file `merge` accepts into a committed corpus.
const MAX_INPUT_LEN: u64 = 64 * 1024;
/// A committed corpus stays small enough to review and to replay in `cargo test` on 2 cores.
const MAX_CORPUS_FILES: usize = 200;
/// The libFuzzer statistic `run` reports per target.
const EXECUTED_UNITS_STAT: &str = "stat::number_of_executed_units:";

const USAGE: &str = "\
usage: cargo xtask fuzz list
       cargo xtask fuzz run [TARGET...] [--budget 60s]
       cargo xtask fuzz replay
       cargo xtask fuzz merge TARGET
       cargo xtask fuzz tmin TARGET ARTIFACT";

/// Dispatch a `fuzz` subcommand.
pub(crate) fn main(ctx: &Ctx, args: &[String]) -> anyhow::Result<()> {
    let Some((command, rest)) = args.split_first() else {
        bail!("no fuzz command given\n\n{USAGE}");
    };
    match (command.as_str(), rest) {
        ("list", []) => {
            for target in targets(ctx)? {
                println!("{target}");
            }
            Ok(())
        }
        ("run", _) => run(ctx, rest),
        ("replay", []) => replay(ctx),
        ("merge", [target]) => merge(ctx, target),
        ("tmin", [target, artifact]) => tmin(ctx, target, Path::new(artifact)),
        _ => bail!("bad fuzz command line: {}\n\n{USAGE}", args.join(" ")),
    }
}

/// The fuzz targets: the `[[bin]]` names of `fuzz/Cargo.toml`, in file order.
fn targets(ctx: &Ctx) -> anyhow::Result<Vec<String>> {
    let path = ctx.root.join("fuzz").join("Cargo.toml");
    let manifest = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let names = bin_names(&manifest);
    ensure!(!names.is_empty(), "{} declares no [[bin]] fuzz targets", path.display());
    Ok(names)
}

/// The `name` of every `[[bin]]` table in a Cargo manifest.
///
/// A line-based reading is enough for the manifests cargo-fuzz writes and keeps xtask free of a TOML parser.
fn bin_names(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_bin = false;
    for line in manifest.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
            continue;
        }
        if !in_bin {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        if key.trim() != "name" {
            continue;
        }
        if let Some(name) = value.trim().strip_prefix('"').and_then(|v| v.split_once('"')).map(|(name, _)| name) {
            names.push(name.to_owned());
        }
    }
    names
}

/// Parse a budget such as `60s`, `60`, `2m` or `1h` into seconds.
fn parse_budget(text: &str) -> anyhow::Result<u64> {
    let (digits, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let value: u64 = digits.parse().with_context(|| format!("budget `{text}` does not start with a number"))?;
    let seconds = match unit {
        "s" => Some(value),
        "m" => value.checked_mul(60),
        "h" => value.checked_mul(3600),
        _ => bail!("budget `{text}`: the unit must be s, m or h"),
    };
    let seconds = seconds.with_context(|| format!("budget `{text}` is too large"))?;
    ensure!(seconds > 0, "budget `{text}` is zero");
    Ok(seconds)
}

/// Seconds per target when `total` is shared by `targets` targets, never below [`MIN_SECS_PER_TARGET`].
fn share(total: u64, targets: usize) -> u64 {
    let targets = u64::try_from(targets.max(1)).unwrap_or(u64::MAX);
    (total / targets).max(MIN_SECS_PER_TARGET)
}

/// The dictionary file name for a target: its name up to the first `_`, so `archive_parse` and
/// `archive_roundtrip` share `archive.dict` and `topic_parse` uses `topic.dict`.
fn dict_name(target: &str) -> String {
    let stem = target.split('_').next().unwrap_or(target);
    format!("{stem}.dict")
}

/// The value of libFuzzer's `stat::number_of_executed_units` line, if `line` is that line.
fn executed_units(line: &str) -> Option<u64> {
    line.trim().strip_prefix(EXECUTED_UNITS_STAT)?.trim().parse().ok()
}

/// The number of passed tests in a libtest `test result:` summary line.
fn passed_tests(line: &str) -> Option<u64> {
    let rest = line.trim().strip_prefix("test result: ok.")?;
    rest.trim().split_once(' ').filter(|(_, word)| word.starts_with("passed")).and_then(|(n, _)| n.parse().ok())
}

/// Fail with the install command when cargo-fuzz is missing.
fn require_cargo_fuzz(ctx: &Ctx) -> anyhow::Result<()> {
    let installed = ctx
        .cargo()
        .args(["fuzz", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    ensure!(installed, "cargo-fuzz is not installed; install it with: cargo install cargo-fuzz --locked");
    Ok(())
}

/// Whether the toolchain that builds `fuzz/` is a nightly (or locally built) one that can use sanitizers.
fn rustc_is_nightly(ctx: &Ctx) -> anyhow::Result<bool> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| OsString::from("rustc"));
    // Ask from inside fuzz/ so a toolchain file there, if one is ever added, is honoured.
    let output = Command::new(&rustc)
        .arg("--version")
        .current_dir(ctx.root.join("fuzz"))
        .output()
        .with_context(|| format!("cannot run {} --version", rustc.to_string_lossy()))?;
    let version = String::from_utf8_lossy(&output.stdout);
    Ok(version.contains("-nightly") || version.contains("-dev"))
}

/// Checks shared by the commands that build and run a target.
struct Fuzzer<'a> {
    ctx: &'a Ctx,
    nightly: bool,
}

impl<'a> Fuzzer<'a> {
    fn new(ctx: &'a Ctx) -> anyhow::Result<Fuzzer<'a>> {
        require_cargo_fuzz(ctx)?;
        Ok(Fuzzer { ctx, nightly: rustc_is_nightly(ctx)? })
    }

    /// `cargo fuzz <command> --fuzz-dir fuzz [--sanitizer none] <target>`, run from the workspace root.
    fn command(&self, command: &str, target: &str) -> Command {
        let mut cmd = self.ctx.cargo();
        cmd.args(["fuzz", command, "--fuzz-dir", "fuzz"]);
        if !self.nightly {
            // Stable cannot build sanitizers: cargo-fuzz's reduced mode (cargo-fuzz PR #440).
            cmd.args(["--sanitizer", "none"]);
        }
        cmd.arg(target);
        cmd
    }

    /// The libFuzzer options every run and merge uses, so runs are comparable and bounded.
    fn libfuzzer_options(&self, target: &str) -> Vec<OsString> {
        let mut options: Vec<OsString> =
            vec![format!("-max_len={MAX_INPUT_LEN}").into(), "-timeout=10".into(), "-rss_limit_mb=2048".into()];
        let dict = self.ctx.root.join("fuzz").join("dict").join(dict_name(target));
        if dict.is_file() {
            let mut option = OsString::from("-dict=");
            option.push(dict.as_os_str());
            options.push(option);
        }
        options.push("-print_final_stats=1".into());
        options
    }

    fn scratch_dir(&self, target: &str) -> PathBuf {
        self.ctx.root.join("target").join("fuzz-scratch").join(target)
    }

    fn corpus_dir(&self, target: &str) -> PathBuf {
        self.ctx.root.join("fuzz").join("corpus").join(target)
    }

    /// Fuzz one target for `seconds`; the number of executed inputs when libFuzzer reported it.
    fn run_target(&self, target: &str, seconds: u64) -> anyhow::Result<RunOutcome> {
        let scratch = self.scratch_dir(target);
        std::fs::create_dir_all(&scratch).with_context(|| format!("cannot create {}", scratch.display()))?;
        let mut cmd = self.command("run", target);
        // The scratch directory goes first: libFuzzer writes new inputs only into its first corpus directory.
        // The shape stays the same on every run (scratch, then seeds) so cargo-fuzz does not rebuild.
        cmd.arg(&scratch);
        let corpus = self.corpus_dir(target);
        if corpus.is_dir() {
            cmd.arg(&corpus);
        }
        cmd.arg("--").arg(format!("-max_total_time={seconds}")).args(self.libfuzzer_options(target));
        cmd.stderr(Stdio::piped());
        let mut executed = None;
        let success = stream_lines(&mut cmd, Stream::Stderr, |line| {
            if let Some(units) = executed_units(line) {
                executed = Some(units);
            }
        })?;
        Ok(RunOutcome { target: target.to_owned(), seconds, success, executed })
    }
}

/// What one timed run of one target produced.
struct RunOutcome {
    target: String,
    seconds: u64,
    success: bool,
    executed: Option<u64>,
}

impl RunOutcome {
    /// A run that executed nothing tested nothing, so it counts as a failure too.
    fn ok(&self) -> bool {
        self.success && self.executed.is_some_and(|units| units > 0)
    }
}

#[derive(Clone, Copy)]
enum Stream {
    Stdout,
    Stderr,
}

/// Run `cmd`, echoing the chosen stream line by line while `on_line` inspects each line.
///
/// Lines are read as bytes and echoed unchanged, because a crash report may print raw input bytes.
fn stream_lines(cmd: &mut Command, stream: Stream, mut on_line: impl FnMut(&str)) -> anyhow::Result<bool> {
    match stream {
        Stream::Stdout => cmd.stdout(Stdio::piped()),
        Stream::Stderr => cmd.stderr(Stdio::piped()),
    };
    let mut child = cmd.spawn().with_context(|| format!("cannot start {cmd:?}"))?;
    let pipe: Box<dyn Read> = match stream {
        Stream::Stdout => Box::new(child.stdout.take().context("stdout was piped above")?),
        Stream::Stderr => Box::new(child.stderr.take().context("stderr was piped above")?),
    };
    let mut reader = BufReader::new(pipe);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        match stream {
            Stream::Stdout => std::io::stdout().write_all(&line)?,
            Stream::Stderr => std::io::stderr().write_all(&line)?,
        }
        on_line(&String::from_utf8_lossy(&line));
    }
    Ok(child.wait()?.success())
}

fn run(ctx: &Ctx, args: &[String]) -> anyhow::Result<()> {
    let known = targets(ctx)?;
    let mut budget = DEFAULT_BUDGET_SECS;
    let mut chosen = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if let Some(value) = arg.strip_prefix("--budget=") {
            budget = parse_budget(value)?;
        } else if arg == "--budget" {
            budget = parse_budget(args.next().context("--budget needs a value such as 60s")?)?;
        } else if arg.starts_with('-') {
            bail!("unknown option `{arg}`\n\n{USAGE}");
        } else if known.contains(arg) {
            chosen.push(arg.clone());
        } else {
            bail!("unknown fuzz target `{arg}`; fuzz/Cargo.toml declares: {}", known.join(", "));
        }
    }
    if chosen.is_empty() {
        chosen = known;
    }
    let fuzzer = Fuzzer::new(ctx)?;
    let seconds = share(budget, chosen.len());
    let total = seconds.saturating_mul(u64::try_from(chosen.len()).unwrap_or(u64::MAX));
    if total > budget {
        eprintln!(
            "note: {} targets at least {MIN_SECS_PER_TARGET} s each take {total} s, over the {budget} s budget",
            chosen.len()
        );
    }
    eprintln!("fuzzing {} for {seconds} s each (release build of fuzz/ not counted)", chosen.join(", "));
    let mut outcomes = Vec::new();
    for target in &chosen {
        outcomes.push(fuzzer.run_target(target, seconds)?);
    }
    eprintln!("\nfuzz summary:");
    for outcome in &outcomes {
        let executed = outcome.executed.map_or_else(|| "no stats".to_owned(), |units| format!("{units} execs"));
        let verdict = if outcome.ok() { "ok" } else { "FAILED" };
        eprintln!("  {:<24} {:>5} s  {executed:>18}  {verdict}", outcome.target, outcome.seconds);
    }
    let failed: Vec<&str> = outcomes.iter().filter(|o| !o.ok()).map(|o| o.target.as_str()).collect();
    ensure!(
        failed.is_empty(),
        "fuzzing failed for {}: a reproducer is under fuzz/artifacts/<target>/ (none if the run executed nothing); \
         minimise it (`cargo xtask fuzz tmin TARGET ARTIFACT`), fix the bug, commit the artifact, \
         then `cargo xtask fuzz replay`",
        failed.join(", ")
    );
    Ok(())
}

/// Packages under `crates/` that hold a `fuzz_replay.rs` test module.
fn replay_packages(ctx: &Ctx) -> anyhow::Result<Vec<String>> {
    let mut packages = Vec::new();
    let crates = ctx.root.join("crates");
    let mut entries: Vec<_> = std::fs::read_dir(&crates)
        .with_context(|| format!("cannot list {}", crates.display()))?
        .collect::<Result<_, _>>()?;
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        if entry.file_type()?.is_dir() && contains_file_named(&entry.path(), "fuzz_replay.rs")? {
            packages.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    Ok(packages)
}

fn contains_file_named(dir: &Path, name: &str) -> anyhow::Result<bool> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_file() && entry.file_name() == name {
            return Ok(true);
        }
        if kind.is_dir() && entry.file_name() != "target" && contains_file_named(&entry.path(), name)? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn replay(ctx: &Ctx) -> anyhow::Result<()> {
    let packages = replay_packages(ctx)?;
    ensure!(!packages.is_empty(), "no crates/*/**/fuzz_replay.rs found: nothing replays the committed corpora");
    let mut cmd = ctx.cargo();
    cmd.arg("test");
    for package in &packages {
        cmd.args(["-p", package]);
    }
    cmd.args(["--", "fuzz_replay"]);
    let mut passed = 0;
    let success = stream_lines(&mut cmd, Stream::Stdout, |line| passed += passed_tests(line).unwrap_or(0))?;
    ensure!(success, "corpus replay failed: {cmd:?}");
    // A filter that matches nothing passes silently; replaying zero inputs must not look like success.
    ensure!(passed > 0, "no test matched `fuzz_replay` in {}", packages.join(", "));
    eprintln!("replayed the committed corpora: {passed} tests passed in {}", packages.join(", "));
    Ok(())
}

/// Regular files directly inside `dir`, sorted by name; empty when `dir` does not exist.
fn files_in(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
}

fn merge(ctx: &Ctx, target: &str) -> anyhow::Result<()> {
    let known = targets(ctx)?;
    ensure!(known.iter().any(|t| t == target), "unknown fuzz target `{target}`; known: {}", known.join(", "));
    let fuzzer = Fuzzer::new(ctx)?;
    let scratch = fuzzer.scratch_dir(target);
    ensure!(
        !files_in(&scratch)?.is_empty(),
        "{} is empty: run `cargo xtask fuzz run {target}` first",
        scratch.display()
    );
    let corpus = fuzzer.corpus_dir(target);
    let committed = files_in(&corpus)?;

    // Start the merge directory from the committed seeds: libFuzzer's -merge=1 keeps everything already in
    // the first directory and adds only inputs that raise coverage, so human-named seeds keep their names.
    let fresh = ctx.root.join("target").join("fuzz-merge").join(target);
    if fresh.exists() {
        std::fs::remove_dir_all(&fresh).with_context(|| format!("cannot clear {}", fresh.display()))?;
    }
    std::fs::create_dir_all(&fresh).with_context(|| format!("cannot create {}", fresh.display()))?;
    for seed in &committed {
        let name = seed.file_name().context("a listed file has a name")?;
        std::fs::copy(seed, fresh.join(name)).with_context(|| format!("cannot copy {}", seed.display()))?;
    }
    let mut cmd = fuzzer.command("run", target);
    cmd.arg(&fresh).arg(&scratch).arg("--").arg("-merge=1").args(fuzzer.libfuzzer_options(target));
    run_checked(&mut cmd)?;

    let mut added = Vec::new();
    let mut too_large = Vec::new();
    for file in files_in(&fresh)? {
        let name = file.file_name().context("a listed file has a name")?;
        if corpus.join(name).exists() {
            continue;
        }
        let len = std::fs::metadata(&file)?.len();
        if len > MAX_INPUT_LEN {
            too_large.push(format!("{} ({len} bytes)", file.display()));
        }
        added.push(file);
    }
    ensure!(
        too_large.is_empty(),
        "refusing to merge: inputs over {MAX_INPUT_LEN} bytes:\n  {}",
        too_large.join("\n  ")
    );
    let total = committed.len() + added.len();
    ensure!(
        total <= MAX_CORPUS_FILES,
        "refusing to merge: fuzz/corpus/{target} would hold {total} files (cap {MAX_CORPUS_FILES}); \
         minimise first (`-merge=1` into an empty directory) or pick the inputs by hand from {}",
        fresh.display()
    );
    std::fs::create_dir_all(&corpus).with_context(|| format!("cannot create {}", corpus.display()))?;
    for file in &added {
        let name = file.file_name().context("a listed file has a name")?;
        std::fs::copy(file, corpus.join(name)).with_context(|| format!("cannot copy {}", file.display()))?;
    }
    eprintln!(
        "merged {} new inputs into fuzz/corpus/{target} ({total} files); review them with `git status fuzz/corpus`",
        added.len()
    );
    Ok(())
}

fn tmin(ctx: &Ctx, target: &str, artifact: &Path) -> anyhow::Result<()> {
    let known = targets(ctx)?;
    ensure!(known.iter().any(|t| t == target), "unknown fuzz target `{target}`; known: {}", known.join(", "));
    let artifact =
        if artifact.is_absolute() { artifact.to_path_buf() } else { std::env::current_dir()?.join(artifact) };
    ensure!(artifact.is_file(), "{} is not a file", artifact.display());
    let fuzzer = Fuzzer::new(ctx)?;
    let mut cmd = fuzzer.command("tmin", target);
    cmd.arg(&artifact).args(["--", "-timeout=10", "-rss_limit_mb=2048"]);
    run_checked(&mut cmd)?;
    eprintln!(
        "commit the minimised input under fuzz/artifacts/{target}/ (and a named copy in the crate's \
         tests/fixtures/fuzzed/), fix the bug, then run `cargo xtask fuzz replay`"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bin_names_reads_only_bin_tables() {
        let manifest = r#"
[package]
name = "scriptorium-fuzz"

[dependencies]
libfuzzer-sys = "0.4"

[[bin]]
name = "archive_parse"   # the scanner
path = "fuzz_targets/archive_parse.rs"
test = false

[[bin]]
path = "fuzz_targets/topic_parse.rs"
name="topic_parse"
"#;
        assert_eq!(bin_names(manifest), ["archive_parse", "topic_parse"]);
        assert!(bin_names("[package]\nname = \"x\"\n").is_empty());
    }

    #[test]
    fn budget_units() -> anyhow::Result<()> {
        assert_eq!(parse_budget("60s")?, 60);
        assert_eq!(parse_budget("45")?, 45);
        assert_eq!(parse_budget("2m")?, 120);
        assert_eq!(parse_budget("1h")?, 3600);
        assert!(parse_budget("0s").is_err());
        assert!(parse_budget("s").is_err());
        assert!(parse_budget("10 s").is_err());
        assert!(parse_budget("5d").is_err());
        assert!(parse_budget("99999999999999999999h").is_err());
        Ok(())
    }

    #[test]
    fn budget_share_has_a_floor() {
        assert_eq!(share(60, 3), 20);
        assert_eq!(share(60, 2), 30);
        assert_eq!(share(25, 3), MIN_SECS_PER_TARGET);
        assert_eq!(share(60, 0), 60);
    }

    #[test]
    fn dictionary_per_target_family() {
        assert_eq!(dict_name("archive_parse"), "archive.dict");
        assert_eq!(dict_name("archive_roundtrip"), "archive.dict");
        assert_eq!(dict_name("topic_parse"), "topic.dict");
        assert_eq!(dict_name("plain"), "plain.dict");
    }

    #[test]
    fn reads_libfuzzer_final_stats() {
        assert_eq!(executed_units("stat::number_of_executed_units: 1234567\n"), Some(1_234_567));
        assert_eq!(executed_units("stat::average_exec_per_sec:     20576"), None);
        assert_eq!(executed_units("#2 INITED cov: 12 ft: 13 corp: 1/1b exec/s: 0"), None);
    }

    #[test]
    fn reads_libtest_summaries() {
        assert_eq!(
            passed_tests("test result: ok. 12 passed; 0 failed; 0 ignored; 0 measured; 3 filtered out"),
            Some(12)
        );
        assert_eq!(passed_tests("test result: ok. 0 passed; 0 failed; 0 ignored"), Some(0));
        assert_eq!(passed_tests("test result: FAILED. 1 passed; 1 failed"), None);
        assert_eq!(passed_tests("running 3 tests"), None);
    }

    #[test]
    fn a_run_without_executions_fails() {
        let outcome = |success, executed| RunOutcome { target: "t".into(), seconds: 10, success, executed };
        assert!(outcome(true, Some(5)).ok());
        assert!(!outcome(true, Some(0)).ok());
        assert!(!outcome(true, None).ok());
        assert!(!outcome(false, Some(5)).ok());
    }
}
