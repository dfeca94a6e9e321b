//! `scriptorium check`: exit statuses 0/1/2, the per-file report, the default
//! workspace, and that it never writes.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::{THREAD_1, TempDir, TestResult, complete_archive, example_workspace, run, scriptorium};

#[test]
fn example_workspace_passes() -> TestResult {
    let home = TempDir::new()?;
    let out = run(scriptorium(home.path()).arg("check").arg("--workspace").arg(example_workspace()))?;
    assert_eq!(out.code, Some(0), "stdout {}\nstderr {}", out.stdout, out.stderr);
    assert!(out.stdout.contains("sources/openprogram/_v2/group-bookclub.md: v2, 6 frames, complete"), "{}", out.stdout);
    assert!(out.stdout.contains("sources/openprogram/old-notes.md: legacy, 3 records"), "{}", out.stdout);
    let topics = "\ntopics: ok\n  2 topic files, 5 blocks, 5 citations, 7 of 7 cited sources resolved: 0 violations\n";
    assert!(out.stdout.contains(topics), "{}", out.stdout);
    assert!(out.stdout.ends_with("\ncheck passed\n"), "{}", out.stdout);

    let json =
        run(scriptorium(home.path()).args(["check", "--json", "--workspace"]).arg(example_workspace()))?.json()?;
    assert_eq!(json["ok"], true);
    assert_eq!(json["archives"]["ok"], true);
    assert_eq!(json["archives"]["v2"], 2);
    assert_eq!(json["archives"]["legacy"], 1);
    assert_eq!(json["archives"]["incomplete"], 0);
    assert_eq!(json["topics"]["ok"], true);
    assert_eq!(json["topics"]["blocks"], 5);
    assert_eq!(json["topics"]["violations"], Value::Array(Vec::new()));
    Ok(())
}

/// One truncated v2 archive fails the whole check (exit 1) and the report names its
/// line (1-based), byte and reason; the other files are still reported.
#[test]
fn truncated_archive_fails_with_its_line() -> TestResult {
    let ws = TempDir::new()?;
    let mut bytes = complete_archive()?;
    let good_len = bytes.len();
    bytes.truncate(good_len - 3); // Cut inside the last record line.
    ws.write(THREAD_1, &bytes)?;
    ws.write("sources/openprogram/_v2/thread-2.md", b"<!-- openprogram-source-archive:v2 -->\n\n")?;
    let text = String::from_utf8(bytes)?;
    let third_anchor = text.split('\n').position(|l| l == "<a id=\"source-f60bf0279f2f4149\"></a>").ok_or("anchor")?;
    let third_byte = text.find("<a id=\"source-f60bf0279f2f4149\"></a>").ok_or("anchor")?;

    let out = run(scriptorium(ws.path()).arg("check").arg("--workspace").arg(ws.path()))?;
    assert_eq!(out.code, Some(1), "stdout {}\nstderr {}", out.stdout, out.stderr);
    let want = format!(
        "  {THREAD_1}: v2, 2 frames, INCOMPLETE: stopped at line {} (byte {third_byte}): ARCHIVE_STOP_TRUNCATED",
        third_anchor + 1
    );
    assert!(out.stdout.contains(&want), "want {want:?} in\n{}", out.stdout);
    assert!(out.stdout.contains("sources/openprogram/_v2/thread-2.md: v2, 0 frames, complete"), "{}", out.stdout);
    assert!(out.stdout.ends_with("\ncheck failed\n"), "{}", out.stdout);

    let json = run(scriptorium(ws.path()).args(["check", "--json", "--workspace"]).arg(ws.path()))?.json()?;
    assert_eq!(json["ok"], false);
    let files = json["archives"]["files"].as_array().ok_or("files")?;
    let paths: Vec<&str> = files.iter().filter_map(|f| f["path"].as_str()).collect();
    assert_eq!(paths, [THREAD_1, "sources/openprogram/_v2/thread-2.md"]);
    let stop = &files[0]["stop"];
    assert_eq!(stop["line"], third_anchor + 1);
    assert_eq!(stop["stopped_at_line"], third_anchor);
    assert_eq!(stop["byte"], third_byte);
    assert_eq!(stop["reason"], "ARCHIVE_STOP_TRUNCATED");
    assert_eq!(files[0]["frames"], 2);
    assert_eq!(files[1]["complete"], true);
    Ok(())
}

