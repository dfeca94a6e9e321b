//! Path helpers against Python's `posixpath` results.

use super::*;

#[test]
fn normpath_like_python() {
    assert_eq!(normpath("topics/people/../../sources/x.md"), "sources/x.md");
    assert_eq!(normpath("topics/../../x"), "../x");
    assert_eq!(normpath("a/./b//c/"), "a/b/c");
    assert_eq!(normpath(""), ".");
    assert_eq!(normpath("/../a"), "/a");
    assert_eq!(join_normalized("", "people/mei.md"), "people/mei.md");
    assert_eq!(join_normalized("topics/a", "/etc/x"), "/etc/x");
}

#[test]
fn relpath_like_python() {
    assert_eq!(relpath("sources/openprogram/_v2/t.md", "topics/people"), "../../sources/openprogram/_v2/t.md");
    assert_eq!(relpath("sources/D1.md", "topics"), "../sources/D1.md");
    assert_eq!(relpath("topics/a.md", "topics"), "a.md");
    assert_eq!(relpath("topics", "topics"), ".");
}

#[test]
fn components_sort_before_extensions() {
    let mut paths = vec!["topics/b.md", "topics/a.md", "topics/a/z.md"];
    paths.sort_by(|a, b| component_cmp(a, b));
    assert_eq!(paths, ["topics/a/z.md", "topics/a.md", "topics/b.md"]);
}

#[test]
fn percent_coding() {
    assert_eq!(percent_decode("a%20b%zz%E7%BE%A4"), "a b%zz群");
    assert_eq!(quote_link_path("people/mei ü~.md"), "people/mei%20%C3%BC~.md");
    assert!(is_topic_path("topics/a/b.md"));
    assert!(!is_topic_path("topics/../b.md"));
    assert!(!is_topic_path("sources/b.md"));
    assert!(!is_topic_path("topics/b.txt"));
}
