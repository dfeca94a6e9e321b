//! Tests of the record operations: the shape checks, every op and refusal on small
//! trees, and the transaction vectors replayed through the topic normalizer.

mod vectors;

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{Position, RecordChanges, RecordOp, apply_record_ops, parse_record_ops};
use crate::error::ErrorCode;

const PETS: &str = "# Pets\n\n## Cats\n\nCraig adopted a cat.[^e-aaaa] ^c0c0c0c0\n\n\
                    She is called Mochi.[^e-bbbb] ^d1d1d1d1\n\n\
                    [^e-aaaa]: Time: `2024-01-02`; Sources: [D1:1](D1:1)\n\
                    [^e-bbbb]: Time: `2024`; Sources: [D1:2](D1:2)\n\n\
                    ## Dogs\n\nNo dogs.[^e-cccc] ^e2e2e2e2 ^f3f3f3f3\n\n\
                    [^e-cccc]: Time: `undated`; Sources: [D1:3](D1:3)\n";

fn tree(files: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
    files.iter().map(|(path, text)| ((*path).to_owned(), text.as_bytes().to_vec())).collect()
}

fn text(topics: &BTreeMap<String, Vec<u8>>, path: &str) -> String {
    String::from_utf8(topics.get(path).cloned().expect("the file exists")).expect("UTF-8")
}

/// Parse and apply `ops` to `files`; the resulting tree and changes.
fn run(files: &[(&str, &str)], ops: Value) -> (BTreeMap<String, Vec<u8>>, RecordChanges) {
    let mut topics = tree(files);
    let ops = parse_record_ops(&ops).expect("the ops parse");
    let changes = apply_record_ops(&ops, &mut topics).expect("the ops apply");
    (topics, changes)
}

/// The code and message of a refused parse or apply; the tree must be untouched.
fn refused(files: &[(&str, &str)], ops: Value) -> (ErrorCode, String) {
    let mut topics = tree(files);
    let before = topics.clone();
    let error = match parse_record_ops(&ops) {
        Ok(ops) => apply_record_ops(&ops, &mut topics).expect_err("the ops are refused"),
        Err(error) => error,
    };
    assert_eq!(topics, before, "a refused op list changes nothing");
    (error.code(), error.message().to_owned())
}

fn parse_error(op: Value) -> String {
    let error = parse_record_ops(&json!([op])).expect_err("the op is refused");
    assert_eq!(error.code(), ErrorCode::InvalidArgument);
    error.message().to_owned()
}

fn create(path: &str, headings: Value, position: &str, anchor: Option<&str>) -> Value {
    let mut destination = json!({"topic_path": path, "headings": headings, "position": position});
    if let Some(anchor) = anchor {
        destination["anchor_memory_id"] = json!(anchor);
    }
    json!({"op": "create_record", "content": "New fact.", "time": "2024-05", "source_refs": ["D1:9"],
           "destination": destination})
}

const NEW_DEF: &str = "[^new-evidence-record-1]: Time: `2024-05`; Sources: [D1:9](D1:9)";

#[test]
fn parse_reads_every_op_and_the_legacy_aliases() {
    let ops = parse_record_ops(&json!([
        {"op": "create", "content": " A. ", "time": null, "source_refs": ["s/1"], "topic_path": "topics/./a.md",
         "headings": ["A"]},
        {"op": "update", "memory_id": "abc", "content": "B.", "time": "2024-02-29",
         "sources": [{"source": "s/2", "label": "chat"}]},
        {"op": "delete", "memory_id": "abc2"},
        {"op": "move_records", "memory_ids": ["x", "y"],
         "destination": {"topic_path": "topics/b.md", "headings": [], "position": "after", "anchor_memory_id": "z"}},
    ]))
    .expect("valid ops");
    let [
        RecordOp::Create { content, evidence, destination },
        RecordOp::Update { evidence: updated, .. },
        RecordOp::Delete { memory_id },
        RecordOp::Move { memory_ids, destination: moved },
    ] = ops.as_slice()
    else {
        panic!("four ops of the right kinds: {ops:?}");
    };
    assert_eq!(content, "A.");
    assert_eq!(evidence.time, "undated");
    assert_eq!((evidence.sources[0].source.as_str(), evidence.sources[0].label.as_str()), ("s/1", "s/1"));
    assert_eq!(destination.topic_path, "topics/a.md");
    assert_eq!(destination.position, Position::End);
    assert_eq!((updated.sources[0].label.as_str(), updated.time.as_str()), ("chat", "2024-02-29"));
    assert_eq!(memory_id, "abc2");
    assert_eq!(memory_ids, &["x", "y"]);
    assert_eq!(moved.position, Position::After("z".to_owned()));
}

