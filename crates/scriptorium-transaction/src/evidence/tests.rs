//! Evidence: validation messages, the identity formula against the reference's archived
//! frames, `observed_at` normalization against Python, and label substitution.

use std::collections::BTreeMap;
use std::path::PathBuf;

use proptest::prelude::*;
use scriptorium_archive_format::{MemoryTree, plan_append};
use serde_json::{Value, json};

use super::{Evidence, Provenance, evidence_records, iso8601, parse_evidence, substitute_source_labels};
use crate::error::ErrorCode;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn owner() -> Provenance {
    Provenance {
        principal_id: "owner".into(),
        speaker_kind: "human".into(),
        speaker_id: "owner/local".into(),
        speaker_display: "Owner".into(),
        authority_tier: "owner".into(),
        origin_id: "sess-1/turn-1".into(),
    }
}

fn paired_dave() -> Provenance {
    Provenance {
        principal_id: "telegram:42".into(),
        speaker_kind: "human".into(),
        speaker_id: "telegram/42".into(),
        speaker_display: "Dave".into(),
        authority_tier: "paired".into(),
        origin_id: "group-100/turn-9".into(),
    }
}

fn vector_file(relative: &str) -> Result<Vec<u8>, std::io::Error> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/transaction");
    std::fs::read(root.join(relative))
}

/// Archive `sources` for `provenance` into an empty tree and check the id and the
/// bytes of the one archive file against the reference's `after/` tree.
#[track_caller]
fn check_vector(case: &str, sources: Value, provenance: &Provenance, want_id: &str) -> TestResult {
    let evidence = parse_evidence(&sources)?;
    let archived = evidence_records(&evidence, Some(provenance))?;
    let ids: Vec<&String> = archived.source_ids.values().collect();
    assert_eq!(ids, [want_id], "{case}");
    let plan = plan_append(&archived.records, &MemoryTree::new())?;
    assert_eq!(plan.files.len(), 1, "{case}");
    for file in &plan.files {
        let want = vector_file(&format!("{case}/after/{}", file.path))?;
        assert_eq!(String::from_utf8_lossy(&file.bytes), String::from_utf8_lossy(&want), "{case}");
    }
    Ok(())
}

#[test]
fn ids_and_frames_match_the_reference() -> TestResult {
    check_vector(
        "changes-write-file",
        json!([{"content": "Dave here: the garden sensor uses an ESP32.", "label": "new-source-dave", "role": "user"}]),
        &paired_dave(),
        "claude-code/cbe3fe50ffd066d8/cac18070702eb4d0",
    )?;
    check_vector(
        "patch-create-file",
        json!([{"content": "I run 5k every Sunday.\r\nUsually at 7am.  ", "label": "new-source-run",
                "observed_at": "2024-01-08", "role": "user"}]),
        &owner(),
        "claude-code/e28327691abc191b/4cdd18194662eb51",
    )?;
    check_vector(
        "source-bytes-exact",
        json!([{"content": "line one  \r\nline\u{2028}two\n", "label": "new-source-x", "role": "user"}]),
        &owner(),
        "claude-code/d01bd73b73be553b/fd3f5b19ec33b6af",
    )
}

#[test]
fn ids_are_idempotent_and_ignore_the_display_name() -> TestResult {
    let evidence = parse_evidence(&json!([
        {"label": "new-source-a", "role": "user", "content": "one"},
        {"label": "new-source-b", "role": "assistant", "content": "two", "observed_at": "2024-03-01T10:00Z"},
    ]))?;
    let first = evidence_records(&evidence, Some(&owner()))?;
    assert_eq!(first, evidence_records(&evidence, Some(&owner()))?);
    let renamed = Provenance { speaker_display: "Someone else".into(), ..owner() };
    assert_eq!(first.source_ids, evidence_records(&evidence, Some(&renamed))?.source_ids);
    let other_turn = Provenance { origin_id: "sess-1/turn-2".into(), ..owner() };
    assert_ne!(first.source_ids, evidence_records(&evidence, Some(&other_turn))?.source_ids);

    // One thread per request, ordinals from 1, and the observed time in the header.
    let [a, b] = first.records.as_slice() else { panic!("two records: {first:?}") };
    assert_eq!((a.thread_id.as_str(), a.ordinal, b.ordinal), (b.thread_id.as_str(), 1, 2));
    assert_ne!(a.message_id, b.message_id);
    assert_eq!(b.timestamp.as_deref(), Some("2024-03-01T10:00:00+00:00"));
    assert_eq!((a.timestamp.as_deref(), a.authority_tier.as_deref()), (None, Some("owner")));
    assert_eq!(first.source_ids.get("new-source-b"), Some(&b.source_id()));
    Ok(())
}

