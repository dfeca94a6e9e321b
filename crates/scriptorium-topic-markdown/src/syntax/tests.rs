//! Hand matchers against the reference regexes, on the tricky inputs.

use super::*;

#[test]
fn headings_follow_the_regex() {
    assert_eq!(heading("# Top #"), Some((1, "Top #")));
    assert_eq!(heading("#\tTab heading"), Some((1, "Tab heading")));
    assert_eq!(heading("###### Six  "), Some((6, "Six")));
    assert_eq!(heading("####### seven"), None);
    assert_eq!(heading("#NoSpace"), None);
    assert_eq!(heading("# "), None);
    assert_eq!(heading("#  "), Some((1, " ")));
}

#[test]
fn markup_and_fences() {
    assert!(is_markup("  <a id=\"x\"></a>"));
    assert!(is_markup("<a\tid>"));
    assert!(is_markup("<!-- c -->"));
    assert!(!is_markup("<abbr>"));
    assert!(is_fence("  ```python"));
    assert!(!is_fence("``"));
}

#[test]
fn citations_and_links() {
    let found = citations("A[^e1][^e-2] b [^ bad] [^mem_x]");
    let ids: Vec<&str> = found.iter().map(|c| c.id).collect();
    assert_eq!(ids, ["e1", "e-2", "mem_x"]);
    assert_eq!(found[1].start, found[0].end);
    let found = links("[a](b) [](x) [[c](d) [e]( f )");
    let pairs: Vec<(&str, &str)> = found.iter().map(|l| (l.label, l.target)).collect();
    assert_eq!(pairs, [("a", "b"), ("[c", "d"), ("e", " f ")]);
}

#[test]
fn block_links_accept_two_id_shapes() {
    let text = "[a](x.md#^b10c0001) [b](#^mem_old) [c](y.md#^mem_) [d](z.md#notid) [e](#^a_b)";
    let found = block_links(text);
    let ids: Vec<&str> = found.iter().map(|l| l.target).collect();
    assert_eq!(ids, ["b10c0001", "mem_old"]);
    assert_eq!(&text[found[0].path_start..found[0].path_end], "x.md");
}

#[test]
fn suffix_runs_are_leftmost() {
    let run = suffix_run("Fact.[^e] ^ab ^cd").expect("run");
    assert_eq!(run.ids, ["ab", "cd"]);
    assert_eq!(run.start, 9);
    let run = suffix_run("x ^a more ^b").expect("run");
    assert_eq!(run.ids, ["b"]);
    assert_eq!(suffix_run("x ^a^b"), None);
    assert_eq!(suffix_run("^abc"), None);
    assert_eq!(suffix_run("x\n^abc").map(|r| r.ids), Some(vec!["abc"]));
    assert_eq!(invalid_suffix("x ^abc_1"), Some("abc_1"));
    assert_eq!(invalid_suffix("x ^"), None);
    assert_eq!(invalid_suffix("^abc_1"), None);
}

#[test]
fn line_final_ids() {
    assert_eq!(line_final_id("text \t^abc  "), Some((4, "abc")));
    assert_eq!(line_final_id("2^10"), Some((1, "10")));
    assert_eq!(line_final_id("x[^e1]"), None);
    assert!(has_spaced_final_id("a ^b1 "));
    assert!(!has_spaced_final_id("a^b1"));
}
