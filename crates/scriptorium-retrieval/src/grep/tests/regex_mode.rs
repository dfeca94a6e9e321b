//! grep with `regex: true` on real temporary workspaces: matching and case, refusals
//! before any file is read, the same visible files and v2 record lines as literal grep,
//! limits, and plain words finding what literal grep finds.

use super::*;

fn regex(query: &str) -> GrepRequest {
    GrepRequest { regex: true, ..GrepRequest::new(query) }
}

#[test]
fn regex_matches_case_insensitive_unless_case_sensitive() {
    let ws = example("regex-case");
    ws.write("topics/colours.md", "The colour red\nCOLOR BLIND\ncolr\nno match here\n");
    let insensitive = grep(&ws.0, &regex(r"\bcolou?r\b")).expect("grep");
    assert_eq!(found(&insensitive), [("topics/colours.md".to_owned(), 1), ("topics/colours.md".to_owned(), 2)]);
    assert_eq!(insensitive.matches[1].text, "COLOR BLIND");
    let sensitive = grep(&ws.0, &GrepRequest { case_sensitive: true, ..regex(r"\bcolou?r\b") }).expect("grep");
    assert_eq!(found(&sensitive), [("topics/colours.md".to_owned(), 1)]);
    // Alternation and classes across the example's topic and archives.
    let water = grep(&ws.0, &regex(r"(two|2) litres per (tomato )?plant")).expect("grep");
    assert_eq!(
        water.matches.iter().map(|m| m.path.as_str()).collect::<Vec<_>>(),
        [V2, "topics/garden/raised-bed.md"],
        "{water:?}"
    );
    // `^` is the start of the line as it is, before trimming.
    let anchored = grep(&ws.0, &regex(r"^- (tomatoes|basil):")).expect("grep");
    assert_eq!(anchored.total, 2);
}

#[test]
fn invalid_or_refused_patterns_fail_before_any_file_is_read() {
    // No workspace at all: a literal grep fails reading it, a bad pattern never gets there.
    let missing = std::env::temp_dir().join(format!("scriptorium-grep-missing-{}", std::process::id()));
    assert_eq!(grep(&missing, &GrepRequest::new("x")).expect_err("no root").code(), ErrorCode::ReadFailed);
    assert_eq!(grep(&missing, &regex("x+")).expect_err("no root").code(), ErrorCode::ReadFailed);
    for pattern in ["(unclosed", "[z-a]", "foo(?=bar)", "(?<!x)y", r"(a)\1", "(?P<w>a)(?P=w)", "a++", r"\w{1000}"] {
        let error = grep(&missing, &regex(pattern)).expect_err(pattern);
        assert_eq!(error.code(), ErrorCode::InvalidPattern, "{pattern:?}");
        assert_eq!(error.code().contract_code(), Some("INVALID_ARGUMENT"));
    }
    // The same patterns are plain text in literal mode.
    let ws = example("regex-invalid");
    ws.write("topics/code.md", "call foo(?=bar) here\n");
    assert_eq!(grep(&ws.0, &GrepRequest::new("foo(?=bar)")).expect("literal").total, 1);
    assert_eq!(grep(&ws.0, &regex("  ")).expect_err("blank").code(), ErrorCode::BlankQuery);
}

#[test]
fn regex_searches_v2_record_lines_only() {
    let ws = example("regex-v2");
    ws.write("topics/notes.md", "<!-- source-meta:abc -->\n");
    let metadata = grep(&ws.0, &regex(r"^<!-- (source-id|source-meta|speaker-id|record-lines):")).expect("grep");
    // The topic's line and the legacy archive's id comments; no line of the v2 archive.
    let legacy = "sources/openprogram/old-notes.md";
    let legacy_text = std::fs::read_to_string(ws.0.join(legacy)).expect("read");
    let mut expected: Vec<(String, usize)> = (1..)
        .zip(legacy_text.split('\n'))
        .filter(|(_, line)| line.starts_with("<!-- source-id:"))
        .map(|(number, _)| (legacy.to_owned(), number))
        .collect();
    assert_eq!(expected.len(), 3);
    expected.push(("topics/notes.md".to_owned(), 1));
    assert_eq!(found(&metadata), expected);
    assert!(grep(&ws.0, &regex(r"^<a id=")).expect("grep").matches.iter().all(|m| m.path != V2));
    // Every record line of the v2 archive, with its physical line number.
    let text = std::fs::read_to_string(ws.0.join(V2)).expect("read");
    let records = grep(&ws.0, &GrepRequest { prefix: Some(V2.into()), ..regex(".") }).expect("grep");
    let expected: Vec<(String, usize)> = (1..)
        .zip(text.split('\n'))
        .filter(|(_, line)| !line.is_empty() && !line.starts_with("<!--") && !line.starts_with("<a id="))
        .map(|(number, _)| (V2.to_owned(), number))
        .collect();
    assert_eq!(found(&records), expected);
    assert_eq!(records.total, 6, "2 + 3 non-empty lines + 1");
}

