//! Ranking: the inverted index equals a brute-force BM25+ over the candidates, for any
//! insertion order, filter and `top_k`.

use proptest::prelude::*;

use super::windows::{Cutting, TEST_CUTTING};
use super::*;
use crate::event::{MemoryEvent, Trust};
use crate::index::FileChange;
use crate::test_support::{event, naive_search};

fn index_of(files: &[(&str, Vec<MemoryEvent>)]) -> Index {
    let mut index = Index::new();
    index.apply(
        files.iter().map(|(path, events)| FileChange::Upsert { path: (*path).to_owned(), events: events.clone() }),
    );
    index
}

fn rows(hits: &[Hit]) -> Vec<(String, f64, f64, Vec<String>)> {
    hits.iter()
        .map(|hit| match &hit.score {
            Score::Bm25(s) => (hit.event.event_id.clone(), s.final_score, s.bm25_score, s.rule_features.clone()),
            other => panic!("not a BM25 score: {other:?}"),
        })
        .collect()
}

fn small_world() -> Index {
    let mut dated = event("topics/travel/berlin.md", 3, "b1:1", "[2019] Craig lives in Berlin", &["s/t/1"]);
    dated.date = Some("2019-06-01".into());
    dated.dates = vec!["2019-06-01".into()];
    dated.headings = vec!["Berlin".into()];
    let mut spoken = event("sources/chat/_v2/t.md", 7, "chat/t/1", "[2024-01-02] Dave: garden sensor", &["chat/t/1"]);
    spoken.speaker_display = "Dave".into();
    spoken.date = Some("2024-01-02".into());
    spoken.dates = vec!["2024-01-02".into()];
    index_of(&[
        ("topics/travel/berlin.md", vec![dated]),
        (
            "sources/chat/_v2/t.md",
            vec![spoken, event("sources/chat/_v2/t.md", 14, "chat/t/2", "unrelated words", &["chat/t/2"])],
        ),
        ("topics/misc.md", vec![event("topics/misc.md", 1, "m:1", "no refs at all", &[])]),
    ])
}

#[test]
fn rule_features_and_adjustments() {
    let index = small_world();
    let hits = index.search("berlin 2019-06-01", &Bm25Options::default()).expect("search");
    let Some(Score::Bm25(top)) = hits.first().map(|h| &h.score) else { panic!("a hit") };
    assert_eq!(hits.first().map(|h| h.event.event_id.as_str()), Some("b1:1"));
    // `2019` is a query token of 4 characters that the content holds too.
    assert_eq!(
        top.rule_features,
        ["exact_terms=2019,berlin", "path_heading=berlin", "exact_date=2019-06-01", "source_grounded"]
    );
    assert_eq!(top.rule_adjustment, 0.25);
    assert_eq!(top.lexical_score, 1.0);
    // Without reranking, scores are the lexical ones and no rule is named.
    let plain = index.search("berlin", &Bm25Options { rerank: false, ..Bm25Options::default() }).expect("search");
    assert!(
        plain
            .iter()
            .all(|h| matches!(&h.score, Score::Bm25(s) if s.rule_features.is_empty() && s.rule_adjustment == 0.0))
    );
}

#[test]
fn delta_lets_non_matching_candidates_score_and_refs_keep_them() {
    let index = small_world();
    let hits = index.search("garden", &Bm25Options::default()).expect("search");
    let got: Vec<&str> = hits.iter().map(|h| h.event.event_id.as_str()).collect();
    // Every candidate earns idf·δ; the one without refs has the same lexical score as the
    // other non-matching ones but no bonus, so it comes last.
    assert_eq!(got, ["chat/t/1", "chat/t/2", "b1:1", "m:1"]);
}

#[test]
fn filters_shape_the_candidate_set() {
    let index = small_world();
    let search = |filters: Filters| -> Vec<String> {
        let options = Bm25Options { filters, ..Bm25Options::default() };
        index.search("garden words berlin", &options).expect("search").into_iter().map(|h| h.event.event_id).collect()
    };
    assert_eq!(search(Filters { speaker: Some("DAVE".into()), ..Filters::default() }), ["chat/t/1"]);
    assert_eq!(search(Filters { date_to: Some("2019".into()), ..Filters::default() }), ["b1:1"]);
    assert_eq!(search(Filters { date_from: Some("2024-01".into()), ..Filters::default() }), ["chat/t/1"]);
    // The logical path of `sources/chat/_v2/t.md` is `sources/chat/t.md`.
    let mut by_prefix = search(Filters { path_prefix: Some("sources/chat/t".into()), ..Filters::default() });
    by_prefix.sort();
    assert_eq!(by_prefix, ["chat/t/1", "chat/t/2"]);
    let topics_only = search(Filters { include_sources: false, ..Filters::default() });
    assert!(topics_only.iter().all(|id| !id.starts_with("chat/")), "{topics_only:?}");
    assert!(
        search(Filters { include_sources: false, path_prefix: Some("sources".into()), ..Filters::default() })
            .is_empty()
    );
}

