//! The pipeline on the spec's worked example, and each step's edge cases.

use std::collections::BTreeMap;

use scriptorium_archive_format::{FORMAT_MARKER, source_anchor};

use super::*;
use crate::error::ErrorCode;
use crate::source::MemorySources;

fn sources(ids: &[&str]) -> SourceResolver<MemorySources> {
    let mut text = format!("{FORMAT_MARKER}\n\n");
    for (n, id) in ids.iter().enumerate() {
        if n > 0 {
            text.push('\n');
        }
        text.push_str(&format!(
            "<a id=\"{}\"></a>\n<!-- source-id:{id} -->\n<!-- record-lines:1 -->\n[2024-03-15] user: hi\n",
            source_anchor(id)
        ));
    }
    let mut files = MemorySources::new();
    files.insert("sources/openprogram/_v2/sess-7f2a.md", text);
    files.insert("sources/D1.md", "# D1\n\n<a id=\"d1-1\"></a>\n[2024] user: x [D1:1]\n");
    SourceResolver::new(files)
}

fn tree(files: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
    files.iter().map(|(p, t)| ((*p).to_owned(), t.as_bytes().to_vec())).collect()
}

fn run(files: &[(&str, &str)], baseline: &Baseline, removal: Removal) -> Result<Normalized, Violations> {
    let resolver = sources(&["openprogram/sess-7f2a/msg_3a10", "openprogram/sess-7f2a/msg_2f9b"]);
    normalize(&tree(files), baseline, &resolver, &NormalizeOptions::with_removal(removal))
}

fn text(normalized: &Normalized, path: &str) -> String {
    String::from_utf8(normalized.files.get(path).cloned().unwrap_or_default()).expect("utf-8")
}

#[track_caller]
fn codes(result: Result<Normalized, Violations>) -> Vec<ErrorCode> {
    result.expect_err("rejected").iter().map(Violation::code).collect()
}

#[test]
fn spec_worked_example() -> Result<(), Violations> {
    let dave = "# Dave\n\nDave reviews Craig's pull requests.[^e1] ^madeup12\n\n\
                [^e1]: Time: `2024-03-16`; Sources: openprogram/sess-7f2a/msg_3a10\n";
    let budget = "# Budget tracker\n\n## Status\n\n\
                  Craig is building a budget tracker in Flask, due 2024-04-15.   [^e1]\n\n\
                  [^e1]: Time: 2024-03-15; Sources: [openprogram/sess-7f2a/msg_2f9b](openprogram/sess-7f2a/msg_2f9b)\n";
    let out = run(
        &[("topics/people/dave.md", dave), ("topics/projects/budget-tracker.md", budget)],
        &Baseline::empty(),
        Removal::Forbidden,
    )?;
    assert_eq!(
        text(&out, "topics/people/dave.md"),
        "# Dave\n\nDave reviews Craig's pull requests.[^e-647e662155] ^bfa3eafe\n\n\
         [^e-647e662155]: Time: `2024-03-16`; Sources: [openprogram/sess-7f2a/msg_3a10]\
         (../../sources/openprogram/_v2/sess-7f2a.md#source-cd47d0e823865696)\n"
    );
    assert_eq!(
        text(&out, "topics/projects/budget-tracker.md"),
        "# Budget tracker\n\n## Status\n\n\
         Craig is building a budget tracker in Flask, due 2024-04-15.[^e-647e662155] ^d9f3ed32\n\n\
         [^e-647e662155]: Time: `2024-03-15`; Sources: [openprogram/sess-7f2a/msg_2f9b]\
         (../../sources/openprogram/_v2/sess-7f2a.md#source-9047c1917b2f0777)\n"
    );
    assert_eq!(out.evidence_id_map.get("e1").map(String::as_str), Some("e-647e662155"));
    assert_eq!(out.block_id_map.get("topics/people/dave.md#0").map(String::as_str), Some("bfa3eafe"));
    assert_eq!(out.units.len(), 2);
    Ok(())
}