#[test]
fn parse_refuses_bad_shapes_with_the_reference_messages() {
    let delete = json!({"op": "delete_record", "memory_id": "0d9bb518", "why": "cleanup"});
    assert_eq!(parse_error(delete), "memory_changes[0] has unknown field: why");
    let update = |time: Value| json!({"op": "update_record", "memory_id": "a", "content": "x", "time": time, "source_refs": ["s"]});
    assert_eq!(
        parse_error(update(json!("2024-13"))),
        "memory_changes[0].time must be null or YYYY, YYYY-MM, or YYYY-MM-DD"
    );
    assert!(parse_error(update(json!("2023-02-29"))).contains(".time must be"));
    assert!(parse_record_ops(&json!([update(json!("undated"))])).is_ok());
    let no_time = json!({"op": "update_record", "memory_id": "a", "content": "x", "source_refs": ["s"]});
    assert_eq!(parse_error(no_time), "memory_changes[0].time is required");
    let with_id = json!({"op": "create_record", "memory_id": "a", "content": "x", "time": null, "source_refs": ["s"],
                         "destination": {"topic_path": "topics/a.md"}});
    assert_eq!(parse_error(with_id), "memory_changes[0] has unknown field: memory_id");
    assert!(parse_error(json!({"op": "rename", "memory_id": "a"})).contains("not a known operation"));
    assert!(parse_error(json!({"memory_id": "a"})).contains(".op is required"));
}

#[test]
fn parse_refuses_bad_content() {
    let with = |content: &str| json!({"op": "update_record", "memory_id": "a", "content": content, "time": null, "source_refs": ["s"]});
    assert!(parse_error(with("   ")).contains("blank"));
    assert!(parse_error(with("one\n\ntwo")).contains("exactly one paragraph"));
    assert!(parse_error(with("## Title")).contains("heading"));
    assert!(parse_error(with("text\n# Title")).contains("exactly one paragraph"));
    assert!(parse_error(with("cited[^e-1] text")).contains("citations"));
    assert!(parse_error(with("text ^abc123")).contains("block id"));
    assert!(parse_error(with("text ^bad!id")).contains("block id"));
    assert!(parse_record_ops(&json!([with("line one\nline two")])).is_ok());
}

#[test]
fn parse_refuses_bad_sources() {
    let with = |extra: Value| {
        let mut op = json!({"op": "update_record", "memory_id": "a", "content": "x", "time": null});
        for (key, value) in extra.as_object().expect("an object") {
            op[key] = value.clone();
        }
        parse_error(op)
    };
    assert!(with(json!({})).contains("exactly one of source_refs or sources"));
    assert!(with(json!({"source_refs": ["s"], "sources": [{"source": "t", "label": "l"}]})).contains("exactly one"));
    assert!(with(json!({"source_refs": []})).contains("non-empty list"));
    assert!(with(json!({"source_refs": [""]})).contains("source id"));
    assert!(with(json!({"source_refs": ["s", "s"]})).contains("cites a source twice: s"));
    assert!(with(json!({"sources": [{"source": "s", "label": "a"}, {"source": "s", "label": "b"}]})).contains("twice"));
    assert!(with(json!({"sources": [{"source": "s"}]})).contains("label is required"));
    assert!(with(json!({"sources": [{"source": "s", "label": "l", "x": 1}]})).contains("unknown field: x"));
}

#[test]
fn parse_refuses_bad_destinations() {
    let with = |destination: Value| {
        parse_error(json!({"op": "move_records", "memory_ids": ["a"], "destination": destination}))
    };
    assert!(with(json!({"topic_path": "topics/a.md", "position": "before"})).contains("anchor_memory_id is required"));
    assert!(
        with(json!({"topic_path": "topics/a.md", "position": "end", "anchor_memory_id": "b"})).contains("only allowed")
    );
    assert!(with(json!({"topic_path": "topics/a.md", "position": "middle"})).contains("position must be"));
    assert!(with(json!({"topic_path": "topics/a.md", "headings": ["", "x"]})).contains("headings[0]"));
    assert!(with(json!({"topic_path": "topics/a.md", "headings": ["a\nb"]})).contains("single-line"));
    let seven = json!(["1", "2", "3", "4", "5", "6", "7"]);
    assert!(with(json!({"topic_path": "topics/a.md", "headings": seven})).contains("at most 6"));
    assert!(with(json!({"topic_path": "topics/a.md", "side": "x"})).contains("destination has unknown field: side"));
    let error = parse_record_ops(
        &json!([{"op": "move_records", "memory_ids": ["a"], "destination": {"topic_path": "core.md"}}]),
    )
    .expect_err("not a topic path");
    assert_eq!(error.code(), ErrorCode::ReadOnlyPath);
    assert!(
        parse_error(json!({"op": "move_records", "memory_ids": [], "destination": {"topic_path": "topics/a.md"}}))
            .contains("non-empty list")
    );
}

