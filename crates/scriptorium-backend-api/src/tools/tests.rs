//! The registry's own rules: unique names, JSON object schemas, a cap that never splits a character.

use super::*;

#[test]
fn every_tool_is_found_by_its_name_and_names_are_unique() {
    for spec in TOOLS {
        assert_eq!(tool(spec.name), Some(spec));
        assert_eq!(TOOLS.iter().filter(|other| other.name == spec.name).count(), 1);
    }
    assert_eq!(TOOLS.len(), 7);
    assert!(tool("memory_save").is_none());
}

#[test]
fn every_input_schema_is_a_json_object_schema() {
    for spec in TOOLS {
        let schema: Value = serde_json::from_str(spec.input_schema).expect("schema parses");
        assert_eq!(schema["type"], "object", "{}", spec.name);
    }
}

#[test]
fn the_cap_never_splits_a_character() {
    assert_eq!(cap_chars("héllo".to_owned(), 2), "hé");
    assert_eq!(cap_chars("héllo".to_owned(), 9), "héllo");
    assert_eq!(cap_chars("記憶".to_owned(), 1), "記");
}