#[test]
fn top_k_is_clamped_and_empty_queries_find_nothing() {
    let events: Vec<MemoryEvent> =
        (1..=60).map(|n| event("topics/many.md", n, &format!("e{n:02}:1"), "word", &["r"])).collect();
    let index = index_of(&[("topics/many.md", events)]);
    let count = |top_k| index.search("word", &Bm25Options { top_k, ..Bm25Options::default() }).expect("search").len();
    assert_eq!(count(0), 1);
    assert_eq!(count(7), 7);
    assert_eq!(count(1000), INDEX_TOP_K_MAX);
    assert!(index.search("!!!", &Bm25Options::default()).expect("search").is_empty());
    assert!(Index::new().search("word", &Bm25Options::default()).expect("search").is_empty());
}

#[test]
fn explanation_sums_to_the_raw_score() {
    let index = small_world();
    let hits = index.search("garden sensor garden", &Bm25Options::default()).expect("search");
    let Some(Score::Bm25(top)) = hits.first().map(|h| &h.score) else { panic!("a hit") };
    let explanation =
        index.explain("garden sensor garden", &Filters::default(), "chat/t/1").expect("valid").expect("candidate");
    assert_eq!(round6(explanation.value()), top.bm25_score);
    assert_eq!(explanation.details().len(), 3, "one part per query token, duplicates kept");
    let filtered = Filters { path_prefix: Some("topics".into()), ..Filters::default() };
    assert!(index.explain("garden", &filtered, "chat/t/1").expect("valid").is_none());
    // A query lists the holders of its long terms only; its explanation still counts
    // every term the event holds (here the short `01` and `02`).
    let long = "garden 01 sensor 02 garden 01 sensor 02 garden 01";
    let hits = index.search(long, &Bm25Options::default()).expect("search");
    let top = hits.iter().find_map(|hit| match &hit.score {
        Score::Bm25(score) if hit.event.event_id == "chat/t/1" => Some(score.bm25_score),
        _ => None,
    });
    let explanation = index.explain(long, &Filters::default(), "chat/t/1").expect("valid").expect("candidate");
    assert_eq!(Some(round6(explanation.value())), top);
}

#[test]
fn matches_the_reference_world_exactly() {
    let world = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/_resources/bm25-world");
    if !world.is_dir() {
        return;
    }
    let index = Index::from_workspace(&world).expect("readable");
    let events: Vec<MemoryEvent> = index.events().cloned().collect();
    for query in ["Berlin", "成本", "Miso cat tuna", "garden sensor battery", "router password", "京都 公寓 2024-03-15"]
    {
        for top_k in [1, 3, 10, 50] {
            let options = Bm25Options { top_k, ..Bm25Options::default() };
            let got = rows(&index.search(query, &options).expect("search"));
            assert_eq!(got, naive_search(&events, query, &options), "{query} top {top_k}");
        }
    }
}

/// Many events sharing words, so that scores tie or nearly tie across the `top_k` cut,
/// in several files (rank order crosses files).
fn crowded_world() -> (Index, Vec<MemoryEvent>) {
    const PARTS: &[&str] = &["预算", "跟踪器", "重试", "索引", "budget", "tracker", "retry", "会议"];
    let mut files: Vec<(&str, Vec<MemoryEvent>)> = Vec::new();
    for (f, path) in ["sources/p/_v2/a.md", "sources/p/_v2/b.md", "topics/c.md"].into_iter().enumerate() {
        let events = (0..40)
            .map(|n: usize| {
                let words: Vec<&str> = (0..1 + n % 4).map(|k| PARTS[(n * 3 + k * 5 + f) % PARTS.len()]).collect();
                let refs: &[&str] = if n.is_multiple_of(3) { &[] } else { &["p/a/1"] };
                event(path, n + 1, &format!("e{n:02}"), &words.join(" "), refs)
            })
            .collect();
        files.push((path, events));
    }
    let index = index_of(&files);
    let live = index.events().cloned().collect();
    (index, live)
}