#[test]
fn parse_enforces_the_limits() {
    let delete = json!({"op": "delete_record", "memory_id": "a"});
    let many = Value::Array(vec![delete.clone(); 65]);
    assert!(parse_record_ops(&many).expect_err("too many").message().contains("more than 64"));
    assert!(parse_record_ops(&Value::Array(vec![delete; 64])).is_ok());
    let big = json!([{"op": "update_record", "memory_id": "a", "content": "x".repeat(512_001), "time": null, "source_refs": ["s"]}]);
    assert!(parse_record_ops(&big).expect_err("too big").message().contains("512000 bytes"));
    assert!(parse_record_ops(&json!([])).expect_err("empty").message().contains("must not be empty"));
    assert!(parse_record_ops(&json!({})).expect_err("not a list").message().contains("must be a list"));
}

#[test]
fn create_at_the_end_of_a_section_goes_before_its_first_sub_heading() {
    let (topics, changes) =
        run(&[("topics/pets.md", PETS)], json!([create("topics/pets.md", json!(["Pets", "Cats"]), "end", None)]));
    let want = PETS.replace(
        "[^e-bbbb]: Time: `2024`; Sources: [D1:2](D1:2)\n\n",
        &format!(
            "[^e-bbbb]: Time: `2024`; Sources: [D1:2](D1:2)\n\nNew fact.[^new-evidence-record-1]\n\n{NEW_DEF}\n\n"
        ),
    );
    assert_eq!(text(&topics, "topics/pets.md"), want);
    assert_eq!(changes.declared_sources.iter().collect::<Vec<_>>(), ["D1:9"]);
    assert_eq!(changes.changed.iter().collect::<Vec<_>>(), ["topics/pets.md"]);
    assert!(changes.deleted_ids.is_empty());
}

#[test]
fn create_at_the_start_and_around_anchors() {
    let start =
        run(&[("topics/pets.md", PETS)], json!([create("topics/pets.md", json!(["Pets", "Cats"]), "start", None)])).0;
    assert!(
        text(&start, "topics/pets.md").starts_with(&format!(
            "# Pets\n\n## Cats\n\nNew fact.[^new-evidence-record-1]\n\n{NEW_DEF}\n\nCraig adopted"
        ))
    );
    let after = run(
        &[("topics/pets.md", PETS)],
        json!([create("topics/pets.md", json!(["Pets", "Cats"]), "after", Some("c0c0c0c0"))]),
    )
    .0;
    assert!(
        text(&after, "topics/pets.md")
            .contains(&format!("^c0c0c0c0\n\nNew fact.[^new-evidence-record-1]\n\n{NEW_DEF}\n\nShe is called"))
    );
    let before = run(
        &[("topics/pets.md", PETS)],
        json!([create("topics/pets.md", json!(["Pets", "Dogs"]), "before", Some("f3f3f3f3"))]),
    )
    .0;
    assert!(
        text(&before, "topics/pets.md")
            .contains(&format!("## Dogs\n\nNew fact.[^new-evidence-record-1]\n\n{NEW_DEF}\n\nNo dogs."))
    );
}

#[test]
fn create_makes_missing_headings_and_files() {
    let ops = json!([
        create("topics/pets.md", json!(["Pets", "Cats", "Kittens"]), "end", None),
        create("topics/new/birds.md", json!(["Birds", "Owls"]), "end", None),
        create("topics/plain.md", json!([]), "end", None),
    ]);
    let (topics, changes) = run(&[("topics/pets.md", PETS)], ops);
    let pets = text(&topics, "topics/pets.md");
    assert!(pets.contains(&format!(
        "[^e-bbbb]: Time: `2024`; Sources: [D1:2](D1:2)\n\n### Kittens\n\nNew fact.[^new-evidence-record-1]\n\n{NEW_DEF}\n\n## Dogs"
    )));
    let def2 = "[^new-evidence-record-2]: Time: `2024-05`; Sources: [D1:9](D1:9)";
    assert_eq!(
        text(&topics, "topics/new/birds.md"),
        format!("# Birds\n\n## Owls\n\nNew fact.[^new-evidence-record-2]\n\n{def2}\n")
    );
    let def3 = "[^new-evidence-record-3]: Time: `2024-05`; Sources: [D1:9](D1:9)";
    assert_eq!(text(&topics, "topics/plain.md"), format!("New fact.[^new-evidence-record-3]\n\n{def3}\n"));
    assert_eq!(changes.changed.len(), 3);
}

