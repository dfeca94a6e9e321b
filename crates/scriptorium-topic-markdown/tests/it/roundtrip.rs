//! Property tests: generated valid trees parse strictly, round-trip through render,
//! stay byte-stable under normalization once committed (CRLF becomes LF), and satisfy
//! the fuzz invariants (fresh normalization is idempotent). `PROPTEST_CASES` raises the
//! default 256 cases.

use proptest::prelude::*;
use scriptorium_topic_markdown::fuzz::{check_tree, fixture_sources};
use scriptorium_topic_markdown::{
    Baseline, Mode, NormalizeOptions, SourceResolver, TopicDocument, normalize, parse_tree,
};

use crate::generate::{lf, tree};

proptest! {
    #[test]
    fn generated_trees_round_trip(spec in tree()) {
        let files = spec.render();
        for (path, bytes) in &files {
            let document = TopicDocument::parse(path, bytes).expect("generated text is UTF-8");
            prop_assert_eq!(&TopicDocument::parse(path, &document.render()).expect("UTF-8"), &document);
            let lf_bytes = lf(&files).remove(path).unwrap_or_default();
            prop_assert_eq!(document.render(), lf_bytes);
        }
        let sources = SourceResolver::new(fixture_sources());
        let parsed = parse_tree(&files, &sources, Mode::Strict);
        prop_assert!(parsed.violations().is_empty(), "{:?}", parsed.violations());
        let blocks = parsed.units().iter().filter(|u| !u.evidence.is_empty()).count();
        prop_assert_eq!(blocks, parsed.units().len());
        let baseline = Baseline::from_units(parsed.units().iter().cloned());
        let out = normalize(&files, &baseline, &sources, &NormalizeOptions::default())
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        if spec.canonical {
            prop_assert_eq!(&out.files, &lf(&files));
        }
        let again = normalize(&out.files, &baseline, &sources, &NormalizeOptions::default())
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&again.files, &out.files);
    }

    #[test]
    fn generated_trees_meet_the_fuzz_invariants(spec in tree()) {
        check_tree(&spec.render());
    }
}

/// Fragments that make up topic syntax, for a structure-aware byte soup.
const TOKENS: &[&str] = &[
    "# ",
    "## ",
    "\n",
    "\n\n",
    "\r\n",
    "\r",
    "\u{2028}",
    "\u{c}",
    "\0",
    " ",
    "\t",
    "Fact",
    "京都",
    "x.",
    "[^e1]",
    "[^e2]",
    "[^e-1]",
    "[^mem_a]",
    "[^new-evidence-x]",
    " ^ab12cd34",
    " ^ab12cd34-x",
    " ^bad_id",
    "^",
    "[^e1]: ",
    "[^e-1]: ",
    "[^mem_a]: ",
    "Time: `2024`; Sources: ",
    "Time: 2024-02-30; Sources: ",
    "2024-03 · Sources: ",
    "Time: undated; Sources: ",
    "[D1:1](D1:1)",
    "[m](openprogram/t/m1)",
    "[a](../sources/D1.md#d1-2)",
    ", ",
    "D1:1",
    "openprogram/t/m1",
    "[see](people/b.md#^ab12cd34)",
    "[self](#^ab12cd34)",
    "[x](a.md)",
    "```",
    "<!-- c -->",
    "<a id=\"x\"></a>",
    "·",
    "[",
    "]",
    "(",
    ")",
    "#",
];

proptest! {
    #[test]
    fn token_soup_meets_the_fuzz_invariants(picks in prop::collection::vec(0..TOKENS.len(), 0..80)) {
        let text: String = picks.iter().map(|&i| TOKENS[i]).collect();
        scriptorium_topic_markdown::fuzz::check_topic_bytes(text.as_bytes());
    }
}

const LABELS: &[&str] = &["e1", "e2", "e-1", "e-2", "mem_a", "new-evidence-x"];
const TIMES: &[&str] =
    &["Time: `2024`; ", "Time: 2024-03-15 ; ", "Time: `undated`; ", "2024-05 · ", "Time: 2024-02-30; "];
const SOURCES: &[&str] = &[
    "Sources: [D1:1](D1:1)",
    "Sources: D1:1, openprogram/t/m1",
    "Sources: [m](../sources/openprogram/_v2/t.md#source-eb21460906d88a3b)",
    "Sources: [a](../sources/D1.md#d1-2), [b](openprogram/t/m1)",
    "Sources: [ ](nowhere)",
];
const ENDS: &[&str] = &["\n", "\n", "\n", "\n\n", "\r\n", "\u{2028}", "\0"];

/// One line of a topic-shaped soup.
fn soup_line() -> impl Strategy<Value = String> {
    prop_oneof![
        (1..4usize, 0..3usize).prop_map(|(level, w)| format!("{} {}", "#".repeat(level), ["T", "京都", "Notes"][w])),
        Just(String::new()),
        (0..3usize, prop::collection::vec(0..LABELS.len(), 0..3), prop::option::of(0..4usize)).prop_map(
            |(w, cites, id)| {
                let mut line = ["Fact one.", "宇治の抹茶 see [b](people/b.md#^ab12cd34).", "x"][w].to_owned();
                for c in cites {
                    line.push_str(&format!("[^{}]", LABELS[c]));
                }
                if let Some(i) = id {
                    line.push_str([" ^ab12cd34", " ^cd34ef56", " \t^ab12cd34-x  ", " ^bad_1"][i]);
                }
                line
            }
        ),
        (0..LABELS.len(), 0..TIMES.len(), 0..SOURCES.len())
            .prop_map(|(l, t, s)| format!("[^{}]: {}{}", LABELS[l], TIMES[t], SOURCES[s])),
        Just("```".to_owned()),
        Just("<!-- note -->".to_owned()),
    ]
}

proptest! {
    #[test]
    fn line_soup_meets_the_fuzz_invariants(lines in prop::collection::vec((soup_line(), 0..ENDS.len()), 0..30)) {
        let text: String = lines.iter().map(|(line, end)| format!("{line}{}", ENDS[*end])).collect();
        scriptorium_topic_markdown::fuzz::check_topic_bytes(text.as_bytes());
    }
}
