//! `memory_get` on real workspaces: its three modes, its notices and errors, its caps,
//! sanitizing, and every way a path could reach outside the workspace or into its
//! internal files (decision 6), including generated paths.

use std::path::Path;

use proptest::prelude::*;
use scriptorium_backend_api::LocalBackend;
use scriptorium_backend_api::config::RetrievalMethod;
use serde_json::json;

use crate::{TempDir, backend, call, error_code, example, write};

fn get(backend: &LocalBackend, arguments: serde_json::Value) -> String {
    call(backend, "memory_get", arguments)
}

#[test]
fn a_whole_file_a_block_and_a_section() {
    let dir = TempDir::new("get-modes");
    let backend = backend(&example(&dir), RetrievalMethod::Bm25);
    let whole = get(&backend, json!({"path": "topics/garden/raised-bed.md"}));
    let on_disk =
        std::fs::read_to_string(crate::example_workspace().join("topics/garden/raised-bed.md")).expect("read");
    assert_eq!(whole, on_disk.trim_end(), "the first 400 lines of a short file are all of it");
    let block = get(&backend, json!({"path": "topics/garden/raised-bed.md", "block_id": "352218f9"}));
    assert!(block.starts_with("The tomatoes are watered every second morning"), "{block}");
    assert!(block.ends_with("#source-30c15e463ae90c49)"), "the definition it cites follows: {block}");
    assert!(!block.contains("e-c7eb913ad2"), "a definition it does not cite stays out: {block}");
    let caret = get(&backend, json!({"path": "topics/garden/raised-bed.md", "block_id": "^352218f9"}));
    assert_eq!(caret, block);
    let section = get(&backend, json!({"path": "topics/people/book-club.md", "heading": "history"}));
    assert!(section.starts_with("## History\n\nThe club began in November 2025"), "{section}");
    assert!(!section.contains("first Thursday"), "{section}");
    let title = get(&backend, json!({"path": "topics/people/book-club.md", "heading": "Book club"}));
    assert!(title.contains("## History") && title.contains("first Thursday"), "a level-1 section runs on: {title}");
}

#[test]
fn a_source_archive_shows_its_record_lines_only() {
    let dir = TempDir::new("get-source");
    let backend = backend(&example(&dir), RetrievalMethod::Bm25);
    let out = get(&backend, json!({"path": "sources/openprogram/_v2/group-bookclub.md"}));
    assert!(out.starts_with("[2026-03-05T19:02:11+01:00] Ada (4402): We meet on the first Thursday"), "{out}");
    assert!(out.contains("Everyone brings one question."), "{out}");
    // b6 quotes a fake frame header inside its record text; that is record text, but no
    // real id, speaker or meta line of the archive shows.
    for hidden in
        ["source-meta", "openprogram-source-archive", "source-id:openprogram/group-bookclub/b1", "speaker-id:4402"]
    {
        assert!(!out.contains(hidden), "{hidden}: {out}");
    }
}

#[test]
fn get_output_is_sanitized_and_an_empty_file_says_so() {
    let dir = TempDir::new("get-sanitize");
    let root = example(&dir);
    write(&root, "topics/blank.md", "\n   \n");
    write(&root, "notes/only-a-fence.txt", "<memory-context>\nsecret\n</memory-context>\n");
    let backend = backend(&root, RetrievalMethod::Bm25);
    let out = get(&backend, json!({"path": "topics/home/tea.md"}));
    assert!(out.contains("The owner drinks green tea") && out.contains("every afternoon"), "{out}");
    assert!(!out.to_lowercase().contains("memory-context") && !out.contains("[System note"), "{out}");
    assert!(!out.contains("smuggled"), "a complete fenced block goes whole: {out}");
    assert_eq!(get(&backend, json!({"path": "topics/blank.md"})), "(empty)");
    assert_eq!(get(&backend, json!({"path": "notes/only-a-fence.txt"})), "(empty)");
}

