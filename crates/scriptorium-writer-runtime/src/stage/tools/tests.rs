//! The dispatcher under arbitrary input: any tool name with any JSON arguments returns an
//! outcome (never a panic), an error outcome always carries a code and a hint, and no call
//! sequence changes the committed workspace or stages anything but topic files.

use proptest::prelude::*;
use serde_json::{Map, Value};

use crate::stage::tests::fixture;
use crate::stage::{Stage, TOOL_NAMES};

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(48)
}

/// Strings the tools are likely to see, hostile ones included.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("topics/people/ada.md".to_owned()),
        Just("topics/new.md".to_owned()),
        Just("topics".to_owned()),
        Just("sources/local/_v2/t.md".to_owned()),
        Just("../outside/secret.md".to_owned()),
        Just("**/*.md".to_owned()),
        Just("Ada".to_owned()),
        Just("[".to_owned()),
        Just("(?i)a{2,}".to_owned()),
        Just(String::new()),
        "[a-z/.*?{}\\[\\]^$()|+\\\\]{0,12}",
        any::<String>(),
    ]
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6).prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("file_path".to_owned()),
        Just("content".to_owned()),
        Just("old_string".to_owned()),
        Just("new_string".to_owned()),
        Just("replace_all".to_owned()),
        Just("pattern".to_owned()),
        Just("path".to_owned()),
        Just("source_path".to_owned()),
        Just("destination_path".to_owned()),
        any::<String>(),
    ]
}

/// Mostly well-formed argument objects (so the tools run), some arbitrary JSON.
fn arguments() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => prop::collection::vec((key(), prop_oneof![text().prop_map(Value::String), json()]), 0..5)
            .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<String, Value>>())),
        1 => json(),
    ]
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(TOOL_NAMES.to_vec()).prop_map(str::to_owned),
        1 => any::<String>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn any_call_returns_an_outcome_and_changes_only_staged_topics(
        calls in prop::collection::vec((name(), arguments()), 1..8),
    ) {
        let (temp, workspace) = fixture("dispatch-prop");
        let before = workspace.revision().expect("revision");
        let mut stage = Stage::new(&workspace).expect("stage");
        for (name, arguments) in &calls {
            let outcome = stage.execute(name, arguments);
            prop_assert_eq!(outcome.is_error, outcome.code.is_some());
            if let Some(code) = outcome.code {
                prop_assert!(outcome.content.starts_with(code.as_str()));
                prop_assert!(outcome.content.contains("\nHint: "));
            }
            prop_assert!(!outcome.content.contains("secret source text"), "sources never reach the model");
            prop_assert!(!outcome.content.contains("outside\n"), "nothing outside the workspace is read");
            let text = serde_json::to_string(arguments).expect("json");
            let raw = stage.execute_json(name, &text);
            prop_assert_eq!(raw.is_error, raw.code.is_some());
        }
        if let Ok(Some(scriptorium_transaction::Edit::Changes(changes))) = stage.edit() {
            for change in changes {
                prop_assert!(change.path.as_str().starts_with("topics/"));
            }
        }
        prop_assert_eq!(workspace.revision().expect("revision"), before);
        prop_assert_eq!(std::fs::read(temp.path().join("outside/secret.md")).expect("outside"), b"outside\n".to_vec());
    }
}