#[test]
fn regex_never_reads_internal_files() {
    let ws = example("regex-hidden");
    for path in [
        ".scriptorium/quarantine/archive-tail-1/sources/x.md",
        ".scriptorium/retrieval-index.bin",
        ".scriptorium-bm25.json",
        ".git/config",
        "topics/memory-superseded/old.md",
        "memory-superseded/topics/old.md",
        "sources/.scriptorium/stage.md",
    ] {
        ws.write(path, "secret\n");
    }
    ws.write("timeline/2026.md", "visible\n");
    #[cfg(unix)]
    std::os::unix::fs::symlink(ws.0.join(".git/config"), ws.0.join("topics/link.md")).expect("symlink");
    // `.` matches every non-empty line there is.
    let everything = grep(&ws.0, &GrepRequest { limit: GREP_LIMIT_MAX, ..regex(".") }).expect("grep");
    assert!(!everything.truncated);
    let mut paths: Vec<&str> = everything.matches.iter().map(|m| m.path.as_str()).collect();
    paths.dedup();
    assert_eq!(
        paths,
        [
            "sources/openprogram/_v2/sess-garden.md",
            "sources/openprogram/old-notes.md",
            "timeline/2026.md",
            "topics/garden/raised-bed.md"
        ]
    );
    assert_eq!(grep(&ws.0, &regex("secret")).expect("grep").total, 0);
}

#[test]
fn regex_limits_truncation_and_clipping() {
    let ws = Temp::new("regex-limits");
    let lines: String = (1..=250).map(|n| format!("  item {n:03} {}\n", "x".repeat(n * 2))).collect();
    ws.write("topics/many.md", &lines);
    let pattern = r"^\s*item \d{3} x+$";
    let default = grep(&ws.0, &regex(pattern)).expect("grep");
    assert_eq!((default.matches.len(), default.total, default.truncated), (GREP_LIMIT_DEFAULT, 250, true));
    assert_eq!(default.matches[0].text, format!("item 001 {}", "x".repeat(2)), "trimmed");
    let most = grep(&ws.0, &GrepRequest { limit: 1000, ..regex(pattern) }).expect("grep");
    assert_eq!((most.matches.len(), most.total, most.truncated), (GREP_LIMIT_MAX, 250, true));
    let clipped = &most.matches[199];
    assert_eq!(clipped.line, 200);
    assert_eq!(clipped.text.chars().count(), GREP_TEXT_MAX_CHARS);
    assert!(clipped.text.starts_with("item 200 xxx"));
    let one = grep(&ws.0, &GrepRequest { limit: 0, ..regex(pattern) }).expect("grep");
    assert_eq!((one.matches.len(), one.total, one.truncated), (1, 250, true));
    // A pattern matching the empty string matches every line, blank ones too.
    let all = grep(&ws.0, &GrepRequest { limit: 5, ..regex("x*") }).expect("grep");
    assert_eq!((all.total, all.truncated), (251, true), "250 lines and the empty one after the last LF");
    let exact = grep(&ws.0, &regex(r"item (0[0-4]\d|050) ")).expect("grep");
    assert_eq!((exact.total, exact.truncated), (50, false));
}

#[test]
fn plain_words_find_what_literal_grep_finds() {
    let ws = Temp::new("regex-words");
    ws.write("topics/latin.md", "Crème Brûlée\nCRÈME BRÛLÉE\ncreme brulee\nune crème brûlée\nÉcole\nécole\nL’ÉCOLE\n");
    ws.write("topics/greek.md", "ΣΊΣΥΦΟΣ\nσίσυφος\nΟδυσσεύς\n");
    ws.write("topics/cyrillic.md", "МОСКВА\nМосква\nв москва\n");
    ws.write("topics/cjk.md", "東京タワーに行った\n東京\nとうきょう\nＴＯＫＹＯ\nｔｏｋｙｏ\n");
    ws.write("topics/german.md", "STRASSE\nStraße\nSTRAẞE\n");
    for word in ["crème brûlée", "ÉCOLE", "σίσυφος", "ΣΊΣΥΦΟΣ", "москва", "東京", "東京タワー", "ｔｏｋｙｏ"]
    {
        for case_sensitive in [false, true] {
            let literal = grep(&ws.0, &GrepRequest { case_sensitive, ..GrepRequest::new(word) }).expect("literal");
            let pattern = grep(&ws.0, &GrepRequest { case_sensitive, ..regex(word) }).expect("regex");
            assert_eq!(found(&pattern), found(&literal), "{word:?}, case-sensitive: {case_sensitive}");
            assert!(literal.total > 0, "{word:?} is in some file in this case too");
        }
    }
    // Full case folding against simple folding: `ß` is `ss` only to literal grep.
    let literal = grep(&ws.0, &GrepRequest::new("straße")).expect("literal");
    assert_eq!(literal.total, 3);
    let pattern = grep(&ws.0, &regex("straße")).expect("regex");
    assert_eq!(found(&pattern), [("topics/german.md".to_owned(), 2), ("topics/german.md".to_owned(), 3)]);
}