#[test]
fn every_item_changes_the_thread() -> TestResult {
    let one = parse_evidence(&json!([{"label": "new-source-a", "role": "user", "content": "one"}]))?;
    let two = parse_evidence(&json!([
        {"label": "new-source-a", "role": "user", "content": "one"},
        {"label": "new-source-b", "role": "user", "content": "two"},
    ]))?;
    let thread = |evidence: &[Evidence]| {
        evidence_records(evidence, Some(&owner())).map(|a| a.records.first().map(|r| r.thread_id.clone()))
    };
    assert_ne!(thread(&one)?, thread(&two)?);
    Ok(())
}

#[test]
fn evidence_needs_provenance() -> TestResult {
    let evidence = parse_evidence(&json!([{"label": "new-source-a", "role": "user", "content": "x"}]))?;
    let error = evidence_records(&evidence, None).err().ok_or("accepted without provenance")?;
    assert_eq!(error.code(), ErrorCode::WriterPreconditionFailed);
    assert!(evidence_records(&[], None)?.records.is_empty());
    Ok(())
}

/// The message and details of the refusal of `sources`.
#[track_caller]
fn refusal(sources: Value) -> (ErrorCode, String, Value) {
    match parse_evidence(&sources) {
        Ok(evidence) => panic!("accepted: {evidence:?}"),
        Err(e) => {
            assert_eq!(e.path(), None);
            (e.code(), e.message().to_owned(), Value::Object(e.details().clone()))
        }
    }
}

#[test]
fn refusals_are_worded_as_the_reference_words_them() {
    let item = |extra: Value| {
        let mut item = json!({"label": "new-source-a", "role": "user", "content": "x"});
        if let (Some(item), Some(extra)) = (item.as_object_mut(), extra.as_object()) {
            item.extend(extra.clone());
        }
        json!([item])
    };
    let invalid = ErrorCode::InvalidArgument;
    assert_eq!(
        refusal(item(json!({"label": "bad label"}))),
        (invalid, "sources[0].label must match new-source-[a-z0-9-]+".into(), json!({"label": "bad label"}))
    );
    assert_eq!(refusal(item(json!({"label": "new-source-"}))).2, json!({"label": "new-source-"}));
    assert_eq!(refusal(item(json!({"label": "new-source-A"}))).2, json!({"label": "new-source-A"}));
    assert_eq!(
        refusal(item(json!({"role": "robot"}))),
        (invalid, "sources[0].role must be one of ['user', 'assistant', 'system', 'tool']".into(), json!({}))
    );
    assert_eq!(refusal(item(json!({"content": "  \n\u{1f}"}))).1, "sources[0].content is empty");
    assert_eq!(refusal(item(json!({"content": null}))).1, "sources[0].content is empty");
    assert_eq!(refusal(item(json!({"content": 3}))).1, "sources[0].content must be a string");
    assert_eq!(
        refusal(item(json!({"observed_at": "15/03/2024"}))),
        (invalid, "sources[0].observed_at must be ISO 8601".into(), json!({"observed_at": "15/03/2024"}))
    );
    assert_eq!(refusal(item(json!({"observed_at": 2024}))).2, json!({"observed_at": 2024}));
    assert_eq!(refusal(json!("not a list")), (invalid, "sources must be a list".into(), json!({})));
    assert_eq!(refusal(json!([1])).1, "sources[0] must be an object");
    let twice = json!([
        {"label": "new-source-a", "role": "user", "content": "x"},
        {"label": "new-source-a", "role": "user", "content": "y"},
    ]);
    assert_eq!(refusal(twice), (invalid, "duplicate source label: new-source-a".into(), json!({})));
    let second_bad = json!([
        {"label": "new-source-a", "role": "user", "content": "x"},
        {"label": "new-source-b", "role": "tool", "content": ""},
    ]);
    assert_eq!(refusal(second_bad).1, "sources[1].content is empty");
}

