//! `memory_update` and `memory_promote` through the tool registry of a real
//! `LocalBackend` on copies of the reference-written `tx-base` workspace: installs, every
//! §4.5 rejection with nothing on disk changed, the paired append-only rule, authority
//! that only the caller (never the payload) carries, the tier gate, promotion, the cap.

use scriptorium_backend_api::{Caller, Tier};
use serde_json::{Value, json};

use crate::support::{Fixture, ModelServer, TestResult, cited_topic, code, files, frame_meta, text, tool_call};

const PREFS: &str = "topics/prefs.md";
const TRUSTED: &str = "openprogram/sess-7f2a/m4";
const PENDING: &str = "telegram/group-100/g1";
const GROUP: &str = "sources/telegram/_v2/group-100.md";
const AUDIT: &str = ".scriptorium/trust-audit.jsonl";

fn owner() -> Caller {
    Caller::local_owner("s1/t1")
}

fn paired() -> Caller {
    Caller::paired("telegram:42", "telegram/42", "Dave", "s2/t3")
}

fn create_record(path: &str, content: &str, source: &str) -> Value {
    json!({"memory_changes": [{
        "op": "create_record", "content": content, "time": "2024-05-01",
        "sources": [{"source": source, "label": "drinks"}],
        "destination": {"topic_path": path, "headings": ["Drinks"], "position": "end"}}]})
}

fn evidence(label: &str, content: &str) -> Value {
    json!([{"label": label, "role": "user", "content": content}])
}

/// `fields` must be refused with `expected`, leaving every byte and the revision as they were.
fn refused(fx: &Fixture, fields: Value, caller: &Caller, expected: &str) -> Result<Value, Box<dyn std::error::Error>> {
    let before = files(&fx.memory())?;
    let revision = fx.revision()?;
    let answer = fx.update(fields, caller)?;
    assert_eq!(code(&answer), Some(expected), "{answer}");
    assert_eq!(files(&fx.memory())?, before, "a refused update changed a file");
    assert_eq!(fx.revision()?, revision);
    Ok(answer)
}

#[test]
fn an_owner_update_installs_and_moves_the_revision() -> TestResult {
    let fx = Fixture::tx_base("owner-update")?;
    let before = fx.revision()?;
    let mut fields = create_record("topics/drinks.md", "Craig likes oolong.", TRUSTED);
    fields["base_revision"] = json!(before);
    let (output, answer) = fx.call("memory_update", &fields, &owner());
    assert_eq!(answer["ok"], true, "{output}");
    assert!(output.contains("\n  \"revision\""), "pretty JSON: {output}");
    assert_ne!(answer["revision"], json!(before));
    assert_eq!(answer["revision"], json!(fx.revision()?));
    assert!(answer["changed_files"].as_array().is_some_and(|files| files.contains(&json!("topics/drinks.md"))));
    assert_eq!(answer["memory_committed"], true);
    assert!(answer["block_ids"].as_object().is_some_and(|ids| ids.len() == 1), "{output}");
    assert!(fx.read("topics/drinks.md").contains("Craig likes oolong."));

    // The owner is not append-only: a rewrite of existing prose installs.
    let rewrite = json!({"memory_changes": [{"op": "update_record", "memory_id": "0d9bb518",
        "content": "Craig prefers black tea now.", "time": "2024-05-02",
        "sources": [{"source": TRUSTED, "label": "tea"}]}]});
    let answer = fx.update(rewrite, &owner())?;
    assert_eq!(answer["ok"], true, "{answer}");
    let prefs = fx.read(PREFS);
    assert!(prefs.contains("Craig prefers black tea now.") && !prefs.contains("green tea"), "{prefs}");
    Ok(())
}