#[test]
fn long_queries_rank_exactly_like_brute_force() {
    let (index, live) = crowded_world();
    // Many tokens: scored by estimate, then exactly where it matters.
    for query in [
        "预算跟踪器重试 索引 budget",
        "跟踪器跟踪器重试重试 tracker retry retry",
        "会议预算 会议预算 budget budget tracker",
        "budget",
        "retry tracker",
    ] {
        for top_k in [1, 3, 8, 20, 50] {
            for rerank in [true, false] {
                let options = Bm25Options { top_k, rerank, filters: Filters::default() };
                let got = rows(&index.search(query, &options).expect("search"));
                assert_eq!(got, naive_search(&live, query, &options), "{query} top {top_k} rerank {rerank}");
            }
        }
    }
}

#[test]
fn reused_buffers_do_not_leak_between_indexes() {
    // The same thread queries a large index, then a small one with other lengths.
    let (crowded, _) = crowded_world();
    let small = small_world();
    let query = "预算跟踪器重试 索引 budget garden sensor berlin";
    let before = rows(&small.search(query, &Bm25Options::default()).expect("search"));
    assert!(!crowded.search(query, &Bm25Options::default()).expect("search").is_empty());
    assert_eq!(rows(&small.search(query, &Bm25Options::default()).expect("search")), before);
    let live: Vec<MemoryEvent> = small.events().cloned().collect();
    assert_eq!(before, naive_search(&live, query, &Bm25Options::default()));
}

#[test]
fn concurrent_searches_each_with_a_helper_equal_brute_force() {
    // Four threads query one index at once, every query cut into windows with a helper
    // thread of its own: per-thread buffers and per-query windows must not mix.
    let (index, live) = blocky_corpus(7, 400);
    let queries =
        ["预算会议的 budget ok", "的 会 我 预算 会议 跟踪器 重试", "budget x ok", "预算会议的 预算会议的 重试"];
    let options = [
        Bm25Options::default(),
        Bm25Options { top_k: 3, rerank: false, ..Bm25Options::default() },
        Bm25Options {
            filters: Filters { speaker: Some("dave".into()), ..Filters::default() },
            ..Bm25Options::default()
        },
    ];
    let live = &live;
    let expected: Vec<_> = (queries.iter())
        .flat_map(|query| options.iter().map(move |options| naive_search(live, query, options)))
        .collect();
    std::thread::scope(|scope| {
        for window_slots in [64, 128, 200, 300] {
            let (index, expected, options) = (&index, &expected, &options);
            scope.spawn(move || {
                TEST_CUTTING.set(Some(Cutting::always(window_slots)));
                for _ in 0..2 {
                    let got: Vec<_> = (queries.iter())
                        .flat_map(|query| {
                            options.iter().map(move |options| rows(&index.search(query, options).expect("search")))
                        })
                        .collect();
                    assert_eq!(&got, expected, "windows of {window_slots} slots");
                }
            });
        }
    });
}

const WORDS: &[&str] =
    &["berlin", "garden", "sensor", "cat", "miso", "ok", "京都", "公寓", "成本", "2024-01-02", "tea", "x"];
const PATHS: &[&str] = &["topics/a.md", "topics/b/c.md", "topics/b_d.md", "sources/p/_v2/t.md", "sources/p/t.md"];

fn arb_event() -> impl Strategy<Value = MemoryEvent> {
    (
        0..PATHS.len(),
        1usize..6,
        0u32..8,
        prop::collection::vec(0..WORDS.len(), 1..7),
        any::<bool>(),
        prop::option::of(prop::sample::select(vec!["2024-01-02", "2019", "2024-03"])),
        any::<bool>(),
        prop::option::of(prop::sample::select(vec!["Dave", "Erin"])),
    )
        .prop_map(|(path, line, id, words, refs, date, pending, speaker)| {
            let path = PATHS.get(path).copied().unwrap_or("topics/a.md");
            let content: Vec<&str> = words.iter().filter_map(|w| WORDS.get(*w).copied()).collect();
            let id = format!("id{id}");
            let mut event = event(path, line, &id, &content.join(" "), if refs { &["p/t/id1"] } else { &[] });
            event.dates = date.iter().map(|d| (*d).to_owned()).collect();
            event.date = date.map(str::to_owned);
            event.headings = if line % 2 == 0 { vec!["Garden".to_owned()] } else { Vec::new() };
            if let Some(speaker) = speaker.filter(|_| event.is_source()) {
                speaker.clone_into(&mut event.speaker_display);
            }
            if pending && event.is_source() {
                event.trust_state = Trust::Pending;
            }
            event
        })
}