#[test]
fn limits_are_enforced() -> TestResult {
    let item =
        |n: usize, content: String| json!({"label": format!("new-source-{n}"), "role": "user", "content": content});
    let at_limit: Vec<Value> = (0..super::MAX_SOURCES).map(|n| item(n, "x".into())).collect();
    assert_eq!(parse_evidence(&Value::Array(at_limit.clone()))?.len(), super::MAX_SOURCES);
    let mut over = at_limit;
    over.push(item(99, "x".into()));
    assert_eq!(refusal(Value::Array(over)).0, ErrorCode::InvalidArgument);

    let half = super::MAX_SOURCE_CONTENT_BYTES / 2;
    let exact = json!([item(1, "é".repeat(half / 2)), item(2, "y".repeat(half))]);
    assert_eq!(parse_evidence(&exact)?.len(), 2, "é is two bytes: exactly at the limit");
    let over_bytes = json!([item(1, "é".repeat(half / 2)), item(2, "y".repeat(half + 1))]);
    assert_eq!(refusal(over_bytes).0, ErrorCode::InvalidArgument);
    Ok(())
}

#[test]
fn absent_and_empty_inputs() -> TestResult {
    assert!(parse_evidence(&Value::Null)?.is_empty());
    assert!(parse_evidence(&json!([]))?.is_empty());
    let evidence = parse_evidence(&json!([
        {"label": "new-source-a-1", "role": "system", "content": " x ", "observed_at": "", "extra": true},
        {"label": "new-source-b", "role": "tool", "content": "y", "observed_at": null},
    ]))?;
    let want = [
        Evidence { label: "new-source-a-1".into(), role: "system".into(), content: " x ".into(), observed_at: None },
        Evidence { label: "new-source-b".into(), role: "tool".into(), content: "y".into(), observed_at: None },
    ];
    assert_eq!(evidence, want);
    Ok(())
}

/// `datetime.fromisoformat(text).isoformat()` as Python 3.11.7 printed it.
const PYTHON_ISOFORMAT: &[(&str, &str)] = &[
    ("2024-01-08", "2024-01-08T00:00:00"),
    ("20240108", "2024-01-08T00:00:00"),
    ("2024-01-08T10", "2024-01-08T10:00:00"),
    ("2024-01-08t10:00", "2024-01-08T10:00:00"),
    ("2024-01-08 10:00:00", "2024-01-08T10:00:00"),
    ("2024-01-08T1000", "2024-01-08T10:00:00"),
    ("2024-01-08T100000", "2024-01-08T10:00:00"),
    ("2024-01-08T10:00:00.5", "2024-01-08T10:00:00.500000"),
    ("2024-01-08T10:00:00,25", "2024-01-08T10:00:00.250000"),
    ("2024-01-08T10:00:00.1234567", "2024-01-08T10:00:00.123456"),
    ("2024-01-08T10:00:00.000000", "2024-01-08T10:00:00"),
    ("2024-01-08T10:00:00Z", "2024-01-08T10:00:00+00:00"),
    ("2024-01-08T10:00:00-00:00", "2024-01-08T10:00:00+00:00"),
    ("2024-01-08T10:00:00+0530", "2024-01-08T10:00:00+05:30"),
    ("2024-01-08T10:00:00+05", "2024-01-08T10:00:00+05:00"),
    ("2024-01-08T10:00:00-05:30:15.5", "2024-01-08T10:00:00-05:30:15.500000"),
    ("2024-01-08T10:00:00+05:30:00", "2024-01-08T10:00:00+05:30"),
    ("2024-01-08T10:00:00.123Z", "2024-01-08T10:00:00.123000+00:00"),
    ("2024-02-29", "2024-02-29T00:00:00"),
    ("0001-01-01T00:00:00+23:59", "0001-01-01T00:00:00+23:59"),
    ("2024-01-08T23:59:59.999999-23:59:59.999999", "2024-01-08T23:59:59.999999-23:59:59.999999"),
];

/// Strings Python 3.11.7 refuses too.
const PYTHON_REFUSES: &[&str] = &[
    "yesterday",
    "15/03/2024",
    "2024",
    "2024-01",
    "2024-1-8",
    "2024-02-30",
    "2023-02-29",
    "0000-01-01",
    "2024-13-01",
    "2024-01-08T",
    "2024-01-08T24:00",
    "2024-01-08T10:60",
    "2024-01-08T10:00:60",
    "2024-01-08T10:",
    "2024-01-08T10:0",
    "2024-01-08T10:00:00.",
    "2024-01-08T10:00:00z",
    "2024-01-08T10:00:00+24:00",
    "2024-01-08T10:00:00ZZ",
    "2024-01-08T10:00:00+0530:00",
    "\u{662}\u{660}\u{662}\u{664}-01-08",
    "2024-01-08x",
];

#[test]
fn observed_at_normalizes_like_python() {
    for (text, want) in PYTHON_ISOFORMAT {
        assert_eq!(iso8601::normalize(text).as_deref(), Some(*want), "{text:?}");
    }
    for text in PYTHON_REFUSES {
        assert_eq!(iso8601::normalize(text), None, "{text:?}");
    }
}

