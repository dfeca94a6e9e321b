//! `scriptorium check`'s `topics` section: every topic file parsed strictly and every
//! citation resolved against the archives on disk; each violation is one line
//! `path:line: CODE detail` (sorted by path, then line) and fails the check (exit 1),
//! and `--json` carries the same findings as data.

use std::path::Path;

use serde_json::Value;

use crate::{THREAD_1, TempDir, TestResult, complete_archive, run, scriptorium, vectors};

/// Anchors of the first two frames of `complete_archive` (`openprogram/thread-1/m1`, `m2`).
const M1: &str = "source-8a0db98e638404f1";
const M2: &str = "source-eab3e700c62981d3";

/// A canonical topic file at `topics/<name>` whose two blocks cite the first two frames
/// of THREAD_1 through relative links (`up` is the `../` prefix back to the root).
fn valid_topic(up: &str, ids: [&str; 2]) -> String {
    format!(
        "# Notes\n\
         \n\
         The seed came first.[^e-0000000001] ^{}\n\
         \n\
         ## Later\n\
         \n\
         The reply followed the seed.[^e-0000000002] ^{}\n\
         \n\
         [^e-0000000001]: Time: `2026-08-10`; Sources: [openprogram/thread-1/m1]({up}sources/openprogram/_v2/thread-1.md#{M1})\n\
         [^e-0000000002]: Time: `2026-08-10`; Sources: [openprogram/thread-1/m2]({up}sources/openprogram/_v2/thread-1.md#{M2})\n",
        ids[0], ids[1]
    )
}

/// A workspace holding THREAD_1 and one valid topic file, `topics/notes.md`.
fn valid_workspace() -> Result<TempDir, Box<dyn std::error::Error>> {
    let ws = TempDir::new()?;
    ws.write(THREAD_1, &complete_archive()?)?;
    ws.write("topics/notes.md", valid_topic("../", ["aaaa0001", "aaaa0002"]).as_bytes())?;
    Ok(ws)
}

/// Run `check` on `ws`, require exit 1, and return the `topics` section's finding lines
/// (human form, without indentation).
fn topic_findings(ws: &Path) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let out = run(scriptorium(ws).arg("check").arg("--workspace").arg(ws))?;
    assert_eq!(out.code, Some(1), "stdout {}\nstderr {}", out.stdout, out.stderr);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    assert!(out.stdout.contains("\ntopics: FAILED\n"), "{}", out.stdout);
    assert!(out.stdout.ends_with("\ncheck failed\n"), "{}", out.stdout);
    let section = out.stdout.split("\ntopics: FAILED\n").nth(1).ok_or("no topics section")?;
    Ok(section.lines().take_while(|l| l.starts_with("  topics/")).map(|l| l.trim_start().to_owned()).collect())
}

/// The `topics` section of `check --json` on `ws`.
fn topics_json(ws: &Path) -> Result<Value, Box<dyn std::error::Error>> {
    let out = run(scriptorium(ws).args(["check", "--json", "--workspace"]).arg(ws))?;
    let json = out.json()?;
    assert_eq!(out.code, Some(if json["ok"] == true { 0 } else { 1 }), "{}", out.stdout);
    Ok(json["topics"].clone())
}

/// `(path, line, code)` of one JSON violation.
type Located = (String, Option<u64>, String);

/// Every JSON violation, in report order.
fn json_violations(topics: &Value) -> Result<Vec<Located>, Box<dyn std::error::Error>> {
    let list = topics["violations"].as_array().ok_or("violations")?;
    Ok(list
        .iter()
        .map(|v| {
            let path = v["path"].as_str().unwrap_or_default().to_owned();
            (path, v["line"].as_u64(), v["code"].as_str().unwrap_or_default().to_owned())
        })
        .collect())
}