/// The events per file, the first of any repeated (path, line, id) kept: within a file
/// that key identifies an event (block ids and source ids are unique there).
fn group_by_file(events: &[MemoryEvent]) -> Vec<(&'static str, Vec<MemoryEvent>)> {
    let mut seen = std::collections::HashSet::new();
    let unique: Vec<&MemoryEvent> = events.iter().filter(|e| seen.insert((&e.path, e.line, &e.event_id))).collect();
    PATHS
        .iter()
        .map(|path| (*path, unique.iter().filter(|e| e.path == *path).map(|e| (*e).clone()).collect()))
        .collect()
}

fn arb_options() -> impl Strategy<Value = Bm25Options> {
    (
        1usize..14,
        any::<bool>(),
        prop::option::of(prop::sample::select(vec!["b", "sources/p/t", "topics", "sources"])),
        prop::option::of(prop::sample::select(vec!["2024", "2024-01"])),
        prop::option::of(prop::sample::select(vec!["dave", " DAVE ", "erin", "zed"])),
    )
        .prop_map(|(top_k, rerank, prefix, from, speaker)| Bm25Options {
            top_k,
            rerank,
            filters: Filters {
                path_prefix: prefix.map(str::to_owned),
                date_from: from.map(str::to_owned),
                speaker: speaker.map(str::to_owned),
                ..Filters::default()
            },
        })
}

proptest! {
    #[test]
    fn index_equals_brute_force(
        events in prop::collection::vec(arb_event(), 1..40),
        query in prop::collection::vec(0..WORDS.len() + 1, 1..5),
        options in arb_options(),
        window_slots in prop::option::of(1usize..12),
    ) {
        // None: as any query is cut; otherwise in windows of that many slots (rounded
        // up to 64), with a helper.
        TEST_CUTTING.set(window_slots.map(Cutting::always));
        let query: Vec<&str> = query.iter().map(|w| WORDS.get(*w).copied().unwrap_or("absent")).collect();
        let query = query.join(" ");
        let index = index_of(&group_by_file(&events));
        let live: Vec<MemoryEvent> = index.events().cloned().collect();
        let got = rows(&index.search(&query, &options).expect("search"));
        prop_assert_eq!(got, naive_search(&live, &query, &options));
    }

    #[test]
    fn results_do_not_depend_on_insertion_order(
        events in prop::collection::vec(arb_event(), 1..40),
        shuffle in any::<prop::sample::Index>(),
        query in prop::collection::vec(0..WORDS.len(), 1..4),
        options in arb_options(),
    ) {
        let query: Vec<&str> = query.iter().filter_map(|w| WORDS.get(*w).copied()).collect();
        let query = query.join(" ");
        let files = group_by_file(&events);
        let forward = index_of(&files);
        // Files in reverse order, events reversed inside each file.
        let reversed: Vec<(&str, Vec<MemoryEvent>)> =
            files.iter().rev().map(|(p, evs)| (*p, evs.iter().rev().cloned().collect())).collect();
        let backward = index_of(&reversed);
        // Incremental: everything, then one file removed and re-added.
        let mut incremental = index_of(&files);
        let (path, again) = files.get(shuffle.index(files.len())).cloned().expect("a file");
        incremental.apply([FileChange::Remove { path: path.to_owned() }]);
        incremental.apply([FileChange::Upsert { path: path.to_owned(), events: again }]);
        let want = forward.search(&query, &options).expect("search");
        prop_assert_eq!(&backward.search(&query, &options).expect("search"), &want);
        prop_assert_eq!(&incremental.search(&query, &options).expect("search"), &want);
        let events_of = |index: &Index| index.events().cloned().collect::<Vec<_>>();
        prop_assert_eq!(events_of(&backward), events_of(&forward));
        prop_assert_eq!(events_of(&incremental), events_of(&forward));
    }
}

/// Words for the filtered corpora: very common single characters, rarer bigrams and
/// runs, and Latin words of rule length.
const COMMON_WORDS: &[&str] = &["的", "会", "我", "预算", "会议", "跟踪器", "预算会议的", "budget", "ok", "重试", "x"];
const FILTER_PATHS: &[&str] = &["topics/a.md", "topics/b/c.md", "sources/p/_v2/t.md", "sources/q/_v2/u.md"];