/// Files are reported in component-wise order, symlinks are skipped, non-`.md` files
/// ignored, and a legacy file that is not UTF-8 is a warning, not a failure.
#[test]
fn listing_order_kinds_and_skips() -> TestResult {
    let ws = TempDir::new()?;
    ws.write("sources/a-c.md", b"# a-c\n")?;
    ws.write("sources/a/_v2/b.md", b"<!-- openprogram-source-archive:v2 -->\n\n")?;
    ws.write("sources/a/notes.txt", b"not an archive")?;
    ws.write("sources/broken.md", b"# broken\n\xff\n")?;
    #[cfg(unix)]
    {
        // A link to a truncated archive outside the tree must not be followed.
        let outside = ws.write("outside/t.md", b"<!-- openprogram-source-archive:v2 -->\n\n<a")?;
        std::os::unix::fs::symlink(&outside, ws.path().join("sources/a/_v2/linked.md"))?;
        std::os::unix::fs::symlink(ws.path().join("outside"), ws.path().join("sources/a/_v2/dir-link"))?;
    }
    let out = run(scriptorium(ws.path()).args(["check", "--json", "--workspace"]).arg(ws.path()))?;
    assert_eq!(out.code, Some(0), "stdout {}\nstderr {}", out.stdout, out.stderr);
    let json = out.json()?;
    let files = json["archives"]["files"].as_array().ok_or("files")?;
    let listed: Vec<(&str, &str)> =
        files.iter().filter_map(|f| Some((f["path"].as_str()?, f["kind"].as_str()?))).collect();
    assert_eq!(listed, [("sources/a/_v2/b.md", "v2"), ("sources/a-c.md", "legacy"), ("sources/broken.md", "legacy")]);
    assert_eq!(files[2]["warning"]["code"], "CLI_NOT_UTF8");
    Ok(())
}

/// Without `--workspace`, `$SCRIPTORIUM_WORKSPACE` names the workspace.
#[test]
fn default_workspace_comes_from_the_environment() -> TestResult {
    let ws = TempDir::new()?;
    ws.write(THREAD_1, &complete_archive()?)?;
    let out = run(scriptorium(ws.path()).arg("check").env("SCRIPTORIUM_WORKSPACE", ws.path()))?;
    assert_eq!(out.code, Some(0), "stdout {}\nstderr {}", out.stdout, out.stderr);
    assert!(out.stdout.contains(&format!("{THREAD_1}: v2, 3 frames, complete")), "{}", out.stdout);

    let empty = TempDir::new()?;
    let out = run(scriptorium(empty.path()).arg("check").env("SCRIPTORIUM_WORKSPACE", empty.path().join("none")))?;
    assert_eq!(out.code, Some(2));
    assert_eq!(out.error_code()?, "CLI_WORKSPACE_NOT_FOUND");
    assert!(out.stderr.contains("$SCRIPTORIUM_WORKSPACE"), "{}", out.stderr);
    Ok(())
}