#[test]
fn a_stale_base_revision_is_a_concurrent_update_with_both_revisions() -> TestResult {
    let fx = Fixture::tx_base("stale")?;
    let before = files(&fx.memory())?;
    let mut fields = create_record("topics/drinks.md", "Craig likes oolong.", TRUSTED);
    fields["base_revision"] = json!("0123456789abcdef0123456789abcdef");
    let (_, answer) = fx.call("memory_update", &fields, &owner());
    assert_eq!(code(&answer), Some("CONCURRENT_UPDATE"), "{answer}");
    assert_eq!(answer["error"]["details"]["base_revision"], "0123456789abcdef0123456789abcdef");
    assert_eq!(answer["error"]["details"]["revision"], json!(fx.revision()?));
    assert_eq!(files(&fx.memory())?, before);
    Ok(())
}

#[test]
fn every_rejection_code_is_reachable_and_changes_nothing() -> TestResult {
    let fx = Fixture::tx_base("codes")?;
    let write = |path: &str, content: &str| json!({"changes": [{"path": path, "action": "write", "content": content}]});
    let cited = "# T\n\nA fact.[^e1]\n\n[^e1]: Time: `2024`; Sources: [x](new-source-b)\n";
    let cases = [
        (json!({"patch": "x", "changes": []}), "INVALID_ARGUMENT"),
        (json!({"changes": [{"path": PREFS, "action": "move"}]}), "INVALID_ARGUMENT"),
        (json!({"changes": [{"path": "topics/nope.md", "action": "delete"}]}), "PATCH_CONFLICT"),
        (
            json!({"patch": "--- a/topics/prefs.md\n+++ b/topics/prefs.md\n@@ -1 +1 @@\n-# Nope\n+# Prefs\n"}),
            "PATCH_CONFLICT",
        ),
        (write("core.md", "# Core\n"), "READ_ONLY_PATH"),
        (write("sources/x.md", "x\n"), "READ_ONLY_PATH"),
        (write("../outside.md", "# X\n"), "PATH_OUTSIDE_WORKSPACE"),
        (write("/etc/passwd.md", "# X\n"), "PATH_OUTSIDE_WORKSPACE"),
        (write("topics/t.md", cited), "MISSING_SOURCE"),
        (json!({"memory_changes": [{"op": "delete_record", "memory_id": "deadbeef"}]}), "MEMORY_NOT_FOUND"),
        (write("topics/t.md", "# T\n\nA claim.[^x]\n"), "INVALID_TOPIC_FORMAT"),
        (create_record("topics/hi.md", "Someone said hi.", PENDING), "INVALID_TOPIC_FORMAT"),
    ];
    for (fields, expected) in cases {
        refused(&fx, fields, &owner(), expected)?;
    }
    // Missing base_revision is the caller's mistake, not a concurrent update.
    let (_, answer) = fx.call("memory_update", &create_record("topics/d.md", "x", TRUSTED), &owner());
    assert_eq!(code(&answer), Some("INVALID_ARGUMENT"), "{answer}");
    let (_, answer) = fx.call("memory_update", &json!("not an object"), &owner());
    assert_eq!(code(&answer), Some("INVALID_ARGUMENT"), "{answer}");

    // Evidence needs the runtime's record of the turn; an owner-tier caller without one has none.
    let mut fields = write("topics/t.md", cited);
    fields["sources"] = evidence("new-source-b", "A fact.");
    refused(&fx, fields, &Caller::with_tier(Some(Tier::Owner)), "WRITER_PRECONDITION_FAILED")?;
    Ok(())
}

#[test]
fn a_rejection_carries_the_transactions_details() -> TestResult {
    let fx = Fixture::tx_base("details")?;
    let fields = json!({"changes": [{"path": "topics/t.md", "action": "write", "content": "# T\n\nA claim.[^x]\n"}]});
    let answer = refused(&fx, fields, &owner(), "INVALID_TOPIC_FORMAT")?;
    let violations = answer["error"]["details"]["violations"].as_array().cloned().unwrap_or_default();
    assert!(!violations.is_empty(), "{answer}");
    assert_eq!(answer["error"]["path"], "topics/t.md");
    Ok(())
}