/// Enough events that posting lists span many blocks, every document holding common
/// characters, identical contents repeated (so that scores tie across the `top_k` cut),
/// and a rare speaker in runs of a few events.
fn blocky_corpus(seed: u64, size: usize) -> (Index, Vec<MemoryEvent>) {
    let mut state = seed | 1;
    let mut next = move |below: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % below as u64) as usize
    };
    let mut files: Vec<(&str, Vec<MemoryEvent>)> = FILTER_PATHS.iter().map(|path| (*path, Vec::new())).collect();
    let mut speaking = 0;
    for n in 0..size {
        let (path, events) = &mut files[next(FILTER_PATHS.len())];
        let words: Vec<&str> = if next(4) == 0 {
            vec!["的", "会", "预算"]
        } else {
            let mut words = vec!["的"; 1 + next(2)];
            words.extend((0..next(6)).map(|_| COMMON_WORDS[next(COMMON_WORDS.len())]));
            words
        };
        let refs: &[&str] = if next(3) == 0 { &[] } else { &["p/t/1"] };
        let mut event = event(path, n + 1, &format!("e{n}"), &words.join(" "), refs);
        if next(5) == 0 {
            event.dates = vec!["2024-01-02".to_owned()];
            event.date = Some("2024-01-02".to_owned());
        }
        if next(40) == 0 {
            speaking = 1 + next(6);
        }
        if event.is_source() && speaking > 0 {
            speaking -= 1;
            "Dave".clone_into(&mut event.speaker_display);
        }
        events.push(event);
    }
    let index = index_of(&files);
    let live = index.events().cloned().collect();
    (index, live)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Filtered queries read only the blocks of each posting list that reach the
    /// candidates' slot ranges, and rank exactly as brute force over every candidate.
    #[test]
    fn filtered_block_reads_equal_brute_force(
        seed in any::<u64>(),
        size in 100usize..900,
        query in prop::collection::vec(0..COMMON_WORDS.len() + 1, 1..9),
        top_k in 1usize..14,
        rerank in any::<bool>(),
        speaker in any::<bool>(),
        prefix in prop::option::of(prop::sample::select(vec!["b", "sources/q", "sources/p/t", "topics"])),
        from in prop::option::of(prop::sample::select(vec!["2024", "2023"])),
        window_slots in prop::option::of(1usize..400),
    ) {
        TEST_CUTTING.set(window_slots.map(Cutting::always));
        let (index, live) = blocky_corpus(seed, size);
        let words: Vec<&str> = query.iter().map(|w| COMMON_WORDS.get(*w).copied().unwrap_or("absent")).collect();
        let query = words.join(" ");
        let filters = Filters {
            speaker: speaker.then(|| "dave".to_owned()),
            path_prefix: prefix.map(str::to_owned),
            date_from: from.map(str::to_owned),
            ..Filters::default()
        };
        let options = Bm25Options { top_k, rerank, filters };
        let got = rows(&index.search(&query, &options).expect("search"));
        prop_assert_eq!(got, naive_search(&live, &query, &options));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Long queries (more than 8 tokens, as a CJK run gives) read each posting list once,
    /// adding estimates by slot as they decode, and look the exact sums up in the posting
    /// lists: they rank exactly as brute force, with and without filters, with and without
    /// dead slots (a removed file).
    #[test]
    fn long_queries_equal_brute_force_over_blocks(
        seed in any::<u64>(),
        size in 100usize..900,
        query in prop::collection::vec(0..COMMON_WORDS.len() + 1, 3..14),
        top_k in 1usize..14,
        rerank in any::<bool>(),
        speaker in any::<bool>(),
        prefix in prop::option::of(prop::sample::select(vec!["b", "sources/q", "topics"])),
        remove in any::<bool>(),
        window_slots in prop::option::of(1usize..400),
    ) {
        // None: as any query is cut; otherwise every query in windows of that many
        // slots, read by this thread and a helper.
        TEST_CUTTING.set(window_slots.map(Cutting::always));
        let (mut index, mut live) = blocky_corpus(seed, size);
        if remove {
            index.apply([FileChange::Remove { path: "topics/b/c.md".to_owned() }]);
            live = index.events().cloned().collect();
        }
        // A run of five characters alone gives ten tokens.
        let mut words: Vec<&str> = vec!["预算会议的"];
        words.extend(query.iter().map(|w| COMMON_WORDS.get(*w).copied().unwrap_or("absent")));
        let query = words.join(" ");
        prop_assert!(tokenize(&query).len() > 8);
        let filters = Filters {
            speaker: speaker.then(|| "dave".to_owned()),
            path_prefix: prefix.map(str::to_owned),
            ..Filters::default()
        };
        let options = Bm25Options { top_k, rerank, filters };
        let got = rows(&index.search(&query, &options).expect("search"));
        prop_assert_eq!(got, naive_search(&live, &query, &options));
    }
}
