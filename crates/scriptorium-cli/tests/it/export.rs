//! `scriptorium export`, unpacked with the real `tar` and compared byte for byte.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::{TempDir, TestResult, copy_tree, run, scriptorium, vectors};

fn tx_base() -> Result<TempDir, Box<dyn std::error::Error>> {
    let dir = TempDir::new()?;
    copy_tree(&vectors().join("_resources/tx-base"), &dir.path().join("memory"))?;
    Ok(dir)
}

/// Every regular file under `root`, relative path → bytes.
fn files(root: &Path) -> std::io::Result<BTreeMap<String, Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(relative) = path.strip_prefix(root) {
                out.insert(relative.to_string_lossy().into_owned(), std::fs::read(&path)?);
            }
        }
    }
    Ok(out)
}

fn unpack(archive: &Path, into: &Path) -> TestResult {
    std::fs::create_dir_all(into)?;
    let status = Command::new("tar").arg("-xzf").arg(archive).arg("-C").arg(into).status()?;
    assert!(status.success(), "tar -xzf failed: {status}");
    Ok(())
}

fn export(dir: &TempDir, args: &[&str]) -> Result<crate::Run, std::io::Error> {
    run(scriptorium(dir.path()).arg("export").args(args).arg("--workspace").arg(dir.path().join("memory")))
}

#[test]
fn the_archive_holds_the_visible_files_byte_for_byte_and_nothing_private() -> TestResult {
    let dir = tx_base()?;
    let root = dir.path().join("memory");
    // A search leaves its cache in the runtime directory; an update starts history.
    assert_eq!(run(scriptorium(dir.path()).args(["search", "tea", "--workspace"]).arg(&root))?.code, Some(0));
    let archive = dir.path().join("out.tar.gz");
    let out = export(&dir, &["--output", archive.to_str().ok_or("path")?])?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, format!("exported 11 files to {}\n", archive.display()));
    assert_eq!(out.stderr, "", "piped: no progress bytes");

    let unpacked = dir.path().join("unpacked");
    unpack(&archive, &unpacked)?;
    let got = files(&unpacked.join("memory"))?;
    let want: BTreeMap<String, Vec<u8>> =
        files(&root)?.into_iter().filter(|(path, _)| !path.starts_with(".scriptorium")).collect();
    assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>());
    assert_eq!(got, want);
    assert!(root.join(".scriptorium/retrieval-index.bin").is_file(), "the runtime directory exists but is left out");
    Ok(())
}

#[test]
fn history_is_exported_only_when_asked_and_the_archive_is_deterministic() -> TestResult {
    let dir = tx_base()?;
    let root = dir.path().join("memory");
    let prefs = std::fs::read_to_string(root.join("topics/prefs.md"))?;
    let changes = serde_json::json!([{"path": "topics/prefs.md", "action": "write", "content": prefs.replace("coffee", "cocoa")}]);
    let edit = dir.write("edit.json", changes.to_string().as_bytes())?;
    let update = run(scriptorium(dir.path()).args(["update", "--workspace"]).arg(&root).arg("--changes").arg(&edit))?;
    assert_eq!(update.code, Some(0), "{}", update.stderr);
    assert!(root.join(".git").is_dir());

    let plain = dir.path().join("plain.tar.gz");
    assert_eq!(export(&dir, &["--output", plain.to_str().ok_or("path")?])?.code, Some(0));
    let listing = Command::new("tar").arg("-tzf").arg(&plain).output()?;
    let names = String::from_utf8(listing.stdout)?;
    assert!(names.lines().all(|name| name.starts_with("memory/") && !name.contains(".git")), "{names}");

    let full = dir.path().join("full.tar.gz");
    let out = export(&dir, &["--output", full.to_str().ok_or("path")?, "--with-history", "--json"])?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let value = out.json()?;
    assert_eq!(value["ok"], true);
    assert_eq!(value["bytes"].as_u64(), Some(std::fs::metadata(&full)?.len()));
    let unpacked = dir.path().join("unpacked");
    unpack(&full, &unpacked)?;
    let got = files(&unpacked.join("memory"))?;
    let want: BTreeMap<String, Vec<u8>> =
        files(&root)?.into_iter().filter(|(path, _)| !path.starts_with(".scriptorium")).collect();
    assert_eq!(got, want, "history included byte for byte");
    assert_eq!(value["files"].as_u64(), Some(want.len() as u64));

    let again = dir.path().join("again.tar.gz");
    assert_eq!(export(&dir, &["--output", again.to_str().ok_or("path")?, "--with-history"])?.code, Some(0));
    assert_eq!(std::fs::read(&again)?, std::fs::read(&full)?, "the same files give the same bytes");
    Ok(())
}

#[test]
fn an_unwritable_destination_fails_and_leaves_nothing() -> TestResult {
    let dir = tx_base()?;
    let missing = dir.path().join("no/such/dir/out.tar.gz");
    let out = export(&dir, &["--output", missing.to_str().ok_or("path")?, "--json"])?;
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.starts_with("error[CLI_EXPORT_FAILED]: "), "{}", out.stderr);
    assert_eq!(out.json()?["error"]["code"], "CLI_EXPORT_FAILED");
    assert!(!dir.path().join("no").exists());
    Ok(())
}

#[test]
fn the_default_archive_is_named_by_the_date_in_the_working_directory() -> TestResult {
    let dir = tx_base()?;
    let cwd = dir.path().join("out");
    std::fs::create_dir_all(&cwd)?;
    let out =
        run(scriptorium(dir.path()).current_dir(&cwd).arg("export").arg("--workspace").arg(dir.path().join("memory")))?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let names: Vec<String> =
        std::fs::read_dir(&cwd)?.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let name = names.first().ok_or("name")?;
    let date = name.strip_prefix("scriptorium-memory-").and_then(|rest| rest.strip_suffix(".tar.gz")).ok_or("name")?;
    let digits: Vec<&str> = date.split('-').collect();
    assert_eq!(digits.iter().map(|part| part.len()).collect::<Vec<_>>(), [4, 2, 2], "{name}");
    assert!(date.chars().all(|c| c.is_ascii_digit() || c == '-'), "{name}");
    assert_eq!(out.stdout, format!("exported 11 files to {name}\n"));
    Ok(())
}