#[test]
fn create_before_the_first_heading_with_empty_headings() {
    let (topics, _) = run(&[("topics/pets.md", PETS)], json!([create("topics/pets.md", json!([]), "end", None)]));
    assert!(
        text(&topics, "topics/pets.md")
            .starts_with(&format!("New fact.[^new-evidence-record-1]\n\n{NEW_DEF}\n\n# Pets\n"))
    );
}

#[test]
fn create_takes_a_label_no_file_uses() {
    let taken =
        "# A\n\nOld.[^new-evidence-record-1] ^abcdef12\n\n[^new-evidence-record-1]: Time: `2024`; Sources: [s](s)\n";
    let (topics, _) = run(&[("topics/a.md", taken)], json!([create("topics/b.md", json!(["B"]), "end", None)]));
    assert!(text(&topics, "topics/b.md").contains("[^new-evidence-record-2]"));
}

#[test]
fn update_replaces_prose_keeps_ids_and_drops_unshared_definitions() {
    let op = json!({"op": "update_record", "memory_id": "f3f3f3f3", "content": "Two dogs.", "time": "2023",
                    "sources": [{"source": "D1:7", "label": "walk"}]});
    let (topics, changes) = run(&[("topics/pets.md", PETS)], json!([op]));
    let want = PETS.replace(
        "No dogs.[^e-cccc] ^e2e2e2e2 ^f3f3f3f3\n\n[^e-cccc]: Time: `undated`; Sources: [D1:3](D1:3)",
        "Two dogs.[^new-evidence-record-1] ^e2e2e2e2 ^f3f3f3f3\n\n\
         [^new-evidence-record-1]: Time: `2023`; Sources: [walk](D1:7)",
    );
    assert_eq!(text(&topics, "topics/pets.md"), want);
    assert_eq!(changes.declared_sources.iter().collect::<Vec<_>>(), ["D1:7"]);
}

#[test]
fn update_keeps_a_definition_cited_elsewhere() {
    let shared = "# A\n\nOne.[^e-s] ^aaaa1111\n\nTwo.[^e-s] ^bbbb2222\n\n[^e-s]: Time: `2024`; Sources: [s](s)\n";
    let op =
        json!({"op": "update_record", "memory_id": "aaaa1111", "content": "Uno.", "time": null, "source_refs": ["t"]});
    let (topics, _) = run(&[("topics/a.md", shared)], json!([op]));
    assert_eq!(
        text(&topics, "topics/a.md"),
        "# A\n\nUno.[^new-evidence-record-1] ^aaaa1111\n\n\
         [^new-evidence-record-1]: Time: `undated`; Sources: [t](t)\n\n\
         Two.[^e-s] ^bbbb2222\n\n[^e-s]: Time: `2024`; Sources: [s](s)\n"
    );
}

#[test]
fn delete_removes_the_paragraph_and_its_definition() {
    let (topics, changes) = run(&[("topics/pets.md", PETS)], json!([{"op": "delete_record", "memory_id": "c0c0c0c0"}]));
    let want = PETS
        .replace("Craig adopted a cat.[^e-aaaa] ^c0c0c0c0\n\n", "")
        .replace("[^e-aaaa]: Time: `2024-01-02`; Sources: [D1:1](D1:1)\n", "");
    assert_eq!(text(&topics, "topics/pets.md"), want);
    assert_eq!(changes.deleted_ids.iter().collect::<Vec<_>>(), ["c0c0c0c0"]);
}

#[test]
fn delete_of_an_alias_keeps_the_merged_paragraph() {
    let (topics, _) = run(&[("topics/pets.md", PETS)], json!([{"op": "delete", "memory_id": "e2e2e2e2"}]));
    assert_eq!(text(&topics, "topics/pets.md"), PETS.replace(" ^e2e2e2e2 ^f3f3f3f3", " ^f3f3f3f3"));
}

