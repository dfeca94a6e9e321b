//! Claim events: one per citation group, dates prefixed, links reduced.

use super::*;
use crate::source::MemorySources;

#[test]
fn one_event_per_citation_group() {
    let text = "# Mei\n\nMei is [sister](x.md#^a1).[^e-1] She lives <!-- note --> in Kyoto[^e-2][^e-3] ^b1\n\n\
                [^e-1]: Time: `undated`; Sources: [a](D1:1)\n\
                [^e-2]: Time: `2024-03`; Sources: [b](D1:1), [c](D1:2)\n\
                [^e-3]: Time: `2024-03-15`; Sources: [d](D1:1)\n\
                [^e-3]: Time: `2024-03-16`; Sources: [e](D1:3)\n";
    let document = TopicDocument::from_text("topics/mei.md", text);
    let events = topic_events(&document, &SourceResolver::new(MemorySources::new()));
    let got: Vec<(&str, &str, &str, Vec<&str>, usize)> = events
        .iter()
        .map(|e| {
            (
                e.event_id.as_str(),
                e.content.as_str(),
                e.date.as_str(),
                e.refs.iter().map(String::as_str).collect(),
                e.line,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("b1:1", "Mei is sister.", "", vec!["D1:1"], 3),
            ("b1:2", "[2024-03; 2024-03-16] She lives in Kyoto", "2024-03", vec!["D1:1", "D1:2", "D1:3"], 3),
        ]
    );
    assert_eq!(events[1].headings, ["Mei"]);
}

#[test]
fn empty_claims_use_up_their_number() {
    let text = "[^e-1] Real claim.[^e-1] ^b1\n\n[^e-1]: Time: 2024; Sources: [a](D1:1)\n\nNo id.[^e-1]\n";
    let document = TopicDocument::from_text("topics/x.md", text);
    let events = topic_events(&document, &SourceResolver::new(MemorySources::new()));
    let ids: Vec<&str> = events.iter().map(|e| e.event_id.as_str()).collect();
    assert_eq!(ids, ["b1:2"]);
}
