//! `scriptorium search` and `scriptorium grep` on copies of the example workspace: human
//! and JSON output, filters, `--queries`, the persistent cache, bad input.

use std::path::Path;

use serde_json::Value;

use crate::{TempDir, TestResult, example_workspace, run, scriptorium};

/// A writable copy of the example workspace (search writes its cache into it).
fn example_copy() -> Result<TempDir, std::io::Error> {
    let ws = TempDir::new()?;
    copy(&example_workspace(), ws.path())?;
    Ok(ws)
}

fn copy(from: &Path, to: &Path) -> Result<(), std::io::Error> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[test]
fn search_prints_anchors_dates_and_text_and_sees_later_edits() -> TestResult {
    let ws = example_copy()?;
    let out = run(scriptorium(ws.path()).args(["search", "tomatoes basil", "--workspace"]).arg(ws.path()))?;
    assert_eq!(out.code, Some(0), "stdout {}\nstderr {}", out.stdout, out.stderr);
    let first = out.stdout.lines().next().ok_or("no output")?;
    assert_eq!(
        first,
        "1. sources/openprogram/_v2/sess-garden.md#source-021f2587e873bb77  (2026-03-14, trusted, score 1.080000)"
    );
    assert!(
        out.stdout.contains("\n2. topics/garden/raised-bed.md#^11e4b469  (2026-03-14, trusted, score 0.992311)\n"),
        "{}",
        out.stdout
    );
    // The anchor is the one the archive itself carries.
    let archive = std::fs::read_to_string(ws.path().join("sources/openprogram/_v2/sess-garden.md"))?;
    assert!(archive.contains("<a id=\"source-021f2587e873bb77\"></a>"));
    assert!(out.stdout.contains("   [2026-03-14] Tomatoes grow on the south side"), "{}", out.stdout);
    assert!(
        out.stdout.contains(
            "sources/openprogram/_v2/sess-garden.md#source-87bc8264ecf1eb77  (2026-03-14, Owner (owner/local), trusted"
        ),
        "{}",
        out.stdout
    );
    let cache = ws.path().join(".scriptorium/retrieval-index.bin");
    assert!(cache.is_file(), "search saves its index");
    assert!(!ws.path().join(".scriptorium-bm25.json").exists());

    // An edit after the cache was written shows in the next search.
    let topic = ws.path().join("topics/garden/raised-bed.md");
    let text = std::fs::read_to_string(&topic)?.replace("two litres", "two litres of rainwater");
    std::fs::write(&topic, text)?;
    let json =
        run(scriptorium(ws.path()).args(["search", "--json", "rainwater", "--workspace"]).arg(ws.path()))?.json()?;
    assert_eq!(json["results"][0]["event_id"], "352218f9:1");
    assert_eq!(json["results"][0]["anchor"], "#^352218f9");
    assert_eq!(json["results"][0]["trust_state"], "trusted");
    assert!(json["results"][0]["final_score"].as_f64().is_some_and(|s| s > 1.0), "{json}");
    Ok(())
}

#[test]
fn search_filters_and_top_k() -> TestResult {
    let ws = example_copy()?;
    let search = |extra: &[&str]| -> Result<Value, Box<dyn std::error::Error>> {
        let out = run(scriptorium(ws.path()).args(["search", "--json", "--workspace"]).arg(ws.path()).args(extra))?;
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        Ok(out.json()?)
    };
    let paths = |json: &Value| -> Vec<String> {
        json["results"].as_array().map_or_else(Vec::new, |rows| {
            rows.iter().map(|row| row["path"].as_str().unwrap_or_default().to_owned()).collect()
        })
    };
    let ada = search(&["Ada", "--speaker", "Ada"])?;
    assert!(!paths(&ada).is_empty() && paths(&ada).iter().all(|p| p == "sources/openprogram/_v2/group-bookclub.md"));
    let topics = search(&["book club", "--path-prefix", "people"])?;
    assert!(!paths(&topics).is_empty() && paths(&topics).iter().all(|p| p == "topics/people/book-club.md"));
    let november = search(&["club", "--from", "2025-11", "--to", "2025-11"])?;
    assert!(november["results"].as_array().is_some_and(|rows| rows.iter().all(|r| r["date"] == "2025-11-20")));
    assert_eq!(search(&["the", "--top-k", "2"])?["results"].as_array().map(Vec::len), Some(2));
    let plain = search(&["tomatoes", "--no-rerank"])?;
    assert_eq!(plain["results"][0]["rule_adjustment"], 0.0);
    Ok(())
}

#[test]
fn queries_file_prints_one_json_line_per_query() -> TestResult {
    let ws = example_copy()?;
    let list = ws.write("queries.txt", b"tomatoes\n\nbook club\nzzzz\n")?;
    let out = run(scriptorium(ws.path()).args(["search", "--workspace"]).arg(ws.path()).arg("--queries").arg(&list))?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let lines: Vec<Value> = out.stdout.lines().map(serde_json::from_str).collect::<Result<_, _>>()?;
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[1]["query"], "book club");
    assert!(lines[0]["elapsed_us"].is_u64());
    assert!(lines[0]["results"][0]["event_id"].is_string());
    assert_eq!(lines[2]["results"], Value::Array(Vec::new()));
    Ok(())
}