#[test]
fn a_paired_caller_may_append_but_never_rewrite_or_delete() -> TestResult {
    let fx = Fixture::tx_base("paired")?;
    let old = fx.read(PREFS);
    let rewrite =
        json!({"changes": [{"path": PREFS, "action": "write", "content": old.replace("green tea", "black tea")}]});
    let answer = refused(&fx, rewrite, &paired(), "APPEND_ONLY_REQUIRED")?;
    assert_eq!(answer["error"]["path"], PREFS);
    refused(&fx, json!({"changes": [{"path": PREFS, "action": "delete"}]}), &paired(), "APPEND_ONLY_REQUIRED")?;
    refused(
        &fx,
        json!({"memory_changes": [{"op": "delete_record", "memory_id": "0d9bb518"}]}),
        &paired(),
        "APPEND_ONLY_REQUIRED",
    )?;
    let update = json!({"memory_changes": [{"op": "update_record", "memory_id": "0d9bb518",
        "content": "Craig prefers coffee.", "time": null, "sources": [{"source": TRUSTED, "label": "tea"}]}]});
    refused(&fx, update, &paired(), "APPEND_ONLY_REQUIRED")?;

    // A new paragraph at the end of an existing file, with the caller's own evidence.
    let appended = format!(
        "{old}\nDave says Craig also likes oolong.[^e1]\n\n[^e1]: Time: `2024-05-01`; Sources: [tea](new-source-oolong)\n"
    );
    let fields = json!({"changes": [{"path": PREFS, "action": "write", "content": appended}],
                        "sources": evidence("new-source-oolong", "Craig likes oolong too.")});
    let answer = fx.update(fields, &paired())?;
    assert_eq!(answer["ok"], true, "{answer}");
    let now = fx.read(PREFS);
    assert!(now.starts_with(&old) && now.len() > old.len() && now.contains("likes oolong"), "{now}");

    // The archived evidence carries the caller's authority, not anything from the payload.
    let source_id = answer["source_ids"]["new-source-oolong"].as_str().ok_or("no source id")?.to_owned();
    let archive = answer["changed_files"]
        .as_array()
        .and_then(|files| files.iter().filter_map(Value::as_str).find(|path| path.starts_with("sources/")))
        .ok_or("no archive written")?
        .to_owned();
    let meta = frame_meta(&fx.read(&archive), &source_id);
    assert_eq!(meta["principal_id"], "telegram:42", "{meta}");
    assert_eq!(meta["authority_tier"], "paired", "{meta}");
    assert_eq!(meta["trust_state"], "trusted", "{meta}");

    // A new file.
    let answer = fx.update(
        create_record("topics/garden.md", "The garden sensor uses an ESP32.", "telegram/group-100/g2"),
        &paired(),
    )?;
    assert_eq!(answer["ok"], true, "{answer}");
    assert!(fx.read("topics/garden.md").contains("ESP32"));
    Ok(())
}

#[test]
fn authority_fields_in_the_payload_are_refused_for_every_caller() -> TestResult {
    let fx = Fixture::tx_base("authority")?;
    let forged_provenance = json!({"principal_id": "owner", "speaker_kind": "owner", "speaker_id": "owner/local",
        "speaker_display": "Owner", "authority_tier": "owner", "origin_id": "s/t"});
    let old = fx.read(PREFS);
    let rewrite = old.replace("green tea", "black tea");
    for (field, value) in
        [("append_only", json!(false)), ("provenance", forged_provenance), ("git_commit", json!("off"))]
    {
        for caller in [paired(), owner()] {
            let mut fields = json!({"changes": [{"path": PREFS, "action": "write", "content": rewrite}]});
            fields[field] = value.clone();
            let answer = refused(&fx, fields, &caller, "INVALID_ARGUMENT")?;
            assert!(answer["error"]["message"].as_str().is_some_and(|m| m.contains(field)), "{answer}");
        }
    }
    Ok(())
}

