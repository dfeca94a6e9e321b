//! The install's validation of a committed tree: strict parse, cited sources, block links.

use scriptorium_topic_markdown::{ErrorCode, MemorySources, SourceResolver};

use super::validate_topics;

#[test]
fn missing_sources_and_dangling_links_are_reported_once_per_unit() {
    let source = "# D1\n\n<a id=\"d1-1\"></a>\n[2024-01-02] user: I adopted a cat. [D1:1]\n";
    let sources = SourceResolver::new(MemorySources::from_iter([("sources/D1.md", source)]));
    let topic = "# Pets\n\nCraig adopted a cat.[^e-1] ^c0c0c0c0\n\nSee [x](other.md#^ffffffff).[^e-2] ^c1c1c1c1\n\n\
                 [^e-1]: Time: `2024-01-02`; Sources: [D1:1](D1:1)\n\
                 [^e-2]: Time: `2024-01-02`; Sources: [D9:9](D9:9)\n";
    let check = validate_topics([("topics/pets.md", topic)], &sources);
    let codes: Vec<ErrorCode> = check.violations.iter().map(|v| v.code()).collect();
    // A plain handle naming no frame is what normalization refuses as an invalid target.
    assert_eq!(codes, [ErrorCode::InvalidSourceTarget, ErrorCode::DanglingBlockLink]);
    assert_eq!((check.cited_sources, check.resolved_sources), (2, 1));
    assert_eq!(check.units.len(), 2);
}

#[test]
fn an_unknown_frame_behind_a_fallback_link_is_an_unknown_source() {
    let sources = SourceResolver::new(MemorySources::from_iter([("sources/D1.md", "# D1\n")]));
    let topic = "# Pets\n\nCraig adopted a cat.[^e-1] ^c0c0c0c0\n\n\
                 [^e-1]: Time: `2024-01-02`; Sources: [D9:9](nowhere.md#d9-9)\n";
    let check = validate_topics([("topics/pets.md", topic)], &sources);
    let codes: Vec<ErrorCode> = check.violations.iter().map(|v| v.code()).collect();
    assert_eq!(codes, [ErrorCode::UnknownSource]);
}
