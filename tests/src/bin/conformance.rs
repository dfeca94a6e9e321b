//! `conformance DIR`: run every case of a golden-vector set and print one line per case,
//! `PASS <id>`, `FAIL <id> <reason>`, `DIVERGES <id> <decision>` or `TODO <id> <layer>`,
//! then `N passed, M failed`. Exits 1 on any failure, 2 when the set cannot be read.
#![allow(clippy::print_stdout, clippy::print_stderr)] // A command-line report is its job.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use scriptorium_tests::conformance::{Outcome, load_cases, run_case};

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: conformance <VECTOR-DIR>");
        return ExitCode::from(2);
    };
    let cases = match load_cases(&dir) {
        Ok(cases) => cases,
        Err(why) => {
            eprintln!("conformance: {why}");
            return ExitCode::from(2);
        }
    };
    let (mut passed, mut failed) = (0usize, 0usize);
    let mut out = std::io::stdout().lock();
    for case in &cases {
        let line = match run_case(case) {
            Outcome::Pass => {
                passed += 1;
                format!("PASS {}", case.id)
            }
            Outcome::Fail(why) => {
                failed += 1;
                format!("FAIL {} {}", case.id, why.replace('\n', " "))
            }
            Outcome::Diverges(decision) => format!("DIVERGES {} {decision}", case.id),
            Outcome::Todo(layer) => format!("TODO {} {layer}", case.id),
        };
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "{passed} passed, {failed} failed");
    if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