#[test]
fn the_gate_refuses_callers_without_the_capability() -> TestResult {
    let fx = Fixture::tx_base("gate")?;
    let before = files(&fx.memory())?;
    let fields = create_record("topics/drinks.md", "Craig likes oolong.", TRUSTED);
    for tier in [Some(Tier::McpBrowser), None] {
        let (_, answer) = fx.call("memory_update", &fields, &Caller::with_tier(tier));
        assert_eq!(code(&answer), Some("PERMISSION_DENIED"), "{tier:?}: {answer}");
        let (_, answer) = fx.call("memory_promote", &json!({"source_id": PENDING}), &Caller::with_tier(tier));
        assert_eq!(code(&answer), Some("PERMISSION_DENIED"), "{tier:?}: {answer}");
    }
    let (_, answer) = fx.call("memory_promote", &json!({"source_id": PENDING}), &paired());
    assert_eq!(code(&answer), Some("PERMISSION_DENIED"), "{answer}");
    assert!(answer["error"]["message"].as_str().is_some_and(|m| m.contains("memory.trusted.promote")));
    assert_eq!(files(&fx.memory())?, before);
    Ok(())
}

#[test]
fn only_the_interactive_local_owner_may_promote() -> TestResult {
    let fx = Fixture::tx_base("promote-authority")?;
    let before = files(&fx.memory())?;
    let mut remote = owner();
    remote.principal_id = "telegram:42".to_owned();
    let mut unattended = owner();
    unattended.interactive = false;
    let mut runtime = owner();
    runtime.speaker_kind = "runtime".to_owned();
    // The owner tier without its recorded identity (a remote or reconstructed turn).
    let bare = Caller::with_tier(Some(Tier::Owner));
    for caller in [remote, unattended, runtime, bare] {
        let (output, answer) = fx.call("memory_promote", &json!({"source_id": PENDING}), &caller);
        assert_eq!(answer["ok"], false, "{output}");
        let error = answer["error"].as_str().ok_or("the error is a string, not an object")?;
        assert!(error.starts_with("only the local owner"), "{error}");
    }
    assert_eq!(files(&fx.memory())?, before);
    assert!(!fx.memory().join(AUDIT).exists());

    let (output, _) = fx.call("memory_promote", &json!({"source_id": "  "}), &owner());
    assert!(!output.starts_with('{') && output.contains("source_id"), "a blank id is a notice: {output}");
    let (_, answer) = fx.call("memory_promote", &json!({"source_id": 7}), &owner());
    assert!(answer["error"].is_string(), "{answer}");
    let (_, answer) = fx.call("memory_promote", &json!({"source_id": "telegram/group-100/nope"}), &owner());
    assert_eq!(code(&answer), Some("MEMORY_NOT_FOUND"), "{answer}");
    assert_eq!(files(&fx.memory())?, before);
    Ok(())
}

#[test]
fn the_owner_promotes_a_pending_source_once_and_it_is_distilled() -> TestResult {
    let topic = cited_topic("Work", "Zed says Craig is quitting his job.", PENDING);
    let server = ModelServer::start(vec![
        tool_call("Write", &json!({"file_path": "topics/work.md", "content": topic})),
        text("Distilled the promoted source."),
    ]);
    let fx = Fixture::with_config("promote", server.config())?;
    let archive_before = fx.read(GROUP);
    assert_eq!(frame_meta(&archive_before, PENDING)["trust_state"], "pending");

    let (output, answer) = fx.call("memory_promote", &json!({"source_id": PENDING}), &owner());
    assert!(output.contains("\n  \"promoted\""), "pretty JSON: {output}");
    assert_eq!(answer["source_id"], PENDING);
    assert_eq!(answer["promoted"], true, "{output}");
    assert_eq!(answer["trust_state"], "trusted");
    assert_eq!(answer["distilled"], true, "{output}");
    assert_eq!(answer["changed_files"], json!(["topics/work.md"]));
    assert!(fx.read("topics/work.md").contains("quitting his job"));

    // Only that frame's meta line was rewritten.
    let archive = fx.read(GROUP);
    assert_eq!(frame_meta(&archive, PENDING)["trust_state"], "trusted");
    let changed: Vec<(&str, &str)> =
        archive_before.lines().zip(archive.lines()).filter(|(before, after)| before != after).collect();
    assert_eq!(changed.len(), 1, "{changed:?}");
    assert!(changed.iter().all(|(line, _)| line.starts_with("<!-- source-meta:")));
    assert_eq!(archive_before.lines().count(), archive.lines().count());
    let audit = fx.read(AUDIT);
    assert_eq!(audit.lines().count(), 1, "{audit}");
    let line: Value = serde_json::from_str(audit.lines().next().unwrap_or_default())?;
    assert_eq!((line["action"].as_str(), line["source_id"].as_str()), (Some("promote"), Some(PENDING)));
    assert_eq!(line["principal_id"], "owner");

    // Trusted already: nothing is rewritten and a cited source is not distilled again.
    let (output, answer) = fx.call("memory_promote", &json!({"source_id": PENDING}), &owner());
    assert_eq!(answer["promoted"], false, "{output}");
    assert_eq!(answer["distilled"], true, "{output}");
    assert_eq!(fx.read(AUDIT).lines().count(), 1);
    assert_eq!(server.served(), 2, "the model ran once");
    Ok(())
}

