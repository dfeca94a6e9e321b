//! Spec 04 T8 (paths and identities) through the public API: every archive path the
//! writer can produce stays under `sources/` and equals an independent re-implementation
//! of Python `quote(s, safe="-_.")`; case- (and therefore casefold-) equivalent spellings
//! of a provider or thread, in one batch or against the existing tree, reject the whole
//! batch with `ARCHIVE_PATH_COLLISION`. `PROPTEST_CASES` sets the case count (default
//! 256); `SCRIPTORIUM_SOAK=1` runs the spec's 100,000.

use std::path::{Component, Path};

use proptest::prelude::*;
use scriptorium_archive_format::{
    ErrorCode, MemoryTree, SourceRecord, plan_append, quote_path_component, split_source_id, v2_location,
};

/// The curated ids of spec 04 T8, plus a few more hostile spellings.
const CURATED: &[&str] = &[
    "",
    ".",
    "..",
    "...",
    "/",
    "\\",
    "%2e%2e",
    "%2E%2E",
    "%2F",
    "%2f",
    "%00",
    "\0",
    "\u{1}",
    "\u{7f}",
    "\r",
    "\n",
    "\r\n",
    "--",
    "-->",
    "<!--",
    "CON",
    "con",
    "aux.md",
    "NUL",
    "COM1",
    "LPT1.txt",
    "é",
    "e\u{301}",
    "Straße",
    "STRASSE",
    "strasse",
    "\u{ff0f}",
    "\u{202e}",
    "\u{200f}",
    "\u{200e}",
    "\u{2028}",
    "\u{2029}",
    "\u{feff}",
    "K",
    "\u{212a}",
    "İ",
    "ı",
    "_v2",
    "sources",
    "~",
    " ",
    "\u{a0}",
    "a b",
    "openprogram",
    "OpenProgram",
];

fn soak_cases() -> u32 {
    if std::env::var_os("SCRIPTORIUM_SOAK").is_some_and(|v| v == "1") {
        100_000
    } else {
        ProptestConfig::default().cases
    }
}

/// Python `urllib.parse.quote(s, safe="-_.")`, written out independently of the crate.
fn reference_quote(s: &str) -> String {
    let mut out = String::new();
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A component string: curated, a long run, any printable text or any text at all.
fn part() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(CURATED).prop_map(str::to_owned),
        3 => "\\PC{0,16}",
        2 => ".{0,8}",
        1 => (1usize..400, proptest::sample::select(&["a", "é", "\u{ff0f}", "%", "."][..]))
            .prop_map(|(n, s)| s.repeat(n)),
        1 => proptest::collection::vec(proptest::sample::select(CURATED), 1..4).prop_map(|v| v.concat()),
    ]
}

/// The invariants of a path `v2_location` returned for provider `p` and thread `t`.
fn check_path(path: &str, p: &str, t: &str) -> Result<(), TestCaseError> {
    prop_assert!(path.starts_with("sources/"), "{path}");
    let components: Vec<&str> = path.split('/').collect();
    prop_assert_eq!(components.len(), 4, "{}", path);
    for component in &components {
        prop_assert!(!component.is_empty() && *component != "." && *component != "..", "{}", path);
        prop_assert!(component.bytes().all(|b| b.is_ascii_graphic()), "{}", path);
        prop_assert!(!component.contains('\\'), "{}", path);
    }
    prop_assert!(Path::new(path).components().all(|c| matches!(c, Component::Normal(_))), "{}", path);
    prop_assert_eq!(path, format!("sources/{}/_v2/{}.md", reference_quote(p), reference_quote(t)));
    prop_assert_eq!(quote_path_component(p), reference_quote(p));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(soak_cases()))]

    #[test]
    fn every_v2_location_stays_under_sources_and_equals_the_reference(p in part(), t in part(), m in part()) {
        let id = format!("{p}/{t}/{m}");
        match v2_location(&id) {
            Some(path) => {
                let parts = split_source_id(&id).expect("a located id splits");
                check_path(&path, parts.provider, parts.thread)?;
                if !p.contains('/') && !t.contains('/') {
                    prop_assert_eq!((parts.provider, parts.thread), (p.as_str(), t.as_str()));
                }
            }
            None => {
                let shape_ok = split_source_id(&id).is_some();
                prop_assert!(!shape_ok, "{id:?}");
            }
        }
    }

    #[test]
    fn plan_append_writes_only_reference_paths(
        records in proptest::collection::vec((part(), part(), part()), 1..5),
    ) {
        let batch: Vec<SourceRecord> = records
            .iter()
            .enumerate()
            .map(|(n, (p, t, m))| SourceRecord::new(p.as_str(), t.as_str(), m.as_str(), n as i64, "user", "x"))
            .collect();
        let tree = MemoryTree::new();
        if let Ok(plan) = plan_append(&batch, &tree) {
            for file in &plan.files {
                let id = file.appended.first().expect("a planned file appends a frame");
                let parts = split_source_id(id).expect("a written id splits");
                check_path(&file.path, parts.provider, parts.thread)?;
            }
        }
    }

    #[test]
    fn case_variants_in_one_batch_reject_it_whole(
        p1 in "[aAbBK]{1,3}", p2 in "[aAbBK]{1,3}", t1 in "[aAbBß]{1,3}", t2 in "[aAbBß]{1,3}",
    ) {
        let batch = [SourceRecord::new(p1.as_str(), t1.as_str(), "m1", 1, "user", "x"),
                     SourceRecord::new(p2.as_str(), t2.as_str(), "m2", 2, "user", "x")];
        let paths = [format!("sources/{}/_v2/{}.md", reference_quote(&p1), reference_quote(&t1)),
                     format!("sources/{}/_v2/{}.md", reference_quote(&p2), reference_quote(&t2))];
        // The encoded paths are ASCII, so the spec's casefold(NFC(…)) key is the lowercase.
        let prefixes = |path: &str| {
            let ends: Vec<usize> = path.match_indices('/').map(|(i, _)| i).chain([path.len()]).collect();
            ends.into_iter().map(|end| path[..end].to_owned()).collect::<Vec<_>>()
        };
        let (a, b) = (prefixes(&paths[0]), prefixes(&paths[1]));
        let collides = a.iter().any(|x| b.iter().any(|y| x != y && x.eq_ignore_ascii_case(y)));
        let tree = MemoryTree::new();
        match plan_append(&batch, &tree) {
            Ok(plan) => {
                prop_assert!(!collides, "{paths:?} accepted");
                for file in &plan.files {
                    prop_assert!(paths.contains(&file.path));
                }
            }
            Err(error) => {
                prop_assert!(collides, "{paths:?}: {error}");
                prop_assert_eq!(error.code(), ErrorCode::PathCollision);
            }
        }
    }
}

