//! The path rules on their own: a table of spellings, and a property that no accepted
//! path can leave the stage, name a hidden component or reach `sources/`.

use proptest::prelude::*;
use scriptorium_archive_format::collision_key;

use super::{MAX_PATH_BYTES, stage_path, writable_path};
use crate::stage::ToolErrorCode;

fn code(result: Result<String, super::ToolError>) -> Result<String, ToolErrorCode> {
    result.map_err(|error| error.code)
}

#[test]
fn spellings_normalize_or_are_refused_by_code() {
    let cases: &[(&str, Result<&str, ToolErrorCode>)] = &[
        ("topics/a.md", Ok("topics/a.md")),
        ("./topics//a.md", Ok("topics/a.md")),
        ("topics/./a.md/", Ok("topics/a.md")),
        ("", Ok("")),
        (".", Ok("")),
        ("/topics/a.md", Err(ToolErrorCode::OutsideStage)),
        ("topics/../a.md", Err(ToolErrorCode::OutsideStage)),
        ("..", Err(ToolErrorCode::OutsideStage)),
        (".git/config", Err(ToolErrorCode::OutsideStage)),
        (".scriptorium/runtime.json", Err(ToolErrorCode::OutsideStage)),
        (".scriptorium-block-backup/x", Err(ToolErrorCode::OutsideStage)),
        (".nativemem/x", Err(ToolErrorCode::OutsideStage)),
        ("topics/.git/x.md", Err(ToolErrorCode::OutsideStage)),
        ("topics/.x.md", Err(ToolErrorCode::OutsideStage)),
        ("memory-superseded/x.md", Err(ToolErrorCode::OutsideStage)),
        ("topics/MEMORY-SUPERSEDED/x.md", Err(ToolErrorCode::OutsideStage)),
        ("sources", Err(ToolErrorCode::SourcesReadOnly)),
        ("sources/x.md", Err(ToolErrorCode::SourcesReadOnly)),
        ("Sources/x.md", Err(ToolErrorCode::SourcesReadOnly)),
        ("SOURCES", Err(ToolErrorCode::SourcesReadOnly)),
        ("./sources/x", Err(ToolErrorCode::SourcesReadOnly)),
        ("\u{17f}ources/x", Err(ToolErrorCode::SourcesReadOnly)),
        ("topics/sources/x.md", Ok("topics/sources/x.md")),
        ("topics/a\u{0}.md", Err(ToolErrorCode::InvalidPath)),
        ("topics/a\r.md", Err(ToolErrorCode::InvalidPath)),
        ("topics/a\u{85}.md", Err(ToolErrorCode::InvalidPath)),
        ("topics/caf\u{e9}.md", Ok("topics/caf\u{e9}.md")),
    ];
    for (raw, expected) in cases {
        assert_eq!(code(stage_path(raw)), expected.map(str::to_owned), "{raw:?}");
    }
    assert_eq!(code(stage_path(&"a/".repeat(MAX_PATH_BYTES))), Err(ToolErrorCode::InvalidPath));
    assert_eq!(code(writable_path("topics/a.md")), Ok("topics/a.md".to_owned()));
    assert_eq!(code(writable_path("core.md")), Err(ToolErrorCode::ReadOnlyPath));
    assert_eq!(code(writable_path("topics/.md")), Err(ToolErrorCode::OutsideStage));
    assert_eq!(code(writable_path("topics/a.MD")), Err(ToolErrorCode::ReadOnlyPath));
    assert_eq!(code(writable_path("sources/a.md")), Err(ToolErrorCode::SourcesReadOnly));
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(256)
}

/// Components a hostile path is made of.
fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("..".to_owned()),
        Just(".".to_owned()),
        Just(String::new()),
        Just("sources".to_owned()),
        Just("SOURCES".to_owned()),
        Just("\u{17f}ources".to_owned()),
        Just("topics".to_owned()),
        Just("Topics".to_owned()),
        Just(".git".to_owned()),
        Just(".scriptorium".to_owned()),
        Just("memory-superseded".to_owned()),
        Just("a.md".to_owned()),
        Just("caf\u{e9}.md".to_owned()),
        Just("cafe\u{301}.md".to_owned()),
        "[a-zA-Z0-9._\u{e9}\u{4e00}-]{1,8}",
        any::<String>(),
    ]
}

fn path() -> impl Strategy<Value = String> {
    (any::<bool>(), prop::collection::vec(component(), 0..6))
        .prop_map(|(absolute, parts)| format!("{}{}", if absolute { "/" } else { "" }, parts.join("/")))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn no_accepted_path_leaves_the_stage_or_reaches_sources(raw in path()) {
        if let Ok(path) = stage_path(&raw) {
            prop_assert!(!path.starts_with('/'));
            prop_assert!(!path.chars().any(char::is_control));
            for part in path.split('/') {
                prop_assert!(!part.is_empty() || path.is_empty());
                prop_assert!(part != ".." && part != ".");
                prop_assert!(!part.starts_with('.'));
                prop_assert!(collision_key(part) != collision_key("memory-superseded"));
            }
            prop_assert!(collision_key(path.split('/').next().unwrap_or_default()) != "sources");
        }
        if let Ok(path) = writable_path(&raw) {
            prop_assert!(path.starts_with("topics/") && path.ends_with(".md"));
        }
    }
}