#[test]
fn valid_topics_pass_and_are_counted() -> TestResult {
    let ws = valid_workspace()?;
    ws.write("topics/people/ada.md", valid_topic("../../", ["bbbb0001", "bbbb0002"]).as_bytes())?;
    // Nothing outside `topics/` is a topic file, however invalid it looks.
    for junk in [".scriptorium/quarantine/topics/bad.md", ".git/bad.md", "timeline/2026.md", "core.md"] {
        ws.write(junk, b"uncited prose [^nowhere]\n")?;
    }
    let out = run(scriptorium(ws.path()).arg("check").arg("--workspace").arg(ws.path()))?;
    assert_eq!(out.code, Some(0), "stdout {}\nstderr {}", out.stdout, out.stderr);
    let want = "\ntopics: ok\n  2 topic files, 4 blocks, 4 citations, 2 of 2 cited sources resolved: 0 violations\n";
    assert!(out.stdout.contains(want), "want {want:?} in\n{}", out.stdout);
    assert!(out.stdout.ends_with("\ncheck passed\n"), "{}", out.stdout);

    let topics = topics_json(ws.path())?;
    assert_eq!(topics["ok"], true);
    assert_eq!((&topics["blocks"], &topics["citations"]), (&Value::from(4), &Value::from(4)));
    assert_eq!((&topics["cited_sources"], &topics["resolved_sources"]), (&Value::from(2), &Value::from(2)));
    assert_eq!(topics["violations"], Value::Array(Vec::new()));
    let files: Vec<&str> =
        topics["files"].as_array().ok_or("files")?.iter().filter_map(|f| f["path"].as_str()).collect();
    assert_eq!(files, ["topics/notes.md", "topics/people/ada.md"]);
    assert_eq!(topics["files"][1]["blocks"], 2);
    Ok(())
}

#[test]
fn citing_a_missing_archive_fails() -> TestResult {
    let ws = valid_workspace()?;
    let topic =
        valid_topic("../", ["aaaa0001", "aaaa0002"]).replace("_v2/thread-1.md#source-eab3", "_v2/gone.md#source-eab3");
    ws.write("topics/notes.md", topic.as_bytes())?;
    let findings = topic_findings(ws.path())?;
    assert_eq!(
        findings,
        [format!(
            "topics/notes.md:10: TOPIC_INVALID_SOURCE_TARGET invalid source target: ../sources/openprogram/_v2/gone.md#{M2}"
        )]
    );
    Ok(())
}

/// A plain handle resolves to an id without reading a file; that no archive holds it is
/// what an install's normalization refuses as an invalid source target, and `check`
/// names it so, where the citing block starts. A `#d<c>-<t>` fallback to an unknown
/// frame is the source pass's `TOPIC_UNKNOWN_SOURCE`.
#[test]
fn citing_an_unknown_source_id_fails() -> TestResult {
    let ws = valid_workspace()?;
    let topic = valid_topic("../", ["aaaa0001", "aaaa0002"])
        .replace(&format!("(../sources/openprogram/_v2/thread-1.md#{M2})"), "(openprogram/thread-1/m9)")
        .replace(&format!("(../sources/openprogram/_v2/thread-1.md#{M1})"), "(D7:1)");
    ws.write("topics/notes.md", topic.as_bytes())?;
    let findings = topic_findings(ws.path())?;
    assert_eq!(
        findings,
        [
            "topics/notes.md:3: TOPIC_INVALID_SOURCE_TARGET invalid source target: D7:1",
            "topics/notes.md:7: TOPIC_INVALID_SOURCE_TARGET invalid source target: openprogram/thread-1/m9",
        ]
    );
    let topics = topics_json(ws.path())?;
    assert_eq!((&topics["cited_sources"], &topics["resolved_sources"]), (&Value::from(2), &Value::from(0)));
    Ok(())
}

#[test]
fn an_uncited_paragraph_fails() -> TestResult {
    let ws = valid_workspace()?;
    let topic = valid_topic("../", ["aaaa0001", "aaaa0002"]).replace("## Later\n", "## Later\n\nJust an opinion.\n");
    ws.write("topics/notes.md", topic.as_bytes())?;
    assert_eq!(
        topic_findings(ws.path())?,
        ["topics/notes.md:7: TOPIC_UNCITED_TEXT memory block ID required: notes.md"]
    );
    Ok(())
}