#[test]
fn move_carries_paragraphs_and_definitions_in_order() {
    let ops = json!([{"op": "move_records", "memory_ids": ["e2e2e2e2", "f3f3f3f3", "c0c0c0c0"],
                      "destination": {"topic_path": "topics/zoo.md", "headings": ["Zoo"], "position": "end"}}]);
    let (topics, changes) = run(&[("topics/pets.md", PETS)], ops);
    assert_eq!(
        text(&topics, "topics/zoo.md"),
        "# Zoo\n\nNo dogs.[^e-cccc] ^e2e2e2e2 ^f3f3f3f3\n\n[^e-cccc]: Time: `undated`; Sources: [D1:3](D1:3)\n\n\
         Craig adopted a cat.[^e-aaaa] ^c0c0c0c0\n\n[^e-aaaa]: Time: `2024-01-02`; Sources: [D1:1](D1:1)\n"
    );
    assert_eq!(
        text(&topics, "topics/pets.md"),
        "# Pets\n\n## Cats\n\nShe is called Mochi.[^e-bbbb] ^d1d1d1d1\n\n\
         [^e-bbbb]: Time: `2024`; Sources: [D1:2](D1:2)\n\n## Dogs\n"
    );
    assert_eq!(changes.changed.len(), 2);
}

#[test]
fn move_within_a_file_before_an_anchor() {
    let ops = json!([{"op": "move_records", "memory_ids": ["d1d1d1d1"],
                      "destination": {"topic_path": "topics/pets.md", "headings": ["Pets", "Cats"], "position": "before",
                                      "anchor_memory_id": "c0c0c0c0"}}]);
    let (topics, _) = run(&[("topics/pets.md", PETS)], ops);
    assert_eq!(
        text(&topics, "topics/pets.md"),
        "# Pets\n\n## Cats\n\nShe is called Mochi.[^e-bbbb] ^d1d1d1d1\n\n\
         [^e-bbbb]: Time: `2024`; Sources: [D1:2](D1:2)\n\n\
         Craig adopted a cat.[^e-aaaa] ^c0c0c0c0\n\n\
         [^e-aaaa]: Time: `2024-01-02`; Sources: [D1:1](D1:1)\n\n\
         ## Dogs\n\nNo dogs.[^e-cccc] ^e2e2e2e2 ^f3f3f3f3\n\n\
         [^e-cccc]: Time: `undated`; Sources: [D1:3](D1:3)\n"
    );
}

#[test]
fn moves_run_after_the_other_ops() {
    // The create names the anchor's section as it is before the move; the move then takes the anchor away.
    let ops = json!([
        {"op": "move_records", "memory_ids": ["d1d1d1d1"], "destination": {"topic_path": "topics/pets.md", "headings": ["Pets", "Dogs"], "position": "start"}},
        create("topics/pets.md", json!(["Pets", "Cats"]), "after", Some("c0c0c0c0")),
    ]);
    let (topics, _) = run(&[("topics/pets.md", PETS)], ops);
    let pets = text(&topics, "topics/pets.md");
    assert!(pets.contains("## Dogs\n\nShe is called Mochi.[^e-bbbb] ^d1d1d1d1\n\n[^e-bbbb]"), "{pets}");
    assert!(pets.contains("^c0c0c0c0\n\nNew fact."), "{pets}");
}

#[test]
fn unknown_ids_are_memory_not_found() {
    let files = [("topics/pets.md", PETS)];
    let update =
        json!({"op": "update_record", "memory_id": "nope1234", "content": "x", "time": null, "source_refs": ["s"]});
    assert_eq!(
        refused(&files, json!([update])),
        (ErrorCode::MemoryNotFound, "memory_id does not exist: nope1234".to_owned())
    );
    let moved = json!({"op": "move_records", "memory_ids": ["nope"], "destination": {"topic_path": "topics/x.md"}});
    assert_eq!(refused(&files, json!([moved])).0, ErrorCode::MemoryNotFound);
    let anchored = create("topics/pets.md", json!(["Pets", "Cats"]), "before", Some("nope"));
    assert_eq!(
        refused(&files, json!([anchored])),
        (ErrorCode::MemoryNotFound, "anchor_memory_id does not exist: nope".to_owned())
    );
    // An anchor deleted by an earlier op is gone by the time the create runs.
    let ops = json!([{"op": "delete_record", "memory_id": "c0c0c0c0"}, create("topics/pets.md", json!(["Pets", "Cats"]), "after", Some("c0c0c0c0"))]);
    assert_eq!(refused(&files, ops).0, ErrorCode::MemoryNotFound);
}

