//! One small tree per rule: each violation code is emitted, strict and lenient
//! differ exactly where the reference does, and units carry what readers need.

use super::*;
use crate::source::MemorySources;

const DEF: &str = "[^e-1]: Time: `2024-03`; Sources: [a](D1:1)";

fn parse(files: &[(&str, &str)], mode: Mode) -> ParsedTree {
    let sources = SourceResolver::new(MemorySources::new());
    parse_tree(files.iter().map(|(p, t)| (*p, *t)), &sources, mode)
}

#[track_caller]
fn check(text: &str, strict: &[ErrorCode], lenient: &[ErrorCode]) {
    for (mode, want) in [(Mode::Strict, strict), (Mode::Lenient, lenient)] {
        let parsed = parse(&[("topics/x.md", text)], mode);
        let got: Vec<ErrorCode> = parsed.violations().iter().map(Violation::code).collect();
        assert_eq!(got, want, "{mode:?} {text:?}: {:?}", parsed.violations());
    }
}

#[test]
fn every_rule_has_its_code() {
    use ErrorCode::*;
    check(&format!("Fact.[^e-1] ^ab\n\n{DEF}\n"), &[], &[]);
    check(&format!("Fact.[^e-1] ^ab_c\n\n{DEF}\n"), &[InvalidBlockId], &[InvalidBlockId]);
    check(&format!("Fact.[^e-1] ^ab\n\nOther.[^e-1] ^ab\n\n{DEF}\n"), &[DuplicateBlockId], &[DuplicateBlockId]);
    check(&format!("Fact.[^e-1]\n\n{DEF}\n"), &[MissingBlockId], &[]);
    check(&format!("Fact.[^e-1] ^ab\n\nJust prose.\n\n{DEF}\n"), &[UncitedText], &[]);
    check(&format!("Fact. ^ab\n\n{DEF}\n"), &[MissingCitation, UnusedFootnote], &[]);
    check(&format!("[^e-1] ^ab\n\n{DEF}\n"), &[MissingContent], &[MissingContent]);
    check(&format!("Fact.[^e-1] more ^ab\n\n{DEF}\n"), &[ContentAfterEvidence], &[]);
    check(&format!("Fact.[^e-1][^e-2] ^ab\n\n{DEF}\n"), &[UndefinedFootnote], &[UndefinedFootnote]);
    check(&format!("Fact.[^e-1] ^ab\n\n{DEF}\n{}\n", DEF.replace("e-1", "e-2")), &[UnusedFootnote], &[]);
    check(&format!("Fact.[^e-1] ^ab\n\n{DEF}\n{DEF}\n"), &[DuplicateFootnote], &[DuplicateFootnote]);
    let bad_date = DEF.replace("2024-03", "2024-02-30");
    check(&format!("Fact.[^e-1] ^ab\n\n{bad_date}\n"), &[InvalidDate], &[InvalidDate]);
    let no_links = "[^e-1]: Time: 2024; Sources: D1:1";
    check(&format!("Fact.[^e-1] ^ab\n\n{no_links}\n"), &[MissingSourceLinks], &[MissingSourceLinks]);
    let blank_label = DEF.replace("[a]", "[ ]");
    check(&format!("Fact.[^e-1] ^ab\n\n{blank_label}\n"), &[EmptySourceLabel], &[EmptySourceLabel]);
    let bad_target = DEF.replace("(D1:1)", "(nowhere)");
    check(&format!("Fact.[^e-1] ^ab\n\n{bad_target}\n"), &[InvalidSourceTarget], &[InvalidSourceTarget]);
}

#[test]
fn violations_are_all_collected_in_order() {
    let text = format!("[^e-1] ^ab\n\nFact.[^e-9] ^cd\n\n{DEF}\n{DEF}\n");
    let parsed = parse(&[("topics/x.md", &text)], Mode::Strict);
    let got: Vec<(ErrorCode, Option<u32>, &str)> =
        parsed.violations().iter().map(|v| (v.code(), v.line(), v.detail())).collect();
    assert_eq!(
        got,
        [
            (ErrorCode::DuplicateFootnote, Some(6), "duplicate footnote definition: e-1"),
            (ErrorCode::MissingContent, Some(1), "missing memory content before e-1"),
            (ErrorCode::UndefinedFootnote, Some(3), "undefined footnote: e-9"),
        ]
    );
    assert!(parsed.check().is_err());
}

#[test]
fn bad_paths_and_bytes_are_violations() {
    let sources = SourceResolver::new(MemorySources::new());
    let files: [(&str, &[u8]); 2] = [("notes/x.md", b"x"), ("topics/y.md", b"\xff")];
    let parsed = parse_tree(files, &sources, Mode::Strict);
    let codes: Vec<ErrorCode> = parsed.violations().iter().map(Violation::code).collect();
    assert_eq!(codes, [ErrorCode::InvalidPath, ErrorCode::NotUtf8]);
}

