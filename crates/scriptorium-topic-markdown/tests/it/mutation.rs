//! Spec 04 T10: mutate valid topics (delete, duplicate or swap lines, drop a `^id`,
//! duplicate a block id across files, rename a footnote label, insert uncited prose,
//! leave a definition unused, mix CRLF and LF). Every mutant either normalizes to a
//! valid, idempotent tree or fails with enumerated codes, and the mutations whose
//! outcome is certain fail with the code that names them. Never a panic.

use std::collections::BTreeMap;

use proptest::prelude::*;
use scriptorium_topic_markdown::fuzz::{check_tree, fixture_sources};
use scriptorium_topic_markdown::{
    Baseline, ErrorCode, Mode, NormalizeOptions, Normalized, Removal, SourceResolver, Violations, normalize, parse_tree,
};

use crate::generate::{lf, tree};

#[derive(Clone, Debug)]
enum Mutation {
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    DropId(usize),
    DuplicateIdAcrossFiles(usize),
    RenameLabel(usize),
    InsertUncited(usize),
    UnusedDefinition,
    MixLineEnds(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        any::<usize>().prop_map(Mutation::DropId),
        any::<usize>().prop_map(Mutation::DuplicateIdAcrossFiles),
        any::<usize>().prop_map(Mutation::RenameLabel),
        any::<usize>().prop_map(Mutation::InsertUncited),
        Just(Mutation::UnusedDefinition),
        any::<usize>().prop_map(Mutation::MixLineEnds),
    ]
}

/// The code a mutation must produce when it applies, if its outcome is certain.
fn apply(files: &mut BTreeMap<String, Vec<u8>>, mutation: &Mutation, pick: usize) -> Option<ErrorCode> {
    let paths: Vec<String> = files.keys().cloned().collect();
    let path = paths[pick % paths.len()].clone();
    let text = String::from_utf8(files[&path].clone()).expect("generated text is UTF-8");
    let mut lines: Vec<String> = text.replace("\r\n", "\n").lines().map(str::to_owned).collect();
    let n = lines.len();
    let mut expect = None;
    let block_lines: Vec<usize> = (0..n).filter(|&i| lines[i].contains(" ^")).collect();
    match *mutation {
        Mutation::DeleteLine(i) => {
            lines.remove(i % n);
        }
        Mutation::DuplicateLine(i) => {
            let line = lines[i % n].clone();
            lines.insert(i % n, line);
        }
        Mutation::SwapLines(a, b) => lines.swap(a % n, b % n),
        Mutation::DropId(i) => {
            if let Some(&at) = block_lines.get(i % block_lines.len().max(1)) {
                let cut = lines[at].rfind(" ^").unwrap_or(lines[at].len());
                lines[at].truncate(cut);
                expect = Some(ErrorCode::BlockIdRemoved);
            }
        }
        Mutation::DuplicateIdAcrossFiles(i) => {
            let other = paths.iter().find(|p| **p != path).cloned();
            if let (Some(other), Some(&at)) = (other, block_lines.get(i % block_lines.len().max(1))) {
                let other_text = String::from_utf8_lossy(&files[&other]).into_owned();
                let id = other_text.lines().find_map(|l| l.rsplit_once(" ^").map(|(_, id)| id.trim().to_owned()));
                if let Some(id) = id {
                    let cut = lines[at].rfind(" ^").unwrap_or(lines[at].len());
                    lines[at].truncate(cut);
                    lines[at].push_str(&format!(" ^{id}"));
                    expect = Some(ErrorCode::DuplicateBlockId);
                }
            }
        }
        Mutation::RenameLabel(i) => {
            let definitions: Vec<usize> = (0..n).filter(|&l| lines[l].starts_with("[^")).collect();
            if let Some(&at) = definitions.get(i % definitions.len().max(1)) {
                lines[at] = lines[at].replacen("[^e-", "[^e-renamed", 1);
                expect = Some(ErrorCode::UndefinedFootnote);
            }
        }
        Mutation::InsertUncited(i) => {
            lines.insert(i % (n + 1), "\nSome uncited prose.\n".to_owned());
            expect = Some(ErrorCode::UncitedText);
        }
        Mutation::UnusedDefinition => {
            lines.push("[^e-unused]: Time: `2024`; Sources: [D1:1](D1:1)".to_owned());
            expect = Some(ErrorCode::UnusedFootnote);
        }
        Mutation::MixLineEnds(i) => {
            let joined: String = lines
                .iter()
                .enumerate()
                .map(|(k, l)| format!("{l}{}", if k % 3 == i % 3 { "\r\n" } else { "\n" }))
                .collect();
            files.insert(path, joined.into_bytes());
            return None;
        }
    }
    files.insert(path, (lines.join("\n") + "\n").into_bytes());
    expect
}

fn codes(result: &Result<Normalized, Violations>) -> Vec<ErrorCode> {
    result.as_ref().err().map(|e| e.iter().map(|v| v.code()).collect()).unwrap_or_default()
}

proptest! {
    #[test]
    fn mutants_are_valid_or_name_their_fault(spec in tree(), mutation in mutation(), pick in any::<usize>()) {
        let original = spec.render();
        let sources = SourceResolver::new(fixture_sources());
        let committed = parse_tree(&original, &sources, Mode::Strict);
        prop_assert!(committed.violations().is_empty());
        let baseline = Baseline::from_units(committed.units().iter().cloned());
        let mut mutant = original.clone();
        let expect = apply(&mut mutant, &mutation, pick);

        let strict = parse_tree(&mutant, &sources, Mode::Strict);
        let forbidden = normalize(&mutant, &baseline, &sources, &NormalizeOptions::default());
        let allowed = normalize(&mutant, &baseline, &sources, &NormalizeOptions::with_removal(Removal::Allowed));
        for code in strict.violations().iter().map(|v| v.code()).chain(codes(&forbidden)).chain(codes(&allowed)) {
            prop_assert!(ErrorCode::ALL.contains(&code));
        }
        match expect {
            Some(want @ (ErrorCode::UndefinedFootnote | ErrorCode::DuplicateBlockId)) => {
                prop_assert!(strict.violations().iter().any(|v| v.code() == want), "{:?}", strict.violations());
                prop_assert!(codes(&forbidden).contains(&want), "{:?}", forbidden);
            }
            Some(want) => prop_assert!(codes(&forbidden).contains(&want), "{:?}: {:?}", mutation, forbidden),
            None => {}
        }
        if matches!(mutation, Mutation::MixLineEnds(_)) {
            let out = forbidden.map_err(|e| TestCaseError::fail(e.to_string()))?;
            if spec.canonical {
                prop_assert_eq!(out.files, lf(&original));
            }
        } else if let Ok(out) = allowed {
            check_tree(&out.files);
        }
    }
}