#[test]
fn committed_ids_survive_and_their_dash_children_too() -> Result<(), Violations> {
    let baseline = Baseline::from_units(
        crate::tree::parse_tree(
            [("topics/x.md", "A.[^e-1] ^abc12345\n\n[^e-1]: Time: 2024; Sources: [a](D1:1)\n")],
            &sources(&[]),
            Mode::Strict,
        )
        .check()?,
    );
    let staged = "A.[^e-1] ^abc12345\n\nB.[^e-1] ^abc12345-x\n\nC.[^e-1] ^invented\n\n\
                  [^e-1]: Time: 2024; Sources: [a](D1:1)\n";
    let out = run(&[("topics/x.md", staged)], &baseline, Removal::Forbidden)?;
    let ids: Vec<&str> = out.units.iter().map(|u| u.memory_id.as_str()).collect();
    assert_eq!(ids.first(), Some(&"abc12345"));
    assert_eq!(ids.get(1), Some(&"abc12345-x"));
    assert_ne!(ids.get(2), Some(&"invented"));
    assert_eq!(out.block_id_map.len(), 1);
    Ok(())
}

#[test]
fn uncited_text_is_rejected_before_pruning() {
    let record = "## Kept\n\nFact.[^e-1] ^ab\n\n[^e-1]: Time: 2024; Sources: [a](D1:1)\n";
    // The reference prunes this section silently; decision Q1 rejects it.
    let file = format!("# T\n\n## Notes\n\nJust prose.\n\n{record}");
    assert_eq!(codes(run(&[("topics/x.md", &file)], &Baseline::empty(), Removal::Forbidden)), [ErrorCode::UncitedText]);
    let file = format!("# T\n\n## Code\n\n```\nlet x = 1;\n```\n\n{record}");
    assert_eq!(codes(run(&[("topics/x.md", &file)], &Baseline::empty(), Removal::Forbidden)), [ErrorCode::UncitedText]);
    let only = "<!-- a note -->\n";
    assert_eq!(codes(run(&[("topics/x.md", only)], &Baseline::empty(), Removal::Forbidden)), [ErrorCode::UncitedText]);
}

#[test]
fn heading_only_sections_and_files_are_pruned() -> Result<(), Violations> {
    let file =
        "# T\n\n## Empty\n\n### Deeper\n\n## Full\n\nFact.[^e-1] ^ab\n\n[^e-1]: Time: 2024; Sources: [a](D1:1)\n\n\n";
    let out = run(
        &[("topics/x.md", file), ("topics/empty.md", "# Nothing\n\n  \n")],
        &Baseline::empty(),
        Removal::Forbidden,
    )?;
    assert_eq!(out.pruned, ["topics/empty.md"]);
    // `^ab` was never committed, so the runtime replaced it with a minted id.
    let id = out.units.first().map(|u| u.memory_id.clone()).unwrap_or_default();
    assert_eq!(id.len(), 8);
    assert_eq!(
        text(&out, "topics/x.md"),
        format!("# T\n\n## Full\n\nFact.[^e-1] ^{id}\n\n[^e-1]: Time: `2024`; Sources: [a](../sources/D1.md#d1-1)\n")
    );
    Ok(())
}

#[test]
fn removal_policy_is_the_callers() -> Result<(), Violations> {
    let committed = "A.[^e-1] ^aaaa1111\n\nB.[^e-1] ^bbbb2222\n\n[^e-1]: Time: 2024; Sources: [a](D1:1)\n";
    let baseline = Baseline::from_units(
        crate::tree::parse_tree([("topics/x.md", committed)], &sources(&[]), Mode::Strict).check()?,
    );
    let staged = "A.[^e-1] ^aaaa1111\n\n[^e-1]: Time: 2024; Sources: [a](D1:1)\n";
    let files = [("topics/x.md", staged)];
    assert_eq!(codes(run(&files, &baseline, Removal::Forbidden)), [ErrorCode::BlockIdRemoved]);
    let only = Removal::Only(["bbbb2222".to_owned()].into_iter().collect());
    assert!(run(&files, &baseline, only).is_ok());
    let wrong = Removal::Only(["aaaa1111".to_owned()].into_iter().collect());
    assert_eq!(codes(run(&files, &baseline, wrong)), [ErrorCode::BlockIdRemoved]);
    let merged = [("topics/x.md", "A and B.[^e-1] ^bbbb2222 ^aaaa1111\n\n[^e-1]: Time: 2024; Sources: [a](D1:1)\n")];
    assert!(run(&merged, &baseline, Removal::Forbidden).is_ok());
    Ok(())
}

