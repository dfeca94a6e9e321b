//! grep on real temporary workspaces: what is visible, v2 metadata hidden, case, prefix,
//! limit, clipping.

use std::path::PathBuf;

use super::*;

mod regex_mode;

struct Temp(PathBuf);

impl Temp {
    fn new(name: &str) -> Self {
        let root = std::env::temp_dir().join(format!("scriptorium-grep-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("mkdir");
        Temp(root)
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.0.join(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const V2: &str = "sources/openprogram/_v2/sess-garden.md";

fn example(name: &str) -> Temp {
    let temp = Temp::new(name);
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/workspace");
    for path in ["topics/garden/raised-bed.md", V2, "sources/openprogram/old-notes.md"] {
        temp.write(path, &std::fs::read_to_string(example.join(path)).expect("example"));
    }
    temp
}

fn found(response: &GrepResponse) -> Vec<(String, usize)> {
    response.matches.iter().map(|m| (m.path.clone(), m.line)).collect()
}

#[test]
fn internal_files_and_links_are_never_searched() {
    let ws = example("hidden");
    for path in [
        ".scriptorium/quarantine/x.md",
        ".scriptorium-bm25.json",
        ".git/config",
        "topics/memory-superseded/old.md",
        "sources/.scriptorium/stage.md",
    ] {
        ws.write(path, "secret needle\n");
    }
    ws.write("timeline/2026.md", "a visible needle\n");
    ws.write("core.md", "\nNeedle in core\n");
    #[cfg(unix)]
    std::os::unix::fs::symlink(ws.0.join(".git/config"), ws.0.join("topics/link.md")).expect("symlink");
    let response = grep(&ws.0, &GrepRequest::new("NEEDLE")).expect("grep");
    assert_eq!(found(&response), [("core.md".to_owned(), 2), ("timeline/2026.md".to_owned(), 1)]);
    assert_eq!(response.matches[0].text, "Needle in core");
    assert_eq!((response.total, response.truncated), (2, false));
}

#[test]
fn v2_archives_match_on_record_lines_only() {
    let ws = example("v2");
    ws.write("topics/notes.md", "mentions source-meta here\n");
    let meta = grep(&ws.0, &GrepRequest::new("source-meta")).expect("grep");
    assert_eq!(found(&meta), [("topics/notes.md".to_owned(), 1)]);
    assert!(grep(&ws.0, &GrepRequest::new("source-id:")).expect("grep").matches.iter().all(|m| m.path != V2));
    // The second line of a two-line record keeps its physical line number.
    let basil = grep(&ws.0, &GrepRequest::new("basil between them")).expect("grep");
    let in_v2: Vec<&GrepMatch> = basil.matches.iter().filter(|m| m.path == V2).collect();
    assert_eq!(in_v2.len(), 1);
    let text = std::fs::read_to_string(ws.0.join(V2)).expect("read");
    let physical = text.split('\n').position(|l| l.contains("basil between them")).expect("line") + 1;
    assert_eq!(in_v2[0].line, physical);
    // Legacy archives are searched line by line, metadata comments included.
    let legacy = grep(&ws.0, &GrepRequest::new("source-id:openprogram/old-notes/n1")).expect("grep");
    assert_eq!(legacy.total, 1);
}

#[test]
fn case_prefix_limit_and_clipping() {
    let ws = example("options");
    let long = format!("  needle {}  ", "x".repeat(400));
    ws.write("topics/a.md", &format!("Needle\nneedle\n{long}\n"));
    ws.write("topics/b/c.md", "NEEDLE\n");
    let all = grep(&ws.0, &GrepRequest::new("needle")).expect("grep");
    assert_eq!(all.total, 4);
    assert_eq!(all.matches[2].text.chars().count(), GREP_TEXT_MAX_CHARS);
    assert!(all.matches[2].text.starts_with("needle x"));
    let exact = GrepRequest { case_sensitive: true, ..GrepRequest::new("needle") };
    assert_eq!(
        found(&grep(&ws.0, &exact).expect("grep")),
        [("topics/a.md".to_owned(), 2), ("topics/a.md".to_owned(), 3)]
    );
    let prefixed = GrepRequest { prefix: Some("/topics/b".into()), ..GrepRequest::new("needle") };
    assert_eq!(found(&grep(&ws.0, &prefixed).expect("grep")), [("topics/b/c.md".to_owned(), 1)]);
    let limited = grep(&ws.0, &GrepRequest { limit: 2, ..GrepRequest::new("needle") }).expect("grep");
    assert_eq!((limited.matches.len(), limited.total, limited.truncated), (2, 4, true));
    let zero = grep(&ws.0, &GrepRequest { limit: 0, ..GrepRequest::new("needle") }).expect("grep");
    assert_eq!(zero.matches.len(), 1, "the limit is clamped to at least one");
    // Full case folding: `ß` matches `SS`.
    ws.write("topics/d.md", "STRASSE\n");
    assert_eq!(grep(&ws.0, &GrepRequest::new("straße")).expect("grep").total, 1);
}

#[test]
fn blank_query_is_an_error() {
    let ws = Temp::new("blank");
    let error = grep(&ws.0, &GrepRequest::new("  ")).expect_err("blank");
    assert_eq!(error.code(), ErrorCode::BlankQuery);
}
