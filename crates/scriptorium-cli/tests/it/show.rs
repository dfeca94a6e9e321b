//! `scriptorium show`: a file, a block with the source frames it cites, a source frame by
//! its handle, and each refusal with its contract code (exit status 1).

use crate::{Run, TempDir, TestResult, copy_tree, run, scriptorium, vectors};

const PREFS_BLOCK: &str = "topics/prefs.md#^0d9bb518";
const FRAME: &str = "sources/openprogram/_v2/sess-7f2a.md#source-382c7493ef6b9537";
const RECORD: &str = "[2024-03-16] user: I prefer tea over coffee, always green tea.";

fn tx_base() -> Result<TempDir, Box<dyn std::error::Error>> {
    let dir = TempDir::new()?;
    copy_tree(&vectors().join("_resources/tx-base"), dir.path())?;
    Ok(dir)
}

fn show(ws: &TempDir, args: &[&str]) -> Result<Run, std::io::Error> {
    run(scriptorium(ws.path()).arg("show").args(args).arg("--workspace").arg(ws.path()))
}

#[test]
fn a_topic_is_printed_as_it_is() -> TestResult {
    let ws = tx_base()?;
    let out = show(&ws, &["topics/prefs.md"])?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, std::fs::read_to_string(ws.path().join("topics/prefs.md"))?);
    let json = show(&ws, &["topics/prefs.md", "--json"])?.json()?;
    assert_eq!(json["ok"], true);
    assert_eq!(json["path"], "topics/prefs.md");
    assert_eq!(json["text"].as_str().map(|text| format!("{text}\n")), Some(out.stdout));

    // An archive shows its records only: no anchors, ids or metadata.
    let archive = show(&ws, &["sources/openprogram/_v2/sess-7f2a.md"])?;
    assert_eq!(archive.code, Some(0), "{}", archive.stderr);
    assert!(archive.stdout.contains(&format!("{RECORD}\n")), "{}", archive.stdout);
    assert!(!archive.stdout.contains("<!--") && !archive.stdout.contains("<a id="), "{}", archive.stdout);
    Ok(())
}

#[test]
fn a_block_comes_with_the_frames_its_footnotes_cite() -> TestResult {
    let ws = tx_base()?;
    let out = show(&ws, &[PREFS_BLOCK])?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stdout.starts_with("Craig prefers green tea over coffee.[^e-d7b532f365] ^0d9bb518\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("  source openprogram/sess-7f2a/m4 (trusted)\n"), "{}", out.stdout);
    assert!(out.stdout.contains(&format!("    | {RECORD}\n")), "{}", out.stdout);

    let json = show(&ws, &[PREFS_BLOCK, "--json"])?.json()?;
    assert_eq!(json["block_id"], "0d9bb518");
    let citations = json["citations"].as_array().ok_or("citations")?;
    assert_eq!(citations.len(), 1, "{json}");
    assert_eq!(citations[0]["footnote"], "e-d7b532f365");
    assert_eq!(citations[0]["frame"]["source_id"], "openprogram/sess-7f2a/m4");
    assert_eq!(citations[0]["frame"]["path"], "sources/openprogram/_v2/sess-7f2a.md");
    assert_eq!(citations[0]["frame"]["text"], RECORD);
    Ok(())
}

#[test]
fn a_citation_to_a_missing_frame_is_shown_unresolved() -> TestResult {
    let ws = tx_base()?;
    let prefs = std::fs::read_to_string(ws.path().join("topics/prefs.md"))?;
    ws.write("topics/prefs.md", prefs.replace("source-382c7493ef6b9537", "source-0000000000000000").as_bytes())?;
    let json = show(&ws, &[PREFS_BLOCK, "--json"])?.json()?;
    assert_eq!(json["citations"][0]["error"]["code"], "INVALID_ARGUMENT", "{json}");
    let out = show(&ws, &[PREFS_BLOCK])?;
    assert!(out.stdout.contains("  unresolved: INVALID_ARGUMENT: no frame #source-0000000000000000"), "{}", out.stdout);
    Ok(())
}

#[test]
fn a_source_handle_shows_its_frame() -> TestResult {
    let ws = tx_base()?;
    let json = show(&ws, &[FRAME, "--json"])?;
    assert_eq!(json.code, Some(0), "{}", json.stderr);
    let json = json.json()?;
    assert_eq!(json["ok"], true);
    assert_eq!(json["source_id"], "openprogram/sess-7f2a/m4");
    assert_eq!(json["trust_state"], "trusted");
    assert_eq!(json["text"], RECORD);
    let pending = show(&ws, &["sources/telegram/_v2/group-100.md#source-c5abce8940d6277f", "--json"])?.json()?;
    assert_eq!(pending["trust_state"], "pending", "{pending}");
    Ok(())
}

#[test]
fn refusals_carry_their_contract_codes() -> TestResult {
    let ws = tx_base()?;
    let cases: [(&str, &str); 6] = [
        ("../outside.md", "PATH_OUTSIDE_WORKSPACE"),
        (".scriptorium/runtime.json", "PATH_OUTSIDE_WORKSPACE"),
        ("topics/%2e%2e/%2e%2e/etc/passwd", "PATH_OUTSIDE_WORKSPACE"),
        ("topics/nope.md", "INVALID_ARGUMENT"),
        ("topics/prefs.md#^ffff0000", "INVALID_ARGUMENT"),
        ("topics/prefs.md#source-382c7493ef6b9537", "INVALID_ARGUMENT"),
    ];
    for (target, code) in cases {
        let out = show(&ws, &[target, "--json"])?;
        assert_eq!(out.code, Some(1), "{target}: {}", out.stderr);
        assert!(out.stderr.starts_with(&format!("error[{code}]: ")), "{target}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{target}: {}", out.stderr);
        let json = out.json()?;
        assert_eq!((json["ok"].as_bool(), json["error"]["code"].as_str()), (Some(false), Some(code)), "{target}");
    }
    Ok(())
}