#[test]
fn aliases_and_legacy_records_are_units() {
    let text = format!(
        "# H\n\nMerged [x](other.md#^zz).[^e-1] ^ab ^cd\n\nOld.[^mem_a] Older.[^mem_b] trailing\n\n{DEF}\n\
         [^mem_a]: 2024-01-02 · Sources: [D1:2](D1:2)\n[^mem_b]: Time: undated; Sources: [q](D1:3)\n"
    );
    let units = parse(&[("topics/x.md", &text)], Mode::Strict).check().expect("valid");
    let ids: Vec<(&str, &UnitKind)> = units.iter().map(|u| (u.memory_id.as_str(), &u.kind)).collect();
    assert_eq!(
        ids,
        [
            ("ab", &UnitKind::Alias { of: "cd".to_owned() }),
            ("cd", &UnitKind::Block),
            ("mem_a", &UnitKind::Legacy),
            ("mem_b", &UnitKind::Legacy)
        ]
    );
    assert_eq!(units[0].content, units[1].content);
    assert_eq!(units[1].relation_targets, ["zz"]);
    assert_eq!(units[1].when.as_deref(), Some("2024-03"));
    assert_eq!(units[1].line, 3);
    assert_eq!(units[2].content, "Old.");
    assert_eq!(units[2].source_refs, ["D1:2"]);
    assert_eq!(units[2].when.as_deref(), Some("2024-01-02"));
    assert_eq!(units[3].when, None);
    assert!(units[2].evidence.is_empty());
    // The alias carries its paragraph's creation order; later units keep their position.
    assert_eq!(units.iter().map(|u| u.created_order).collect::<Vec<_>>(), [0, 0, 2, 3]);
}

#[test]
fn unit_sources_are_a_union_by_id() {
    let text = "Claim.[^e-1][^e-2] ^ab\n\n[^e-1]: Time: undated; Sources: [one](D1:1), [two](D1:2)\n\
                [^e-2]: Time: 2024-05-06; Sources: [again](D1:1)\n";
    let units = parse(&[("topics/x.md", text)], Mode::Strict).check().expect("valid");
    assert_eq!(units[0].source_refs, ["D1:1", "D1:2"]);
    assert_eq!(units[0].source_labels, ["one", "two"]);
    assert_eq!(units[0].when.as_deref(), Some("2024-05-06"));
    assert_eq!(units[0].whens(), ["2024-05-06"]);
    assert_eq!(units[0].evidence.len(), 2);
}

#[test]
fn prose_skips_structure() {
    let sources = SourceResolver::new(MemorySources::new());
    let tree = parse_tree(
        [("topics/b.md", "B.[^x] ^b1\n"), ("topics/a/z.md", "```\ncode\n```\nZ one.\n\n<!-- c -->\n")],
        &sources,
        Mode::Lenient,
    );
    assert_eq!(topic_prose(tree.documents()), "Z one.\nB.");
}

proptest::proptest! {
    /// Whitespace inside a paragraph (between words, across its lines, around a citation)
    /// collapses to one space in the prose, for every Python whitespace kind.
    #[test]
    fn prose_collapses_whitespace_inside_a_paragraph(
        words in proptest::collection::vec("[a-z]{1,6}", 1..6),
        // One gap never holds two line breaks: a blank line would end the paragraph.
        gaps in proptest::collection::vec(
            proptest::sample::select(vec![" ", "  ", "\t", " \t ", "\n", " \n\t", "\u{a0}", "\u{3000} "]),
            5,
        ),
    ) {
        let mut body = String::new();
        for (n, word) in words.iter().enumerate() {
            if n > 0 {
                body.push_str(gaps[n - 1]);
            }
            body.push_str(word);
        }
        let text = format!("{body}.[^e-1] ^ab\n\n{DEF}\n");
        let sources = SourceResolver::new(MemorySources::new());
        let tree = parse_tree([("topics/x.md", text.as_str())], &sources, Mode::Lenient);
        proptest::prop_assert_eq!(topic_prose(tree.documents()), format!("{}.", words.join(" ")));
    }
}

proptest::proptest! {
    /// Every alias of a merged paragraph carries the paragraph's creation order (its
    /// first unit's position), whatever precedes it; the units after keep their position.
    #[test]
    fn aliases_share_their_paragraph_creation_order(before in 0usize..4, aliases in 1usize..5) {
        let mut text = String::new();
        for n in 0..before {
            text.push_str(&format!("Before {n}.[^e-1] ^b{n}\n\n"));
        }
        let run: Vec<String> = (0..=aliases).map(|n| format!("^m{n}")).collect();
        text.push_str(&format!("Merged.[^e-1] {}\n\nAfter.[^e-1] ^zz\n\n{DEF}\n", run.join(" ")));
        let units = parse(&[("topics/x.md", &text)], Mode::Strict).check().expect("valid");
        let orders: Vec<usize> = units.iter().map(|u| u.created_order).collect();
        let mut want: Vec<usize> = (0..before).collect();
        want.extend(std::iter::repeat_n(before, aliases + 1));
        want.push(before + aliases + 1);
        proptest::prop_assert_eq!(orders, want);
    }
}
