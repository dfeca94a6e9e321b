//! The index as a store: ordering, v2 preference, trust resolution, incremental changes.

use super::*;
use crate::event::Trust;
use crate::search::Bm25Options;
use crate::test_support::event;

fn upsert(path: &str, events: Vec<MemoryEvent>) -> FileChange {
    FileChange::Upsert { path: path.to_owned(), events }
}

fn ids(index: &Index) -> Vec<String> {
    index.events().map(|e| e.event_id.clone()).collect()
}

fn trust_of(index: &Index, id: &str) -> Trust {
    index.events().find(|e| e.event_id == id).map(|e| e.trust_state).expect("event present")
}

#[test]
fn events_are_sorted_by_path_line_and_id() {
    let mut index = Index::new();
    index.apply([
        upsert("topics/b.md", vec![event("topics/b.md", 5, "b:2", "x", &[]), event("topics/b.md", 5, "b:1", "x", &[])]),
        upsert("topics/a.md", vec![event("topics/a.md", 9, "a:1", "x", &[]), event("topics/a.md", 2, "z:1", "x", &[])]),
    ]);
    assert_eq!(ids(&index), ["z:1", "a:1", "b:1", "b:2"]);
    assert_eq!(index.len(), 4);
    assert_eq!(index.paths().collect::<Vec<_>>(), ["topics/a.md", "topics/b.md"]);
}

#[test]
fn legacy_copy_of_a_v2_id_is_dropped_and_comes_back_when_v2_goes() {
    let legacy = "sources/p/t.md";
    let v2 = "sources/p/_v2/t.md";
    let mut index = Index::new();
    index.apply([
        upsert(
            legacy,
            vec![
                event(legacy, 3, "p/t/m1", "legacy words", &["p/t/m1"]),
                event(legacy, 7, "p/t/m2", "only legacy", &["p/t/m2"]),
            ],
        ),
        upsert(v2, vec![event(v2, 7, "p/t/m1", "v2 words", &["p/t/m1"])]),
    ]);
    let paths: Vec<(String, String)> = index.events().map(|e| (e.path.clone(), e.event_id.clone())).collect();
    // `_` sorts before `t`: the v2 file comes first.
    assert_eq!(paths, [(v2.to_owned(), "p/t/m1".to_owned()), (legacy.to_owned(), "p/t/m2".to_owned())]);
    assert!(
        index
            .search("legacy words", &Bm25Options::default())
            .expect("search")
            .iter()
            .all(|h| h.event.path == v2 || h.event.event_id == "p/t/m2")
    );
    index.apply([FileChange::Remove { path: v2.to_owned() }]);
    assert_eq!(ids(&index), ["p/t/m1", "p/t/m2"]);
    assert_eq!(index.events().next().map(|e| e.content.as_str()), Some("legacy words"));
}

#[test]
fn topic_trust_needs_every_cited_source_trusted() {
    let source = "sources/p/_v2/t.md";
    let mut pending = event(source, 14, "p/t/m2", "rumour", &["p/t/m2"]);
    pending.trust_state = Trust::Pending;
    let topic = "topics/x.md";
    let mut index = Index::new();
    index.apply([
        upsert(source, vec![event(source, 7, "p/t/m1", "fact", &["p/t/m1"]), pending.clone()]),
        upsert(
            topic,
            vec![
                event(topic, 1, "t1:1", "all trusted", &["p/t/m1"]),
                event(topic, 2, "t2:1", "one pending", &["p/t/m1", "p/t/m2"]),
                event(topic, 3, "t3:1", "unresolvable", &["p/t/m1", "D1:1"]),
                event(topic, 4, "ev_1", "cites nothing", &[]),
            ],
        ),
    ]);
    assert_eq!(trust_of(&index, "t1:1"), Trust::Trusted);
    assert_eq!(trust_of(&index, "t2:1"), Trust::Pending);
    assert_eq!(trust_of(&index, "t3:1"), Trust::Pending);
    assert_eq!(trust_of(&index, "ev_1"), Trust::Unknown);
    // Promotion: the source file changes, the topic's trust follows on the next batch.
    pending.trust_state = Trust::Trusted;
    index.apply([upsert(source, vec![event(source, 7, "p/t/m1", "fact", &["p/t/m1"]), pending])]);
    assert_eq!(trust_of(&index, "t2:1"), Trust::Trusted);
}

