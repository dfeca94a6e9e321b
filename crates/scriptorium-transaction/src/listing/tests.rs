//! The listing rule on real trees: classes, skipped entries, order, and the revision's set.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::{FileClass, Listing, Scope, SkipReason, classify};
use crate::test_support::TempDir;

fn write(root: &Path, path: &str) {
    let file = root.join(path);
    std::fs::create_dir_all(file.parent().expect("a parent")).expect("mkdir");
    std::fs::write(file, path).expect("write");
}

#[test]
fn classes_follow_the_path_rule() {
    assert_eq!(classify(b"topics/a.md"), FileClass::Topic);
    assert_eq!(classify(b"topics/a/b.md"), FileClass::Topic);
    assert_eq!(classify(b"sources/p/_v2/t.md"), FileClass::Source);
    assert_eq!(classify(b"sources/D1.md"), FileClass::Source);
    for visible in ["core.md", "timeline/2024.md", "topics/notes.txt", "topics.md"] {
        assert_eq!(classify(visible.as_bytes()), FileClass::Visible, "{visible}");
    }
    for hidden in [
        "topics/.git/x.md",
        "topics/.x.md",
        "topics/.md",
        "sources/.scriptorium/x.md",
        ".gitignore",
        "memory-superseded/x.md",
        "topics/memory-superseded/x.md",
    ] {
        assert_eq!(classify(hidden.as_bytes()), FileClass::Hidden, "{hidden}");
    }
    assert_eq!(classify(b"topics/\xff.md"), FileClass::Hidden);
}

#[test]
fn one_walk_lists_classes_and_reports_skipped_entries() {
    let dir = TempDir::new("listing-walk");
    let root = dir.path();
    for path in [
        "topics/a.md",
        "topics/a-c.md",
        "topics/a/b.md",
        "topics/.git/x.md",
        "topics/x.md/inner.md",
        "sources/D1.md",
        "core.md",
        ".git/HEAD",
        ".scriptorium/runtime.json",
    ] {
        write(root, path);
    }
    std::os::unix::fs::symlink(root.join("topics/a.md"), root.join("topics/link.md")).expect("symlink");
    std::os::unix::fs::symlink(root.join("topics/a.md"), root.join("topics/.hidden-link.md")).expect("symlink");
    let fifo = root.join("topics/pipe.md");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|status| status.success());
    std::fs::write(root.join(std::ffi::OsStr::from_bytes(b"topics/\xff.md")), b"x").expect("non-UTF-8 name");

    let listing = Listing::read(root, Scope::Root).complete().expect("listing");
    let files: Vec<(&[u8], FileClass)> = listing.files.iter().map(|f| (f.path_bytes(), f.class())).collect();
    assert_eq!(
        files,
        [
            (&b"core.md"[..], FileClass::Visible),
            (b"sources/D1.md", FileClass::Source),
            (b"topics/.git/x.md", FileClass::Hidden),
            (b"topics/a/b.md", FileClass::Topic),
            (b"topics/a-c.md", FileClass::Topic),
            (b"topics/a.md", FileClass::Topic),
            (b"topics/x.md/inner.md", FileClass::Topic),
            (b"topics/\xff.md", FileClass::Hidden),
        ]
    );
    let mut skipped: Vec<(&str, SkipReason)> = listing.skipped.iter().map(|s| (s.path.as_str(), s.reason)).collect();
    skipped.sort_unstable_by_key(|(path, _)| *path);
    let mut want = vec![("topics/link.md", SkipReason::Symlink), ("topics/x.md", SkipReason::MarkdownDir)];
    if made {
        want.push(("topics/pipe.md", SkipReason::Special));
    }
    want.sort_unstable_by_key(|(path, _)| *path);
    assert_eq!(skipped, want);

    let names = Listing::read_names(root, Scope::Root).complete().expect("listing");
    let named: Vec<(&[u8], FileClass)> = names.files.iter().map(|f| (f.path_bytes(), f.class())).collect();
    assert_eq!(named, files, "naming and stat walks list the same files");
    assert_eq!(names.skipped, listing.skipped);

    let memory = Listing::read(root, Scope::Under(&["topics"])).complete().expect("listing");
    assert!(memory.files.iter().all(|f| f.path_bytes().starts_with(b"topics/")));
    assert_eq!(memory.memory().count(), 4);
}