/// The second file in component-wise order holds the duplicate: `a/b.md` sorts before
/// `a-c.md`, so the report names `a-c.md`.
#[test]
fn a_block_id_used_in_two_files_fails() -> TestResult {
    let ws = TempDir::new()?;
    ws.write(THREAD_1, &complete_archive()?)?;
    ws.write("topics/a/b.md", valid_topic("../../", ["aaaa0001", "aaaa0002"]).as_bytes())?;
    ws.write("topics/a-c.md", valid_topic("../", ["cccc0001", "aaaa0002"]).as_bytes())?;
    assert_eq!(topic_findings(ws.path())?, ["topics/a-c.md:7: TOPIC_DUPLICATE_BLOCK_ID duplicate memory_id: aaaa0002"]);
    Ok(())
}

#[test]
fn an_undefined_footnote_fails() -> TestResult {
    let ws = valid_workspace()?;
    let topic = valid_topic("../", ["aaaa0001", "aaaa0002"]).replace("seed.[^e-0000000002]", "seed.[^e-0000000009]");
    ws.write("topics/notes.md", topic.as_bytes())?;
    assert_eq!(
        topic_findings(ws.path())?,
        [
            "topics/notes.md:7: TOPIC_UNDEFINED_FOOTNOTE undefined footnote: e-0000000009",
            "topics/notes.md:10: TOPIC_UNUSED_FOOTNOTE unused footnote definition: e-0000000002",
        ]
    );
    Ok(())
}

#[test]
fn a_dangling_block_link_fails() -> TestResult {
    let ws = valid_workspace()?;
    let topic = valid_topic("../", ["aaaa0001", "aaaa0002"]).replace(
        "The reply followed",
        "The reply followed [the seed](notes.md#^aaaa0001) and [more](notes.md#^dddd0009)",
    );
    ws.write("topics/notes.md", topic.as_bytes())?;
    assert_eq!(
        topic_findings(ws.path())?,
        ["topics/notes.md:7: TOPIC_DANGLING_BLOCK_LINK dangling block link: dddd0009"]
    );
    Ok(())
}

/// Several problems in several files: all are reported, sorted by path then line, in
/// both forms, and the archives section is unaffected. `notes.md` sorts first, so
/// `z/broken.md` holds the duplicate of its block id.
#[test]
fn every_violation_is_listed_in_order_and_as_json() -> TestResult {
    let ws = valid_workspace()?;
    let broken = valid_topic("../../", ["bbbb0001", "bbbb0002"])
        .replace("seed.[^e-0000000002]", "seed.[^e-0000000009]")
        .replace("# Notes\n", "# Notes\n\nUncited preamble.\n");
    ws.write("topics/z/broken.md", broken.as_bytes())?;
    ws.write("topics/latin1.md", b"# Menu\n\nCaf\xe9 au lait.\n")?;
    ws.write("topics/notes.md", valid_topic("../", ["aaaa0001", "bbbb0001"]).as_bytes())?;
    let want = [
        "topics/latin1.md:3: TOPIC_NOT_UTF8",
        "topics/z/broken.md:3: TOPIC_UNCITED_TEXT",
        "topics/z/broken.md:5: TOPIC_DUPLICATE_BLOCK_ID",
        "topics/z/broken.md:9: TOPIC_UNDEFINED_FOOTNOTE",
        "topics/z/broken.md:12: TOPIC_UNUSED_FOOTNOTE",
    ];
    let findings = topic_findings(ws.path())?;
    assert_eq!(findings.len(), want.len(), "{findings:#?}");
    for (line, prefix) in findings.iter().zip(want) {
        assert!(line.starts_with(prefix), "{line:?} should start with {prefix:?}");
    }

    let out = run(scriptorium(ws.path()).args(["check", "--json", "--workspace"]).arg(ws.path()))?;
    assert_eq!(out.code, Some(1));
    let json = out.json()?;
    assert_eq!(
        (&json["ok"], &json["archives"]["ok"], &json["topics"]["ok"]),
        (&false.into(), &true.into(), &false.into())
    );
    let got = json_violations(&json["topics"])?;
    let want: Vec<Located> = [
        ("topics/latin1.md", Some(3), "TOPIC_NOT_UTF8"),
        ("topics/z/broken.md", Some(3), "TOPIC_UNCITED_TEXT"),
        ("topics/z/broken.md", Some(5), "TOPIC_DUPLICATE_BLOCK_ID"),
        ("topics/z/broken.md", Some(9), "TOPIC_UNDEFINED_FOOTNOTE"),
        ("topics/z/broken.md", Some(12), "TOPIC_UNUSED_FOOTNOTE"),
    ]
    .into_iter()
    .map(|(p, l, c)| (p.to_owned(), l, c.to_owned()))
    .collect();
    assert_eq!(got, want);
    assert!(json["topics"]["violations"][3]["detail"].as_str().is_some_and(|d| d.contains("e-0000000009")));
    let per_file: Vec<(&str, u64)> = json["topics"]["files"]
        .as_array()
        .ok_or("files")?
        .iter()
        .filter_map(|f| Some((f["path"].as_str()?, f["violations"].as_u64()?)))
        .collect();
    assert_eq!(per_file, [("topics/latin1.md", 1), ("topics/notes.md", 0), ("topics/z/broken.md", 4)]);
    Ok(())
}