#[test]
fn replacing_and_removing_a_file_updates_postings() {
    let mut index = Index::new();
    index.apply([
        upsert("topics/a.md", vec![event("topics/a.md", 1, "a:1", "zebra crossing", &["r"])]),
        upsert("topics/b.md", vec![event("topics/b.md", 1, "b:1", "giraffe", &["r"])]),
    ]);
    let found = |index: &Index, q: &str| -> Vec<String> {
        index.search(q, &Bm25Options::default()).expect("search").into_iter().map(|h| h.event.event_id).collect()
    };
    assert_eq!(found(&index, "zebra"), ["a:1", "b:1"]);
    index.apply([upsert("topics/a.md", vec![event("topics/a.md", 1, "a:1", "okapi", &["r"])])]);
    // "zebra" occurs nowhere now: nothing scores.
    assert!(found(&index, "zebra").is_empty());
    assert_eq!(found(&index, "okapi").first().map(String::as_str), Some("a:1"));
    index.apply([FileChange::Remove { path: "topics/a.md".to_owned() }]);
    assert!(found(&index, "okapi").is_empty());
    assert_eq!(index.len(), 1);
    // What remains of the removed file's postings points at slots without an event.
    assert!(index.posting_list("okapi").iter().all(|posting| index.slot(posting.slot).is_none()));
}

#[test]
fn churn_compacts_slots_without_changing_results() {
    let mut index = Index::new();
    let keep = event("topics/keep.md", 1, "k:1", "stable words here", &["r"]);
    index.apply([upsert("topics/keep.md", vec![keep])]);
    for round in 0..40 {
        let events = (0..100)
            .map(|n| event("topics/churn.md", n + 1, &format!("c{round}:{n}"), "churning words", &[]))
            .collect();
        index.apply([upsert("topics/churn.md", events)]);
    }
    assert_eq!(index.len(), 101);
    assert!(index.slot_count() < 2 * 101 + COMPACT_MIN_FREE + 100, "slots: {}", index.slot_count());
    let hits = index.search("stable words", &Bm25Options::default()).expect("search");
    assert_eq!(hits.first().map(|h| h.event.event_id.as_str()), Some("k:1"));
}

#[test]
fn from_workspace_reads_the_reference_world() {
    let world = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/_resources/bm25-world");
    if !world.is_dir() {
        return; // the crate is built outside the workspace: the vectors are not there
    }
    let index = Index::from_workspace(&world).expect("readable");
    assert_eq!(index.len(), 122);
    // The legacy `old-thread.md` ids have no v2 copy, so they stay; the legacy
    // `telegram/group-100.md` copies of v2 ids are dropped.
    assert!(index.events().all(|e| e.path != "sources/telegram/group-100.md"));
    assert_eq!(trust_of(&index, "pend0001:1"), Trust::Pending);
}

/// The compact storage gives back every field as given: refs citing the event itself,
/// other refs and none; shared and distinct speakers, headings and dates; non-ASCII text.
#[test]
fn stored_events_come_back_whole() {
    let path = "sources/p/_v2/t.md";
    let mut full = event(path, 3, "p/t/m1", "grüße 京都", &["p/t/m1"]);
    full.headings = vec!["Thread".into(), "Day 1".into()];
    full.dates = vec!["2024-01-02".into(), "2024-01".into()];
    full.date = Some("2024-01-02".into());
    full.speaker_id = "telegram/1".into();
    full.speaker_display = "Bo".into();
    full.speaker_label = "Bo (telegram/1)".into();
    full.speaker_trusted = true;
    full.speaker_kind = "human".into();
    full.principal_id = "telegram:1".into();
    full.authority_tier = Some(scriptorium_archive_format::AuthorityTier::Paired);
    full.visibility = Some("private".into());
    full.trust_state = Trust::Pending;
    let mut other_refs = full.clone();
    other_refs.line = 5;
    other_refs.event_id = "p/t/m2".into();
    other_refs.refs = vec!["p/t/m1".into(), "p/t/m2".into()];
    other_refs.speaker_display = "Cy".into();
    let mut no_refs = event(path, 9, "p/t/m3", "", &[]);
    no_refs.dates = Vec::new();
    let given = vec![full, other_refs, no_refs];
    let mut index = Index::new();
    index.apply([upsert(path, given.clone())]);
    assert_eq!(index.events().cloned().collect::<Vec<_>>(), given);
    assert_eq!(index.events_in(path), given);
    assert!(index.events_in("sources/p/_v2/none.md").is_empty());
    // The same through the cache bytes.
    let bytes = index.encode(&BTreeMap::new());
    let (loaded, _) = Index::decode_payload(&bytes, |_| None).expect("decodes what it encoded");
    assert_eq!(loaded.events().cloned().collect::<Vec<_>>(), given);
}