#[test]
fn bad_search_input_is_one_error_line() -> TestResult {
    let ws = example_copy()?;
    for (args, code) in [
        (&["search", "x", "--from", "2024-13"][..], "CLI_BAD_QUERY"),
        (&["search", "x", "--from", "2025", "--to", "2024"][..], "CLI_BAD_QUERY"),
        (&["search", "   "][..], "CLI_BAD_QUERY"),
        (&["search"][..], "CLI_USAGE"),
        (&["grep", " "][..], "CLI_BAD_QUERY"),
    ] {
        let out = run(scriptorium(ws.path()).args(args).arg("--workspace").arg(ws.path()))?;
        assert_eq!(out.code, Some(2), "{args:?}: {}", out.stderr);
        assert_eq!(out.error_code()?, code, "{args:?}");
    }
    let missing = run(scriptorium(ws.path()).args(["search", "--queries", "nope.txt", "--workspace"]).arg(ws.path()))?;
    assert_eq!(missing.error_code()?, "CLI_FILE_NOT_FOUND");
    Ok(())
}

#[test]
fn grep_lists_lines_and_hides_internal_files() -> TestResult {
    let ws = example_copy()?;
    ws.write(".scriptorium/quarantine/x.md", b"tomatoes in quarantine\n")?;
    ws.write(".git/notes", b"tomatoes in git\n")?;
    let out = run(scriptorium(ws.path()).args(["grep", "TOMATOES", "--workspace"]).arg(ws.path()))?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("topics/garden/raised-bed.md:5: Tomatoes grow on the south side"), "{}", out.stdout);
    assert!(!out.stdout.contains("quarantine") && !out.stdout.contains("in git"), "{}", out.stdout);

    let json = run(scriptorium(ws.path())
        .args([
            "grep",
            "--json",
            "--case-sensitive",
            "tomatoes",
            "--limit",
            "1",
            "--path-prefix",
            "/sources",
            "--workspace",
        ])
        .arg(ws.path()))?
    .json()?;
    assert_eq!(json["matches"].as_array().map(Vec::len), Some(1));
    assert!(json["matches"][0]["path"].as_str().is_some_and(|p| p.starts_with("sources/")));
    assert_eq!(json["truncated"], true);
    assert!(json["total"].as_u64().is_some_and(|t| t >= 2), "{json}");

    let none = run(scriptorium(ws.path()).args(["grep", "source-meta:", "--workspace"]).arg(ws.path()))?;
    assert_eq!(none.stdout, "no matches for \"source-meta:\"\n");
    Ok(())
}

#[test]
fn grep_regex_matches_in_python_syntax_and_refuses_what_it_cannot_run() -> TestResult {
    let ws = example_copy()?;
    ws.write(".scriptorium/quarantine/x.md", b"Tomatoes go on in quarantine\n")?;
    let pattern = r"^tomato(es)? \w+ on\b";
    let out = run(scriptorium(ws.path()).args(["grep", "--regex", pattern, "--workspace"]).arg(ws.path()))?;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "sources/openprogram/_v2/sess-garden.md:9: Tomatoes go on the south side, basil between them.\n\
         topics/garden/raised-bed.md:5: Tomatoes grow on the south side of the raised bed, with basil between \
         them.[^e-c7eb913ad2] ^11e4b469\n"
    );
    let exact = run(scriptorium(ws.path())
        .args(["grep", "--regex", "--case-sensitive", pattern, "--workspace"])
        .arg(ws.path()))?;
    assert_eq!(exact.stdout, format!("no matches for {pattern:?}\n"));
    let literal = run(scriptorium(ws.path()).args(["grep", pattern, "--workspace"]).arg(ws.path()))?;
    assert_eq!(literal.stdout, format!("no matches for {pattern:?}\n"), "without --regex the text is literal");

    let json = run(scriptorium(ws.path())
        .args(["grep", "--json", "--regex", r"basil\b", "--limit", "1", "--workspace"])
        .arg(ws.path()))?
    .json()?;
    assert_eq!(json["matches"].as_array().map(Vec::len), Some(1));
    assert_eq!(json["matches"][0]["path"], "sources/openprogram/_v2/sess-garden.md");
    assert_eq!(json["matches"][0]["line"], 9);
    assert_eq!(json["truncated"], true);
    assert!(json["total"].as_u64().is_some_and(|t| t >= 3), "{json}");

    for bad in ["(unclosed", "tomatoes(?= go)", "(?<!the )basil", r"(to)ma\1", "a++", r"\w{1000}"] {
        let out = run(scriptorium(ws.path()).args(["grep", "--regex", bad, "--workspace"]).arg(ws.path()))?;
        assert_eq!(out.code, Some(2), "{bad:?}: {}", out.stderr);
        assert_eq!(out.error_code()?, "CLI_BAD_QUERY", "{bad:?}");
        assert!(out.stderr.starts_with("error[CLI_BAD_QUERY]: RETRIEVAL_INVALID_PATTERN: "), "{bad:?}: {}", out.stderr);
        assert_eq!(out.stdout, "", "{bad:?}");
    }
    Ok(())
}