fn record(provider: &str, thread: &str, message: &str) -> SourceRecord {
    SourceRecord::new(provider, thread, message, 1, "user", "x")
}

#[test]
fn curated_pairs_that_fold_together_reject_the_batch_and_plan_nothing() {
    let pairs = [
        (("openprogram", "t"), ("OpenProgram", "t")),
        (("openprogram", "Thread"), ("openprogram", "thread")),
        (("CON", "t"), ("con", "t")),
        (("p", "STRASSE"), ("p", "strasse")),
    ];
    for ((p1, t1), (p2, t2)) in pairs {
        let batch = [record(p1, t1, "m1"), record(p2, t2, "m2")];
        let error = plan_append(&batch, &MemoryTree::new()).expect_err("a colliding batch is refused");
        assert_eq!(error.code(), ErrorCode::PathCollision, "{error}");
        assert_eq!(error.code().as_str(), "ARCHIVE_PATH_COLLISION");
    }
}

/// Spec 01 §2.8 keys the *encoded* paths, which are ASCII: NFC- or casefold-equivalent raw
/// spellings such as `é`/`e\u{301}` or `Straße`/`STRASSE` encode to names that differ
/// under any folding, so they are two distinct files and no file system can merge them.
#[test]
fn unicode_equivalent_raw_spellings_encode_to_names_no_folding_merges() {
    for (a, b) in [("é", "e\u{301}"), ("Straße", "STRASSE"), ("\u{212a}", "k"), ("\u{ff0f}", "/")] {
        let (qa, qb) = (reference_quote(a), reference_quote(b));
        assert_ne!(qa.to_ascii_lowercase(), qb.to_ascii_lowercase(), "{a:?} {b:?}");
        assert!(qa.is_ascii() && qb.is_ascii());
    }
}

#[test]
fn an_existing_entry_differing_only_by_case_rejects_the_batch() {
    let cases = [
        ("sources/OpenProgram/_v2/t.md", record("openprogram", "t", "m")),
        ("sources/openprogram/_v2/Thread.md", record("openprogram", "thread", "m")),
        ("sources/openprogram/_V2/t.md", record("openprogram", "t", "m")),
        ("Sources/openprogram/_v2/t.md", record("openprogram", "t", "m")),
    ];
    for (existing, batch) in cases {
        let mut tree = MemoryTree::new();
        tree.insert(existing, Vec::new());
        let before = tree.clone();
        let error = plan_append(std::slice::from_ref(&batch), &tree).expect_err(existing);
        assert_eq!(error.code(), ErrorCode::PathCollision, "{existing}: {error}");
        assert_eq!(tree, before);
    }
    // The same spelling is no collision.
    let mut tree = MemoryTree::new();
    tree.insert("sources/openprogram/_v2/other.md", Vec::new());
    assert!(plan_append(&[record("openprogram", "t", "m")], &tree).is_ok());
}

#[test]
fn curated_ids_never_leave_sources() {
    let mut checked = 0;
    for p in CURATED {
        for t in CURATED {
            let id = format!("{p}/{t}/m");
            if let Some(path) = v2_location(&id) {
                let parts = split_source_id(&id).expect("located ids split");
                assert!(path.starts_with("sources/") && path.split('/').count() == 4, "{path}");
                assert!(Path::new(&path).components().all(|c| matches!(c, Component::Normal(_))), "{path}");
                assert_eq!(
                    path,
                    format!("sources/{}/_v2/{}.md", reference_quote(parts.provider), reference_quote(parts.thread))
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}