#[test]
fn a_promotion_whose_distillation_cannot_run_says_the_source_is_trusted() -> TestResult {
    let fx = Fixture::tx_base("promote-no-model")?;
    let (output, answer) = fx.call("memory_promote", &json!({"source_id": PENDING}), &owner());
    assert_eq!(code(&answer), Some("WRITER_PRECONDITION_FAILED"), "{output}");
    assert_eq!(answer["error"]["details"]["trust_state"], "trusted");
    assert_eq!(answer["error"]["details"]["distilled"], false);
    assert_eq!(frame_meta(&fx.read(GROUP), PENDING)["trust_state"], "trusted");
    Ok(())
}

#[test]
fn the_update_answer_is_capped_at_8000_characters() -> TestResult {
    let fx = Fixture::tx_base("cap")?;
    let body: String = (0..400).map(|n| format!("Claim number {n}.[^missing{n}]\n\n")).collect();
    let fields =
        json!({"changes": [{"path": "topics/many.md", "action": "write", "content": format!("# Many\n\n{body}")}]});
    let before = files(&fx.memory())?;
    let mut fields = fields;
    fields["base_revision"] = json!(fx.revision()?);
    let (output, _) = fx.call("memory_update", &fields, &owner());
    assert!(output.contains(r#""code":"INVALID_TOPIC_FORMAT""#), "{}", &output[..200.min(output.len())]);
    assert_eq!(output.chars().count(), 8000);
    assert_eq!(files(&fx.memory())?, before);
    Ok(())
}

/// Decision 11: the rule is judged on the bytes that would be installed. A paired write
/// whose raw text re-spaces the existing paragraph and drops the backticks of its date is
/// not a byte-wise append, but normalization renders the existing bytes back exactly, so
/// the installed file is the old bytes followed by new ones and it installs.
#[test]
fn append_only_is_judged_after_normalization() -> TestResult {
    let fx = Fixture::tx_base("normalized-append")?;
    let old = fx.read(PREFS);
    let respaced = old.replace("coffee.[^e", "coffee. [^e").replace("`2024-03-16`", "2024-03-16");
    assert!(!respaced.starts_with(&old));
    let content = format!(
        "{respaced}\nDave says Craig also likes oolong.[^e1]\n\n[^e1]: Time: `2024-05-01`; Sources: [tea](new-source-oolong)\n"
    );
    let fields = json!({"changes": [{"path": PREFS, "action": "write", "content": content}],
                        "sources": evidence("new-source-oolong", "Craig likes oolong too.")});
    let answer = fx.update(fields, &paired())?;
    assert_eq!(answer["ok"], true, "{answer}");
    let now = fx.read(PREFS);
    assert!(now.starts_with(&old) && now.contains("likes oolong"), "{now}");
    Ok(())
}

fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value.as_object().map(|map| map.keys().map(String::as_str).collect()).unwrap_or_default();
    keys.sort_unstable();
    keys
}

#[test]
fn the_write_tools_declare_the_specs_schemas() -> TestResult {
    let update = scriptorium_backend_api::tools::tool("memory_update").ok_or("memory_update is registered")?;
    assert_eq!((update.max_chars, update.capability.as_str()), (8000, "memory.source.append"));
    assert!(update.description.contains("memory_changes") && update.description.contains("remember this now"));
    let schema: Value = serde_json::from_str(update.input_schema)?;
    assert_eq!(schema["required"], json!(["base_revision"]));
    let properties = &schema["properties"];
    assert_eq!(keys(properties), ["base_revision", "changes", "commit_message", "memory_changes", "patch", "sources"]);
    assert_eq!(keys(&properties["changes"]["items"]["properties"]), ["action", "content", "path"]);
    assert_eq!(properties["changes"]["items"]["properties"]["action"]["enum"], json!(["write", "delete"]));
    let change = &properties["memory_changes"]["items"]["properties"];
    assert_eq!(keys(change), ["content", "destination", "memory_id", "memory_ids", "op", "sources", "time"]);
    assert_eq!(keys(&change["destination"]["properties"]), ["anchor_memory_id", "headings", "position", "topic_path"]);
    assert_eq!(change["time"]["type"], "string");
    assert_eq!(keys(&change["sources"]["items"]["properties"]), ["label", "source"]);
    let label = change["sources"]["items"]["properties"]["label"]["description"].as_str().unwrap_or_default();
    assert!(label.contains("8 CJK") && label.contains("6 English words"), "{label}");
    assert_eq!(keys(&properties["sources"]["items"]["properties"]), ["content", "label", "observed_at", "role"]);

    let promote = scriptorium_backend_api::tools::tool("memory_promote").ok_or("memory_promote is registered")?;
    assert_eq!((promote.max_chars, promote.capability.as_str()), (8000, "memory.trusted.promote"));
    let schema: Value = serde_json::from_str(promote.input_schema)?;
    assert_eq!(keys(&schema["properties"]), ["source_id"]);
    assert_eq!(schema["required"], json!(["source_id"]));
    Ok(())
}

/// A record dated on 300 days touches 300 timeline files: listing every one would pass the
/// cap, and a cut result is no longer JSON. The result stays JSON, keeps the topic file and
/// counts what it left out.
#[test]
fn a_long_result_stays_json_within_the_cap() -> TestResult {
    let fx = Fixture::tx_base("long-result")?;
    let (mut paragraphs, mut definitions) = (String::new(), String::new());
    for paragraph in 0..30 {
        paragraphs.push_str(&format!("Sensor reading {paragraph} was normal."));
        for citation in 0..10 {
            let n = paragraph * 10 + citation;
            let date = format!("{}-{:02}-{:02}", 1990 + n / 12, n % 12 + 1, n % 28 + 1);
            paragraphs.push_str(&format!("[^e{n}]"));
            definitions.push_str(&format!("[^e{n}]: Time: `{date}`; Sources: [garden](new-source-g)\n"));
        }
        paragraphs.push_str("\n\n");
    }
    let content = format!("# Garden\n\n{paragraphs}{definitions}");
    let mut fields = json!({"changes": [{"path": "topics/garden.md", "action": "write", "content": content}],
                            "sources": evidence("new-source-g", "The sensors read normal every day.")});
    fields["base_revision"] = json!(fx.revision()?);
    let (output, answer) = fx.call("memory_update", &fields, &owner());
    assert!(output.chars().count() <= 8000, "{}", output.chars().count());
    assert_eq!(answer["ok"], true, "still JSON: {}", &output[..300.min(output.len())]);
    assert_eq!(answer["revision"], json!(fx.revision()?));
    let omitted = answer["changed_files_omitted"].as_u64().ok_or("the omission is counted")?;
    let listed: Vec<&str> =
        answer["changed_files"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    assert!(omitted > 0 && listed.contains(&"topics/garden.md"), "{omitted} omitted, listed {listed:?}");
    assert!(listed.iter().any(|path| path.starts_with("sources/")), "{listed:?}");
    assert_eq!(answer["block_ids"].as_object().map(|ids| ids.len()), Some(30));
    Ok(())
}
