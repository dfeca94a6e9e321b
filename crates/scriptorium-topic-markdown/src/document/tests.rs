//! Line classes, paragraph analysis and exact rendering.

use super::*;

#[track_caller]
fn kinds(text: &str) -> Vec<(&'static str, usize, usize)> {
    let document = TopicDocument::from_text("topics/x.md", text);
    document
        .items()
        .iter()
        .map(|item| {
            let name = match item.kind {
                ItemKind::Blank => "blank",
                ItemKind::Heading { .. } => "heading",
                ItemKind::Fence => "fence",
                ItemKind::Markup => "markup",
                ItemKind::Definition(_) => "definition",
                ItemKind::Paragraph(_) => "paragraph",
            };
            (name, item.start, item.end)
        })
        .collect()
}

#[test]
fn items_cover_every_line() {
    let text =
        "# T\n\npara\nmore\n<!-- c -->\n```\n[^e1]: Time: 2024; Sources: x\n```\n[^e1]: Time: 2024; Sources: x\n";
    assert_eq!(
        kinds(text),
        [
            ("heading", 0, 1),
            ("blank", 1, 2),
            ("paragraph", 2, 4),
            ("markup", 4, 5),
            ("fence", 5, 8),
            ("definition", 8, 9)
        ]
    );
    assert_eq!(kinds("```\nopen fence\n"), [("fence", 0, 2)]);
}

#[test]
fn paragraphs_know_their_blocks() {
    let paragraph = Paragraph::new("A.[^e1] B[^e2][^e3] tail ^ab ^cd".to_owned(), vec!["H".to_owned()]);
    assert_eq!(paragraph.ids, ["ab", "cd"]);
    assert_eq!(paragraph.block_id(), Some("cd"));
    assert_eq!(paragraph.body, "A.[^e1] B[^e2][^e3] tail");
    let groups: Vec<(&str, Vec<&str>)> =
        paragraph.claims.iter().map(|c| (c.quote(), c.citations.iter().map(String::as_str).collect())).collect();
    assert_eq!(groups, [("A.", vec!["e1"]), ("B", vec!["e2", "e3"])]);
    assert_eq!(paragraph.tail, " tail");
    assert_eq!(paragraph.content(), "A. B tail");
    let invalid = Paragraph::new("Fact.[^e1] ^abc_1".to_owned(), Vec::new());
    assert!(invalid.ids.is_empty());
    assert_eq!(invalid.invalid_id.as_deref(), Some("abc_1"));
}

#[test]
fn headings_nest_and_skip_levels() {
    let document = TopicDocument::from_text("topics/x.md", "# A\n### C\np1\n## B\np2\n# D\np3\n");
    let paths: Vec<Vec<String>> = document.paragraphs().map(|(_, p)| p.headings.clone()).collect();
    assert_eq!(paths, [vec!["A", "C"], vec!["A", "B"], vec!["D"]]);
}

#[test]
fn render_is_exact_for_normal_form_and_stable_otherwise() {
    let normal = "# T\n\nFact.[^e-1] ^ab12cd34\n\n[^e-1]: Time: `2024`; Sources: [x](D1:1)\n";
    let document = TopicDocument::parse("topics/x.md", normal.as_bytes()).expect("utf-8");
    assert_eq!(document.render(), normal.as_bytes());
    let messy = "a\r\nb\u{2028}c\n\n\n";
    let document = TopicDocument::from_text("topics/x.md", messy);
    assert_eq!(render(&document), b"a\nb\nc\n\n\n");
    let again = TopicDocument::parse("topics/x.md", &document.render()).expect("utf-8");
    assert_eq!(again, document);
    assert_eq!(TopicDocument::from_text("topics/x.md", "").render(), b"");
}

#[test]
fn invalid_utf8_names_its_line() {
    let err = TopicDocument::parse("topics/x.md", b"ok\nbad \xff\n").expect_err("not utf-8");
    assert_eq!(err.code(), ErrorCode::NotUtf8);
    assert_eq!(err.line(), Some(2));
}

#[test]
fn spans_match_the_reference_examples() {
    let spans = paragraph_spans(&[
        "# H",
        "",
        "Para one",
        "continues",
        "",
        "## Sub",
        "Para two",
        "[^e1]: Time: `2024`; Sources: x",
        "after def",
    ]);
    let got: Vec<(usize, usize, Vec<String>)> = spans.into_iter().map(|s| (s.start, s.end, s.headings)).collect();
    assert_eq!(
        got,
        [
            (2, 4, vec!["H".to_owned()]),
            (6, 7, vec!["H".to_owned(), "Sub".to_owned()]),
            (8, 9, vec!["H".to_owned(), "Sub".to_owned()])
        ]
    );
}