#[test]
fn labels_are_replaced_by_source_ids() -> TestResult {
    let ids = BTreeMap::from([
        ("new-source-a".to_owned(), "claude-code/t/a".to_owned()),
        ("new-source-a-long".to_owned(), "claude-code/t/long".to_owned()),
    ]);
    let text = "[A](new-source-a) and new-source-a-long; again new-source-a.\nnew-source-";
    assert_eq!(
        substitute_source_labels(text, &ids)?,
        "[A](claude-code/t/a) and claude-code/t/long; again claude-code/t/a.\nnew-source-"
    );
    assert_eq!(substitute_source_labels("nothing to do é", &ids)?, "nothing to do é");
    assert_eq!(substitute_source_labels("", &BTreeMap::new())?, "");
    Ok(())
}

#[test]
fn undeclared_labels_are_missing_sources() -> TestResult {
    let ids = BTreeMap::from([("new-source-a".to_owned(), "claude-code/t/a".to_owned())]);
    let error = substitute_source_labels("new-source-ab, new-source-zz, new-source-ab, new-source-a", &ids)
        .err()
        .ok_or("undeclared label accepted")?;
    assert_eq!(error.code(), ErrorCode::MissingSource);
    let details = Value::Object(error.details().clone());
    assert_eq!(details, json!({"labels": ["new-source-ab", "new-source-zz"], "declared": ["new-source-a"]}));
    Ok(())
}

/// Every character Python's `str.strip()` removes (Python 3.11, Unicode 14), listed
/// independently of the implementation.
const PYTHON_WHITESPACE: &[char] = &[
    '\t', '\n', '\u{b}', '\u{c}', '\r', '\u{1c}', '\u{1d}', '\u{1e}', '\u{1f}', ' ', '\u{85}', '\u{a0}', '\u{1680}',
    '\u{2000}', '\u{2001}', '\u{2002}', '\u{2003}', '\u{2004}', '\u{2005}', '\u{2006}', '\u{2007}', '\u{2008}',
    '\u{2009}', '\u{200a}', '\u{2028}', '\u{2029}', '\u{202f}', '\u{205f}', '\u{3000}',
];

fn padding() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(PYTHON_WHITESPACE), 0..4)
        .prop_map(|chars| chars.into_iter().collect())
}

proptest! {
    #[test]
    fn padded_labels_and_roles_are_stripped_as_python_strips_them(
        label_left in padding(),
        label_right in padding(),
        role_left in padding(),
        role_right in padding(),
        role in proptest::sample::select(&["user", "assistant", "system", "tool"][..]),
        observed_left in padding(),
    ) {
        let padded = json!([{
            "label": format!("{label_left}new-source-pad-1{label_right}"),
            "role": format!("{role_left}{role}{role_right}"),
            "content": " body ",
            "observed_at": format!("{observed_left}2024-03-01"),
        }]);
        let plain = json!([{"label": "new-source-pad-1", "role": role, "content": " body ", "observed_at": "2024-03-01"}]);
        let parsed = parse_evidence(&padded).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let want = parse_evidence(&plain).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&parsed, &want);
        // The stripped values also name the archived ids, so padding changes no identity.
        let ids = |evidence: &[Evidence]| {
            evidence_records(evidence, Some(&owner())).map(|archived| archived.source_ids)
        };
        prop_assert_eq!(
            ids(&parsed).map_err(|e| TestCaseError::fail(e.to_string()))?,
            ids(&want).map_err(|e| TestCaseError::fail(e.to_string()))?
        );
    }
}

#[test]
fn padding_python_keeps_is_not_stripped() {
    // U+200B and U+FEFF are not whitespace to Python, so the label no longer matches.
    for pad in ['\u{200b}', '\u{feff}', '\u{180e}'] {
        let item = json!([{"label": format!("{pad}new-source-a"), "role": "user", "content": "x"}]);
        assert_eq!(refusal(item).0, ErrorCode::InvalidArgument, "{pad:?}");
        let item = json!([{"label": "new-source-a", "role": format!("user{pad}"), "content": "x"}]);
        assert_eq!(refusal(item).0, ErrorCode::InvalidArgument, "{pad:?}");
    }
    let twice = json!([
        {"label": " new-source-a", "role": "user", "content": "x"},
        {"label": "new-source-a\u{3000}", "role": "user", "content": "y"},
    ]);
    assert_eq!(refusal(twice).1, "duplicate source label: new-source-a");
}