#[test]
fn get_notices_a_missing_path_and_refuses_bad_selectors() {
    let dir = TempDir::new("get-errors");
    let root = example(&dir);
    std::fs::create_dir_all(root.join("topics/empty-dir")).expect("mkdir");
    let backend = backend(&root, RetrievalMethod::Bm25);
    for arguments in [json!({}), json!({"path": ""}), json!({"path": "  "})] {
        let out = get(&backend, arguments);
        assert!(out.contains("memory_browse") && error_code(&out).is_none(), "{out}");
    }
    let invalid = [
        json!({"path": "topics/garden/raised-bed.md", "heading": "Care", "block_id": "352218f9"}),
        json!({"path": "topics/garden/nowhere.md"}),
        json!({"path": "topics/empty-dir"}),
        json!({"path": "topics/garden/raised-bed.md", "heading": "Harvest"}),
        json!({"path": "topics/garden/raised-bed.md", "block_id": "deadbeef"}),
        json!({"path": 5}),
        json!({"path": "topics/garden/raised-bed.md", "heading": false}),
        json!({"path": "topics/a\u{0}b.md"}),
    ];
    for arguments in invalid {
        let out = get(&backend, arguments.clone());
        assert_eq!(error_code(&out).as_deref(), Some("INVALID_ARGUMENT"), "{arguments}: {out}");
    }
    let out = get(&backend, json!({"path": "topics/garden/nowhere.md"}));
    assert!(out.contains("\"path\":\"topics/garden/nowhere.md\"") && out.contains("memory_browse"), "{out}");
}

/// The example workspace with an outside secret, internal files holding secrets, and
/// links from inside `topics/` to the outside.
fn escape_workspace(dir: &TempDir) -> std::path::PathBuf {
    let root = example(dir);
    write(dir.path(), "secret.md", "OUTSIDE-SECRET\n");
    write(dir.path(), "secret-dir/inner.md", "OUTSIDE-SECRET\n");
    write(&root, ".git/HEAD", "ref: refs/heads/INTERNAL-SECRET\n");
    write(&root, "memory-superseded/topics/old.md", "INTERNAL-SECRET\n");
    write(&root, "topics/.hidden/x.md", "INTERNAL-SECRET\n");
    write(&root, "topics/.hidden.md", "INTERNAL-SECRET\n");
    std::os::unix::fs::symlink(dir.path().join("secret.md"), root.join("topics/link.md")).expect("symlink");
    std::os::unix::fs::symlink(dir.path().join("secret-dir"), root.join("topics/linked")).expect("symlink");
    std::os::unix::fs::symlink(root.join("topics/people"), root.join("topics/alias")).expect("symlink");
    root
}

fn put_runtime_secret(root: &Path) {
    write(root, ".scriptorium/secret.md", "INTERNAL-SECRET\n");
    write(root, ".scriptorium/quarantine/x.md", "INTERNAL-SECRET\n");
    write(root, ".scriptorium/txn/stage/topics/x.md", "INTERNAL-SECRET\n");
}

#[test]
fn no_path_reaches_outside_or_into_internal_files() {
    let dir = TempDir::new("get-escapes");
    let root = escape_workspace(&dir);
    let backend = backend(&root, RetrievalMethod::Bm25);
    // The first call opens the workspace (creating `.scriptorium/`); secrets go in after.
    assert_eq!(error_code(&get(&backend, json!({"path": "topics/people/cal.md"}))), None);
    put_runtime_secret(&root);
    let outside = root.parent().expect("a parent").join("secret.md");
    let escapes = [
        outside.to_string_lossy().into_owned(),
        "/etc/passwd".to_owned(),
        "../secret.md".to_owned(),
        "topics/../../secret.md".to_owned(),
        "%2e%2e/secret.md".to_owned(),
        "%2E%2E%2Fsecret.md".to_owned(),
        "topics%2F..%2F..%2Fsecret.md".to_owned(),
        "%252e%252e/secret.md".to_owned(),
        "..\\secret.md".to_owned(),
        "topics/link.md".to_owned(),
        "topics/linked/inner.md".to_owned(),
        "topics/alias/cal.md".to_owned(),
        ".scriptorium/secret.md".to_owned(),
        ".scriptorium/quarantine/x.md".to_owned(),
        ".scriptorium/txn/stage/topics/x.md".to_owned(),
        "./.scriptorium/secret.md".to_owned(),
        ".git/HEAD".to_owned(),
        "%2egit/HEAD".to_owned(),
        "memory-superseded/topics/old.md".to_owned(),
        "topics/.hidden/x.md".to_owned(),
        "topics/.hidden.md".to_owned(),
    ];
    for path in escapes {
        let out = get(&backend, json!({"path": path}));
        assert_eq!(error_code(&out).as_deref(), Some("PATH_OUTSIDE_WORKSPACE"), "{path}: {out}");
        assert!(!out.contains("SECRET"), "{path}: {out}");
    }
}