#[test]
fn links_between_topics_are_checked_and_rewritten() -> Result<(), Violations> {
    let def = "[^e-1]: Time: 2024; Sources: [a](D1:1)";
    let target = format!("# Mei\n\nMei.[^e-1] ^mei00001\n\n{def}\n");
    let dangling = format!("See [x](people/mei.md#^nope0000).[^e-1] ^see00001\n\n{def}\n");
    let moved = format!("See [x](old/place.md#^mei00001) and [y](#^see00001).[^e-1] ^see00001\n\n{def}\n");
    let files = [("topics/people/mei.md", target.as_str()), ("topics/see.md", moved.as_str())];
    let committed = crate::tree::parse_tree(files, &sources(&[]), Mode::Strict).check()?;
    let baseline = Baseline::from_units(committed);
    let files = [("topics/people/mei.md", target.as_str()), ("topics/see.md", dangling.as_str())];
    assert_eq!(codes(run(&files, &baseline, Removal::Allowed)), [ErrorCode::DanglingBlockLink]);
    let files = [("topics/people/mei.md", target.as_str()), ("topics/see.md", moved.as_str())];
    let out = run(&files, &baseline, Removal::Forbidden)?;
    assert!(text(&out, "topics/see.md").starts_with("See [x](people/mei.md#^mei00001) and [y](see.md#^see00001)."));
    Ok(())
}

#[test]
fn relocated_blocks_keep_their_sources() -> Result<(), Violations> {
    let resolver = sources(&["openprogram/sess-7f2a/msg_3a10"]);
    let anchor = source_anchor("openprogram/sess-7f2a/msg_3a10");
    let committed = format!(
        "Fact.[^e-1] ^ab12cd34\n\n[^e-1]: Time: `2024`; Sources: [m](../sources/openprogram/_v2/sess-7f2a.md#{anchor})\n"
    );
    let baseline = Baseline::from_units(
        crate::tree::parse_tree([("topics/x.md", committed.as_str())], &resolver, Mode::Strict).check()?,
    );
    // `mv topics/x.md topics/deep/x.md`: the relative link now points nowhere.
    let staged = tree(&[("topics/deep/x.md", &committed)]);
    let out = normalize(&staged, &baseline, &resolver, &NormalizeOptions::default())?;
    assert_eq!(
        text(&out, "topics/deep/x.md"),
        format!(
            "Fact.[^e-1] ^ab12cd34\n\n[^e-1]: Time: `2024`; Sources: [m](../../sources/openprogram/_v2/sess-7f2a.md#{anchor})\n"
        )
    );
    Ok(())
}

#[test]
fn orphans_bind_to_the_next_unused_definitions() -> Result<(), Violations> {
    let file = "A.[^e1] ^aaaa0001\n\nB.[^e7]\n\n[^e1]: Time: 2024; Sources: [a](D1:1)\n[^e2]: Time: 2023; Sources: [b](D1:1)\n";
    let out = run(&[("topics/x.md", file)], &Baseline::empty(), Removal::Allowed)?;
    let whens: Vec<Option<&str>> = out.units.iter().map(|u| u.when.as_deref()).collect();
    assert_eq!(whens, [Some("2024"), Some("2023")]);
    Ok(())
}

proptest::proptest! {
    /// A plain source handle that names no archived source is an invalid source target at
    /// normalization, whether written as a link or as a link-less item, v2 id or `D` handle;
    /// one that names an archived source becomes its relative link.
    #[test]
    fn plain_handles_must_name_an_archived_source(
        message in "msg_[a-z0-9]{1,6}",
        turn in 2u32..50,
        benchmark in proptest::arbitrary::any::<bool>(),
        linkless in proptest::arbitrary::any::<bool>(),
    ) {
        proptest::prop_assume!(message != "msg_3a10" && message != "msg_2f9b");
        let missing = if benchmark { format!("D1:{turn}") } else { format!("openprogram/sess-7f2a/{message}") };
        let present = if benchmark { "D1:1".to_owned() } else { "openprogram/sess-7f2a/msg_3a10".to_owned() };
        let topic = |handle: &str| {
            let sources = if linkless { handle.to_owned() } else { format!("[label]({handle})") };
            format!("Fact.[^e-1] ^ab\n\n[^e-1]: Time: `2024-03`; Sources: {sources}\n")
        };
        let rejected = run(&[("topics/x.md", &topic(&missing))], &Baseline::empty(), Removal::Forbidden);
        proptest::prop_assert_eq!(codes(rejected), vec![ErrorCode::InvalidSourceTarget]);
        let installed = run(&[("topics/x.md", &topic(&present))], &Baseline::empty(), Removal::Forbidden)
            .expect("an archived handle normalizes");
        let plain = format!("({present})");
        proptest::prop_assert!(!text(&installed, "topics/x.md").contains(&plain));
    }
}