/// Symlinks never make a citation resolve or a file count as a topic: a citation
/// reaching its archive through a link is an invalid target, and a linked topic
/// file (however broken) is not read.
#[cfg(unix)]
#[test]
fn symlinks_are_not_followed() -> TestResult {
    let ws = TempDir::new()?;
    let outside = ws.write("outside/thread-1.md", &complete_archive()?)?;
    std::fs::create_dir_all(ws.path().join("sources/openprogram/_v2"))?;
    std::os::unix::fs::symlink(&outside, ws.path().join(THREAD_1))?;
    ws.write("topics/notes.md", valid_topic("../", ["aaaa0001", "aaaa0002"]).as_bytes())?;
    let findings = topic_findings(ws.path())?;
    assert_eq!(findings.len(), 2, "{findings:#?}");
    assert!(findings.iter().all(|f| f.contains(": TOPIC_INVALID_SOURCE_TARGET ")), "{findings:#?}");
    // The same through a linked directory on the way down.
    std::fs::remove_file(ws.path().join(THREAD_1))?;
    std::fs::remove_dir(ws.path().join("sources/openprogram/_v2"))?;
    std::os::unix::fs::symlink(ws.path().join("outside"), ws.path().join("sources/openprogram/_v2"))?;
    assert_eq!(topic_findings(ws.path())?, findings);

    let ws = valid_workspace()?;
    let bad = ws.write("outside/bad.md", b"uncited [^x]\n")?;
    std::os::unix::fs::symlink(&bad, ws.path().join("topics/linked.md"))?;
    std::os::unix::fs::symlink(ws.path().join("outside"), ws.path().join("topics/linked-dir"))?;
    let out = run(scriptorium(ws.path()).arg("check").arg("--workspace").arg(ws.path()))?;
    assert_eq!(out.code, Some(0), "stdout {}\nstderr {}", out.stdout, out.stderr);
    Ok(())
}

/// A vector workspace written by the reference passes, read in place.
#[test]
fn the_tx_base_vector_workspace_passes() -> TestResult {
    let root = vectors().join("_resources/tx-base");
    let out = run(scriptorium(&root).arg("check").arg("--workspace").arg(&root))?;
    assert_eq!(out.code, Some(0), "stdout {}\nstderr {}", out.stdout, out.stderr);
    let topics = topics_json(&root)?;
    assert_eq!(topics["ok"], true);
    assert_eq!(topics["files"].as_array().map(Vec::len), Some(3));
    assert!(topics["blocks"].as_u64().is_some_and(|n| n > 0), "{topics}");
    assert_eq!(topics["cited_sources"], topics["resolved_sources"]);
    Ok(())
}

/// The retrieval vectors' world deliberately keeps one pre-block legacy file that only
/// a lenient reader accepts; strict checking names exactly its three problems.
#[test]
fn the_bm25_world_legacy_file_is_reported_exactly() -> TestResult {
    let root = vectors().join("_resources/bm25-world");
    assert_eq!(
        topic_findings(&root)?,
        [
            "topics/legacy/events.md:4: TOPIC_UNDEFINED_FOOTNOTE undefined footnote: mem_a1",
            "topics/legacy/events.md:8: TOPIC_UNCITED_TEXT memory block ID required: legacy/events.md",
            "topics/legacy/events.md:10: TOPIC_UNCITED_TEXT memory block ID required: legacy/events.md",
        ]
    );
    let topics = topics_json(&root)?;
    assert_eq!(topics["cited_sources"], topics["resolved_sources"]);
    Ok(())
}