#[test]
fn a_huge_file_is_cut_at_the_cap_never_inside_a_character() {
    let dir = TempDir::new("get-cap");
    let root = example(&dir);
    // 300 lines of 200 three-byte characters: 60,000 characters in the first 400 lines.
    let line = "記".repeat(199) + "憶";
    write(&root, "notes/huge.txt", format!("{line}\n").repeat(300));
    let backend = backend(&root, RetrievalMethod::Bm25);
    let out = get(&backend, json!({"path": "notes/huge.txt"}));
    assert_eq!(out.chars().count(), 30_000);
    let file = format!("{line}\n").repeat(300);
    assert!(file.starts_with(&out), "a prefix of the file");
    assert!(out.ends_with('記') || out.ends_with('憶'), "cut between characters");
    let grep = call(&backend, "memory_grep", json!({"query": "記憶"}));
    assert!(grep.chars().count() <= 20_000);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    /// Paths made of climbing, encoded, hidden and separator pieces never read a secret,
    /// never panic, and are refused unless they name a visible file inside.
    #[test]
    fn generated_paths_never_escape(
        pieces in proptest::collection::vec(
            prop_oneof![
                Just(".."), Just("."), Just(""), Just("%2e%2e"), Just("%2E"), Just("%2f"), Just("%2F"),
                Just("%5c"), Just("\\"), Just("%252e%252e"), Just("%00"), Just("topics"), Just("people"),
                Just("cal.md"), Just(".git"), Just("HEAD"), Just(".scriptorium"), Just("secret.md"),
                Just("link.md"), Just("linked"), Just("inner.md"), Just("memory-superseded"), Just("~"),
                Just("%"), Just("é"), Just("/"),
            ],
            1..7,
        ),
        separators in proptest::collection::vec(prop_oneof![Just("/"), Just("\\"), Just("%2F"), Just("//"), Just("")], 7),
        noise in "\\PC{0,12}",
    ) {
        let dir = shared();
        let mut path = String::new();
        for (piece, separator) in pieces.iter().zip(separators.iter().cycle()) {
            path.push_str(piece);
            path.push_str(separator);
        }
        for candidate in [path.clone(), format!("{path}{noise}"), format!("{noise}{path}")] {
            let out = get(&dir.1, json!({"path": candidate}));
            prop_assert!(!out.contains("SECRET"), "{:?}: {}", candidate, out);
            match error_code(&out).as_deref() {
                None => {
                    // Only a visible file inside could have been read: the pending topic here.
                    prop_assert!(out.contains("Cal offered") || out.contains("memory_browse"), "{:?}: {}", candidate, out);
                }
                Some(code) => prop_assert!(
                    code == "PATH_OUTSIDE_WORKSPACE" || code == "INVALID_ARGUMENT",
                    "{:?}: {}", candidate, out
                ),
            }
        }
    }
}

/// One escape workspace and backend for every generated case.
fn shared() -> &'static (TempDir, LocalBackend) {
    static SHARED: std::sync::OnceLock<(TempDir, LocalBackend)> = std::sync::OnceLock::new();
    SHARED.get_or_init(|| {
        let dir = TempDir::new("get-proptest");
        let root = escape_workspace(&dir);
        let backend = backend(&root, RetrievalMethod::Bm25);
        let _ = get(&backend, json!({"path": "topics/people/cal.md"}));
        put_runtime_secret(&root);
        (dir, backend)
    })
}
