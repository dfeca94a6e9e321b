//! Progress bars: drawn on a terminal (a real pseudo-terminal from `script`), never into a
//! pipe.

use std::process::Command;

use crate::{TempDir, TestResult, copy_tree, run, scriptorium, vectors};

/// Whether text holds what a drawn bar leaves: a carriage return or an escape sequence.
fn has_progress_bytes(text: &str) -> bool {
    text.contains('\r') || text.contains('\u{1b}')
}

#[test]
fn piped_output_holds_no_progress_bytes() -> TestResult {
    let dir = TempDir::new()?;
    let root = dir.path().join("memory");
    copy_tree(&vectors().join("_resources/tx-base"), &root)?;
    let archive = dir.path().join("out.tar.gz");
    let runs = [
        run(scriptorium(dir.path()).args(["search", "tea", "--workspace"]).arg(&root))?,
        run(scriptorium(dir.path()).args(["backfill", "--workspace"]).arg(&root))?,
        run(scriptorium(dir.path()).args(["recall", "tea", "--workspace"]).arg(&root))?,
        run(scriptorium(dir.path()).args(["export", "--workspace"]).arg(&root).arg("--output").arg(&archive))?,
    ];
    for out in &runs {
        assert!(matches!(out.code, Some(0 | 1)), "{out:?}");
        assert!(!has_progress_bytes(&out.stdout) && !has_progress_bytes(&out.stderr), "{out:?}");
    }
    // The verbs that succeed say nothing at all on stderr (backfill has no model here).
    for out in runs.iter().filter(|out| out.code == Some(0)) {
        assert_eq!(out.stderr, "", "{out:?}");
    }
    assert_eq!(runs.iter().filter(|out| out.code == Some(0)).count(), 3, "{runs:?}");
    Ok(())
}

#[test]
fn a_terminal_sees_the_export_bar() -> TestResult {
    let dir = TempDir::new()?;
    let root = dir.path().join("memory");
    copy_tree(&vectors().join("_resources/tx-base"), &root)?;
    let archive = dir.path().join("out.tar.gz");
    let log = dir.path().join("typescript");
    // `script` gives the binary a pseudo-terminal for stdin, stdout and stderr.
    let command = format!(
        "{} export --workspace {} --output {}",
        env!("CARGO_BIN_EXE_scriptorium"),
        root.display(),
        archive.display()
    );
    let mut cmd = Command::new("script");
    cmd.args(["-q", "-e", "-c", &command]).arg(&log);
    let out = run(cmd.env("HOME", dir.path()).env("TERM", "xterm"))?;
    assert_eq!(out.code, Some(0), "{out:?}");
    let seen = String::from_utf8_lossy(&std::fs::read(&log)?).into_owned();
    assert!(seen.contains("exporting"), "{seen:?}");
    assert!(has_progress_bytes(&seen), "{seen:?}");
    Ok(())
}
