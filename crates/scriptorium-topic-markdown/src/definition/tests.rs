//! Definition lines in both forms, and the lines that only look like one.

use super::*;

#[track_caller]
fn check(line: &str, want: Option<(&str, &str, DefinitionForm, &str, usize)>) {
    let got = parse_definition(line);
    let got = got.as_ref().map(|d| (d.id.as_str(), d.time.as_str(), d.form, d.sources.as_str(), d.links.len()));
    assert_eq!(got, want, "{line:?}");
}

#[test]
fn canonical_and_legacy_forms() {
    check(
        "[^e-1]: Time: `2024-03-15`; Sources: [a](b), [c](d)",
        Some(("e-1", "2024-03-15", DefinitionForm::Canonical, "[a](b), [c](d)", 2)),
    );
    check("[^e1]: Time: 2024 ; Sources: x  ", Some(("e1", "2024", DefinitionForm::Canonical, "x", 0)));
    check("[^e1]:Time:`undated`;Sources:x", Some(("e1", "undated", DefinitionForm::Canonical, "x", 0)));
    check(
        "[^mem_a]: 2024-01-02 · Sources: [D1:2](../sources/D1.md#d1-2)",
        Some(("mem_a", "2024-01-02", DefinitionForm::Legacy, "[D1:2](../sources/D1.md#d1-2)", 1)),
    );
    // The lazy group keeps one whitespace character of a blank sources part.
    check("[^e1]: Time: 2024; Sources:  ", Some(("e1", "2024", DefinitionForm::Canonical, " ", 0)));
}

#[test]
fn near_misses_are_not_definitions() {
    check("[^e1]: Time: 2024 · Sources: x", None);
    check("[^e1]: Time: `2024; Sources: x", None);
    check("[^e1]: Time: 2024-03-1; Sources: x", None);
    check("[^e1]: Time: undatedx; Sources: x", None);
    check("[^e1]: Time: 2024; Sources:", None);
    check(" [^e1]: Time: 2024; Sources: x", None);
    check("[^e 1]: Time: 2024; Sources: x", None);
    check("[^e1]: 2024 ; Sources: x", None);
}

#[test]
fn seeds_prefer_link_targets() {
    let def = parse_definition("[^e1]: 2024-01-02 · Sources: D1:1, openprogram/sess-7f2a/m4").expect("legacy");
    assert_eq!(def.seed_items(), ["D1:1", "openprogram/sess-7f2a/m4"]);
    let def = parse_definition("[^e1]: Time: 2024; Sources: [x]( a ), b").expect("canonical");
    assert_eq!(def.seed_items(), ["a"]);
    let links = [SourceLink { label: "x".into(), target: "y".into() }];
    assert_eq!(render_definition("e-1", "2024", &links), "[^e-1]: Time: `2024`; Sources: [x](y)");
}