#[test]
fn every_refusal_is_invalid_argument() {
    let files = [
        ("topics/pets.md", PETS),
        ("topics/other.md", "# Other\n\nX.[^e-aaaa] ^99999999\n\n[^e-aaaa]: Time: `2020`; Sources: [z](z)\n"),
    ];
    let update =
        |id: &str| json!({"op": "update_record", "memory_id": id, "content": "x", "time": null, "source_refs": ["s"]});
    let delete = |id: &str| json!({"op": "delete_record", "memory_id": id});
    let mv = |ids: Value, path: &str| json!({"op": "move_records", "memory_ids": ids, "destination": {"topic_path": path, "headings": ["Pets", "Cats"], "position": "end"}});
    let cases = [
        (json!([update("c0c0c0c0"), delete("c0c0c0c0")]), "memory_id is targeted twice: c0c0c0c0"),
        (
            json!([update("e2e2e2e2"), update("f3f3f3f3")]),
            "two updates target one merged paragraph: e2e2e2e2, f3f3f3f3",
        ),
        (
            json!([delete("c0c0c0c0"), mv(json!(["c0c0c0c0"]), "topics/x.md")]),
            "memory_id is both deleted and moved: c0c0c0c0",
        ),
        (
            json!([mv(json!(["c0c0c0c0"]), "topics/x.md"), mv(json!(["c0c0c0c0"]), "topics/y.md")]),
            "memory_id is moved twice: c0c0c0c0",
        ),
        (json!([mv(json!(["c0c0c0c0", "c0c0c0c0"]), "topics/x.md")]), "memory_id is moved twice: c0c0c0c0"),
        (
            json!([mv(json!(["f3f3f3f3"]), "topics/x.md")]),
            "move_records must move every id of a merged paragraph, in its order: e2e2e2e2, f3f3f3f3",
        ),
        (
            json!([mv(json!(["f3f3f3f3", "e2e2e2e2"]), "topics/x.md")]),
            "move_records must move every id of a merged paragraph, in its order: e2e2e2e2, f3f3f3f3",
        ),
        (
            json!([
                mv(json!(["c0c0c0c0"]), "topics/x.md"),
                create("topics/pets.md", json!(["Pets", "Cats"]), "after", Some("c0c0c0c0"))
            ]),
            "anchor_memory_id is itself moved: c0c0c0c0",
        ),
        (
            json!([create("topics/other.md", json!(["Other"]), "after", Some("c0c0c0c0"))]),
            "anchor_memory_id c0c0c0c0 is not in topics/other.md",
        ),
        (
            json!([create("topics/pets.md", json!(["Pets", "Dogs"]), "after", Some("c0c0c0c0"))]),
            "anchor_memory_id c0c0c0c0 is not under the destination headings",
        ),
        (
            json!([mv(json!(["99999999"]), "topics/pets.md")]),
            "footnote label e-aaaa conflicts with an existing definition in topics/pets.md",
        ),
    ];
    for (ops, message) in cases {
        assert_eq!(refused(&files, ops), (ErrorCode::InvalidArgument, message.to_owned()));
    }
}

#[test]
fn files_outside_topics_are_not_searched_or_touched() {
    let files = [("sources/D1.md", "Looks like a record. ^c0c0c0c0\n"), ("topics/pets.md", PETS)];
    let (topics, changes) = run(&files, json!([{"op": "delete_record", "memory_id": "c0c0c0c0"}]));
    assert_eq!(text(&topics, "sources/D1.md"), "Looks like a record. ^c0c0c0c0\n");
    assert!(!text(&topics, "topics/pets.md").contains("c0c0c0c0"));
    assert_eq!(changes.changed.iter().collect::<Vec<_>>(), ["topics/pets.md"]);
}

#[test]
fn a_topic_file_that_is_not_utf8_is_invalid_topic_format() {
    let mut topics = BTreeMap::from([("topics/bad.md".to_owned(), vec![0xff, 0xfe])]);
    let ops = parse_record_ops(&json!([{"op": "delete_record", "memory_id": "x"}])).expect("valid");
    let error = apply_record_ops(&ops, &mut topics).expect_err("not UTF-8");
    assert_eq!((error.code(), error.path()), (ErrorCode::InvalidTopicFormat, Some("topics/bad.md")));
}