/// With no flag and no variable, Linux uses `$XDG_DATA_HOME/scriptorium/memory`, then
/// `~/.local/share/scriptorium/memory`.
#[cfg(all(unix, not(target_os = "macos")))]
#[test]
fn default_workspace_is_the_xdg_data_directory() -> TestResult {
    let home = TempDir::new()?;
    home.write(&format!(".local/share/scriptorium/memory/{THREAD_1}"), &complete_archive()?)?;
    let out = run(scriptorium(home.path()).arg("check"))?;
    assert_eq!(out.code, Some(0), "stdout {}\nstderr {}", out.stdout, out.stderr);
    assert!(out.stdout.contains(".local/share/scriptorium/memory"), "{}", out.stdout);

    let xdg = TempDir::new()?;
    let out = run(scriptorium(home.path()).arg("check").env("XDG_DATA_HOME", xdg.path()))?;
    assert_eq!((out.code, out.error_code()?), (Some(2), "CLI_WORKSPACE_NOT_FOUND"));
    xdg.write(&format!("scriptorium/memory/{THREAD_1}"), &complete_archive()?)?;
    let out = run(scriptorium(home.path()).arg("check").env("XDG_DATA_HOME", xdg.path()))?;
    assert_eq!(out.code, Some(0), "stdout {}\nstderr {}", out.stdout, out.stderr);
    Ok(())
}

/// `--workspace=~/…` (which the shell does not expand) means the home directory.
#[test]
fn tilde_means_home() -> TestResult {
    let home = TempDir::new()?;
    home.write(&format!(".openprogram/memory/{THREAD_1}"), &complete_archive()?)?;
    let out = run(scriptorium(home.path()).args(["check", "--workspace=~/.openprogram/memory"]))?;
    assert_eq!(out.code, Some(0), "stdout {}\nstderr {}", out.stdout, out.stderr);
    Ok(())
}

#[test]
fn a_directory_that_is_not_a_workspace_is_an_error() -> TestResult {
    let dir = TempDir::new()?;
    dir.write("README.md", b"# not memory\n")?;
    for target in [dir.path().to_path_buf(), dir.path().join("missing"), dir.path().join("README.md")] {
        let out = run(scriptorium(dir.path()).arg("check").arg("--workspace").arg(&target))?;
        assert_eq!(out.code, Some(2), "{}", target.display());
        assert_eq!(out.error_code()?, "CLI_WORKSPACE_NOT_FOUND");
        assert!(out.stdout.is_empty());
    }
    Ok(())
}

/// `check` reads only: every file's bytes and modification time are unchanged and
/// nothing is created (no runtime directory, no cache).
#[test]
fn check_never_writes() -> TestResult {
    let ws = TempDir::new()?;
    let mut truncated = complete_archive()?;
    truncated.truncate(truncated.len() - 1);
    ws.write(THREAD_1, &truncated)?;
    ws.write("sources/openprogram/old.md", b"# old\n")?;
    ws.write("topics/a.md", b"# A\n")?;
    let before = snapshot(ws.path())?;
    for args in [&["check"][..], &["check", "--json"][..]] {
        let out = run(scriptorium(ws.path()).args(args).arg("--workspace").arg(ws.path()))?;
        assert_eq!(out.code, Some(1));
    }
    assert_eq!(snapshot(ws.path())?, before);
    Ok(())
}

type Snapshot = BTreeMap<String, (Vec<u8>, Option<std::time::SystemTime>)>;

fn snapshot(root: &Path) -> Result<Snapshot, std::io::Error> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let meta = entry.metadata()?;
            let key = entry.path().display().to_string();
            if meta.is_dir() {
                out.insert(key, (Vec::new(), None));
                stack.push(entry.path());
            } else {
                out.insert(key, (std::fs::read(entry.path())?, meta.modified().ok()));
            }
        }
    }
    Ok(out)
}

/// The JSON report's top level has a key per section (`archives`, `topics`) beside
/// the overall verdict, so a section can be added without breaking readers.
#[test]
fn json_report_is_sectioned() -> TestResult {
    let home = TempDir::new()?;
    let json =
        run(scriptorium(home.path()).args(["check", "--json", "--workspace"]).arg(example_workspace()))?.json()?;
    let mut keys: Vec<&String> = json.as_object().ok_or("object")?.keys().collect();
    keys.sort();
    assert_eq!(keys, ["archives", "ok", "topics", "workspace"]);
    assert!(matches!(json["archives"]["files"], Value::Array(ref files) if files.len() == 3));
    assert!(matches!(json["topics"]["files"], Value::Array(ref files) if files.len() == 2));
    Ok(())
}