/// The byte ranges `locate_records` finds, as the text they hold.
fn located(path: &str, text: &str, events: &[MemoryEvent]) -> Vec<Option<String>> {
    stored::locate_records(path, text.as_bytes(), events)
        .into_iter()
        .map(|record| {
            let (offset, len) = record?;
            let start = usize::try_from(offset).expect("offset");
            Some(text.get(start..start + len as usize).expect("in the text").to_owned())
        })
        .collect()
}

#[test]
fn records_are_located_whatever_their_whitespace_comments_and_links() {
    let path = "sources/p/_v2/t.md";
    let text = "head\n\
                [t] a:  one\r\ntwo \n\
                <!-- x -->\n\
                [t] b: see [Mei](m.md) <!-- note\n still --> ok\n\
                \n\
                [t] c: later\n";
    let events = vec![
        event(path, 2, "a", "[t] a: one two", &[]),
        event(path, 5, "b", "[t] b: see Mei ok", &[]),
        // Its record starts after the event's line (here at the blank line before it).
        event(path, 6, "c", "[t] c: later", &[]),
        // Cleaned text that no range of the file holds.
        event(path, 8, "d", "[t] d: nowhere", &[]),
    ];
    let found = located(path, text, &events);
    assert_eq!(found[0].as_deref(), Some("[t] a:  one\r\ntwo"));
    assert_eq!(found[1].as_deref(), Some("[t] b: see [Mei](m.md) <!-- note\n still --> ok"));
    assert_eq!(found[2].as_deref(), Some("\n[t] c: later"));
    assert_eq!(found[3], None);
    for (range, event) in found.iter().zip(&events).take(3) {
        let range = range.as_deref().expect("found");
        assert_eq!(scriptorium_archive_format::clean_retrieval_text(range), event.content);
    }
    // Topic claims are composed; bytes that are not UTF-8 were repaired by the parser.
    assert_eq!(located("topics/t.md", text, &events[..1]), [None]);
    let mut bad = text.as_bytes().to_vec();
    bad.push(0xff);
    assert_eq!(stored::locate_records(path, &bad, &events[..1]), [None]);
}

/// A payload of no events whose part 2 lists `terms` (kept prefix, rest), each with no
/// postings, for `slots` slots.
fn terms_payload(slots: u64, terms: &[(usize, &str)]) -> Vec<u8> {
    use crate::cache::codec::Writer;
    let mut out = Writer::default();
    (0..3).for_each(|_| out.usize(0)); // no files, contexts or dates
    out.end_part();
    out.u64(slots);
    out.usize(terms.len());
    for (kept, rest) in terms {
        out.usize(*kept);
        out.str(rest);
        out.usize(0);
        out.usize(0);
    }
    out.into_payload()
}

#[test]
fn terms_load_only_sorted_once_and_for_these_events() {
    let loaded = Index::decode_payload(&terms_payload(0, &[(0, "apple"), (3, "ly"), (0, "b")]), |_| None);
    let (index, _) = loaded.expect("sorted terms load");
    assert_eq!(index.dictionary.get("apply"), Some(1));
    assert_eq!(index.dictionary.get("b"), Some(2));
    assert_eq!(index.dictionary.get("app"), None);
    let damage = |payload: Vec<u8>| Index::decode_payload(&payload, |_| None).err().map(|damage| damage.0);
    assert_eq!(damage(terms_payload(0, &[(0, "b"), (0, "a")])), Some("terms out of order"));
    assert_eq!(damage(terms_payload(0, &[(0, "ab"), (2, "")])), Some("terms out of order"));
    assert_eq!(damage(terms_payload(0, &[(0, "ab"), (1, "b")])), Some("terms out of order"));
    assert_eq!(damage(terms_payload(0, &[(0, "a"), (2, "b")])), Some("bad term prefix"));
    assert_eq!(damage(terms_payload(5, &[(0, "a")])), Some("parts of different indexes"));
}

#[test]
fn contexts_and_dates_loaded_from_a_cache_are_shared_with_later_events() {
    let (first, second) = ("sources/p/_v2/t.md", "sources/p/_v2/u.md");
    let mut saved = Index::new();
    saved.apply([upsert(first, vec![event(first, 1, "p/t/m1", "one", &[])])]);
    let (mut index, _) = Index::decode_payload(&saved.encode(&BTreeMap::new()), |_| None).expect("decodes");
    index.apply([upsert(second, vec![event(second, 1, "p/u/m1", "two", &[])])]);
    let (a, b) = (index.slot(0).expect("loaded"), index.slot(1).expect("added"));
    assert!(std::sync::Arc::ptr_eq(&a.event.context, &b.event.context));
    assert!(std::sync::Arc::ptr_eq(&a.event.dates, &b.event.dates));
    assert_eq!(index.events().count(), 2);
}
