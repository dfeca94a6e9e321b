//! Batches by token budget and the observed sessions of a backfill batch.

use scriptorium_archive_format::source_events;

use super::*;

fn candidates(tokens: &[usize]) -> Vec<Candidate> {
    let records: Vec<SourceRecord> = (0..tokens.len())
        .map(|n| SourceRecord::new("p", "t", format!("m{n}"), n as i64, "user", format!("fact {n}")))
        .collect();
    let mut tree = scriptorium_archive_format::MemoryTree::new();
    let plan = plan_append(&records, &tree).unwrap_or_else(|error| panic!("{error}"));
    tree.apply(&plan);
    let text = String::from_utf8(tree.get("sources/p/_v2/t.md").unwrap_or_default().to_vec()).unwrap_or_default();
    source_events("sources/p/_v2/t.md", &text)
        .into_iter()
        .zip(tokens)
        .map(|(event, &tokens)| Candidate { event, tokens })
        .collect()
}

#[test]
fn a_batch_is_the_greedy_prefix_within_the_budget_and_never_empty() {
    let list = candidates(&[5, 5, 5, 20]);
    assert_eq!(budget_prefix(&list, 10).len(), 2);
    assert_eq!(budget_prefix(&list, 15).len(), 3);
    assert_eq!(budget_prefix(&list[3..], 10).len(), 1, "one source over budget still goes alone");
    assert_eq!(budget_prefix(&list, 1000).len(), 4);
}

#[test]
fn consecutive_sources_of_one_date_share_a_heading() {
    let mut list = candidates(&[1, 1, 1]);
    list[0].event.date = Some("2024-01-01".into());
    list[1].event.date = Some("2024-01-01".into());
    list[2].event.date = None;
    list[2].event.speaker_label = String::new();
    list[2].event.speaker_display = String::new();
    list[2].event.speaker_id = String::new();
    let text = observed_sessions(&list);
    assert_eq!(text.matches("## Observed 2024-01-01\n\n").count(), 1);
    assert!(text.contains("\n\n## Observed undated\n\n{\"ref\":\"p/t/m2\",\"speaker\":\"user\""), "{text}");
}
