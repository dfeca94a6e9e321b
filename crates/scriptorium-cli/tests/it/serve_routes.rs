//! `scriptorium serve`: every route's happy path and its error statuses, against the real
//! binary on a copy of the example workspace.

use serde_json::{Value, json};

use crate::serve_client::{BoxError, Server, tree_hash};
use crate::{TempDir, copy_tree, example_workspace};

type Result<T = ()> = std::result::Result<T, BoxError>;

/// A handle a citation of the example workspace links.
pub(crate) const HANDLE: &str = "../../sources/openprogram/_v2/sess-garden.md#source-87bc8264ecf1eb77";

/// A new topic citing a trusted source of the example workspace.
pub(crate) fn herbs(claim: &str) -> String {
    format!(
        "# Herbs\n\n{claim}[^e-c7eb913ad2]\n\n[^e-c7eb913ad2]: Time: `2026-03-14`; Sources: [openprogram/sess-garden/g1](../../sources/openprogram/_v2/sess-garden.md#source-87bc8264ecf1eb77)\n"
    )
}

/// A served copy of the example workspace.
pub(crate) fn example_server(dir: &TempDir, extra: &[&str]) -> Result<Server> {
    let ws = dir.path().join("memory");
    copy_tree(&example_workspace(), &ws)?;
    Server::start(&ws, extra, &[])
}

#[test]
fn reads_answer_in_their_documented_shapes() -> Result {
    let dir = TempDir::new()?;
    let server = example_server(&dir, &[])?;

    let status = server.get("/api/memory/status")?;
    assert_eq!(status.status, 200, "{}", status.text());
    let body = status.json();
    assert_eq!(body["topic_files"], 2);
    assert_eq!(body["source_files"], 3);
    assert!(body["revision"].as_str().is_some_and(|r| r.len() == 32), "{body}");
    assert_eq!(body["workspace_path"], json!(server.workspace.display().to_string()));
    let settings = server.get("/api/memory/status?settings=true")?.json();
    assert_eq!(
        settings,
        json!({"workspace_path": server.workspace.display().to_string(), "embedding_available": false})
    );

    let topics = server.get("/api/memory/topics")?.json();
    let paths: Vec<&str> = topics.as_array().ok_or("list")?.iter().filter_map(|t| t["path"].as_str()).collect();
    assert_eq!(paths, ["garden/raised-bed.md", "people/book-club.md"]);
    assert_eq!(topics[0]["title"], "Raised bed");
    assert_eq!(topics[0]["type"], "garden");
    assert!(topics[0]["size"].as_u64().is_some_and(|s| s > 0) && topics[0]["mtime"].as_f64().is_some());

    let topic = server.get("/api/memory/topics/garden/raised-bed.md")?;
    assert_eq!(topic.status, 200);
    assert_eq!(topic.json()["path"], "garden/raised-bed.md");
    let on_disk = std::fs::read_to_string(server.workspace.join("topics/garden/raised-bed.md"))?;
    assert_eq!(topic.json()["content"], json!(on_disk));
    let missing = server.get("/api/memory/topics/garden/none.md")?;
    assert_eq!((missing.status, missing.json()["error"].clone()), (404, json!("not found")));

    let refs = server.get("/api/memory/refs?q=TOMATOES")?.json();
    let rows = refs.as_array().ok_or("refs")?;
    assert_eq!(rows.len(), 2, "{refs}");
    assert!(rows.iter().all(|row| row["topic_path"] == "garden/raised-bed.md" && row["memory_id"].is_string()));
    assert_eq!(server.get("/api/memory/refs?q=tomatoes&limit=1")?.json().as_array().map(Vec::len), Some(1));
    assert_eq!(server.get("/api/memory/refs?limit=many")?.status, 400);

    let recent = server.get("/api/memory/recent")?;
    assert_eq!(recent.status, 200);
    assert_eq!(recent.headers.get("x-memory-recent-limit").map(String::as_str), Some("50"));
    assert!(recent.json().is_array());
    assert!(server.get("/api/memory/timeline")?.json().is_array());
    let day = server.get("/api/memory/timeline/2026-03-14")?;
    assert_eq!((day.status, day.json()["date"].clone()), (200, json!("2026-03-14")));
    assert_eq!(server.get("/api/memory/timeline/2026-13-01")?.status, 403);
    assert_eq!(server.get("/api/memory/timeline/..%2F..%2Fx")?.status, 403);

    let core = server.get("/api/memory/core")?.json();
    assert_eq!(core["injection_enabled"], true);
    assert_eq!(core["budget_tokens"], 2000);

    let context = server.get("/api/memory/context")?.json();
    assert!(context["system_prompt"].is_string());
    let recall = server.get("/api/memory/recall?q=tomatoes%20watered")?.json();
    let text = recall["recall"].as_str().ok_or("recall")?;
    assert!(text.starts_with("<memory-context>") && text.contains("two litres"), "{text}");
    assert_eq!(server.get("/api/memory/recall")?.status, 400);

    let install = server.call("POST", "/api/memory/embedding/install", None)?;
    assert_eq!(install.status, 502);
    assert_eq!(install.json()["embedding_available"], false);
    assert_eq!(install.code().as_deref(), Some("EMBEDDING_UNAVAILABLE"));

    let doc = server.get("/api/openapi.json")?;
    assert_eq!(doc.status, 200);
    let doc = doc.json();
    assert_eq!(doc["openapi"], "3.1.0");
    // Every documented route answers with something other than "no such route".
    for (path, item) in doc["paths"].as_object().ok_or("paths")? {
        for method in item.as_object().ok_or("item")?.keys() {
            let target = path
                .replace("{path}", "garden/none.md")
                .replace("{date}", "2026")
                .replace("{id}", "s-openapi")
                .replace("{name}", "memory_status");
            let body = (method != "get" && method != "delete").then(|| json!({}));
            let reply = server.call(&method.to_uppercase(), &target, body.as_ref())?;
            // A route that is missing answers in the route guard's shape; a missing file does not.
            assert_ne!(reply.json()["detail"]["code"], "CLI_HTTP_NOT_FOUND", "{method} {target}: {}", reply.text());
            assert_ne!(reply.status, 405, "{method} {target}");
        }
    }

    let page = server.get("/")?;
    assert_eq!(page.status, 200);
    assert!(page.headers.get("content-type").is_some_and(|t| t.starts_with("text/html")));
    assert!(page.text().contains("/api/openapi.json"));
    assert_eq!(server.get("/assets/style.css")?.status, 200);

    let unknown = server.get("/api/nothing")?;
    assert_eq!((unknown.status, unknown.code().as_deref()), (404, Some("CLI_HTTP_NOT_FOUND")));
    let wrong_method = server.call("DELETE", "/api/memory/status", None)?;
    assert_eq!((wrong_method.status, wrong_method.code().as_deref()), (405, Some("CLI_HTTP_METHOD_NOT_ALLOWED")));
    Ok(())
}

#[test]
fn hand_edits_history_diff_restore_and_validate() -> Result {
    let dir = TempDir::new()?;
    let server = example_server(&dir, &[])?;

    let put = server.call(
        "PUT",
        "/api/memory/topics/garden/herbs.md",
        Some(&json!({"content": herbs("Basil grows between the tomatoes.")})),
    )?;
    assert_eq!(put.status, 200, "{}", put.text());
    assert_eq!(put.json()["ok"], true);
    let first =
        server.get("/api/memory/topics/garden/herbs.md")?.json()["content"].as_str().ok_or("content")?.to_owned();
    assert!(first.contains("Basil grows between the tomatoes."), "{first}");

    let second_text = first.replace("Basil grows", "Basil thrives");
    let put = server.call("PUT", "/api/memory/topics/garden/herbs.md", Some(&json!({"content": second_text})))?;
    assert_eq!(put.status, 200, "{}", put.text());

    let history = server.get("/api/memory/history?path=topics/garden/herbs.md")?.json();
    let entries = history.as_array().ok_or("history")?;
    assert_eq!(entries.len(), 2, "{history}");
    assert!(entries.iter().all(|e| e["commit"].as_str().is_some_and(|c| c.len() == 40) && e["time"].is_i64()));
    let (newest, oldest) = (entries[0]["commit"].as_str().ok_or("id")?, entries[1]["commit"].as_str().ok_or("id")?);

    let diff = server.get(&format!("/api/memory/diff?path=topics/garden/herbs.md&commit={newest}"))?;
    assert_eq!(diff.status, 200, "{}", diff.text());
    let text = diff.json()["diff"].as_str().ok_or("diff")?.to_owned();
    assert!(text.contains("-Basil grows") && text.contains("+Basil thrives"), "{text}");
    assert_eq!(diff.json()["parent"].as_str().map(str::len), Some(40));
    let no_commit =
        server.get("/api/memory/diff?path=topics/garden/herbs.md&commit=0000000000000000000000000000000000000000")?;
    assert_eq!((no_commit.status, no_commit.code().as_deref()), (404, Some("MEMORY_NOT_FOUND")));
    assert_eq!(server.get("/api/memory/diff?path=topics/garden/herbs.md")?.status, 400);

    let restore = server.call(
        "POST",
        "/api/memory/restore",
        Some(&json!({"path": "topics/garden/herbs.md", "commit": oldest})),
    )?;
    assert_eq!(restore.status, 200, "{}", restore.text());
    assert_eq!(restore.json()["restored"], true);
    assert_eq!(std::fs::read_to_string(server.workspace.join("topics/garden/herbs.md"))?, first);
    let again = server.call(
        "POST",
        "/api/memory/restore",
        Some(&json!({"path": "topics/garden/herbs.md", "commit": oldest})),
    )?;
    assert_eq!(again.json()["restored"], false);

    // Validation: errors with line numbers, and nothing on disk changes.
    let before = tree_hash(&server.workspace, false)?;
    let bad = format!("{first}\nAn uncited claim with no source.\n");
    let check = server.call(
        "POST",
        "/api/memory/validate",
        Some(&json!({"path": "topics/garden/herbs.md", "content": bad})),
    )?;
    assert_eq!(check.status, 200);
    let answer = check.json();
    assert_eq!(answer["valid"], false, "{answer}");
    assert_eq!(answer["error"]["code"], "INVALID_TOPIC_FORMAT");
    let violations = answer["error"]["details"]["violations"].as_array().ok_or("violations")?;
    assert!(violations.iter().any(|v| v["line"].as_u64().is_some_and(|l| l > 1)), "{answer}");
    let good = server.call(
        "POST",
        "/api/memory/validate",
        Some(&json!({"path": "topics/garden/herbs.md", "content": first.replace("Basil grows", "Basil is cut")})),
    )?;
    assert_eq!(good.json(), json!({"valid": true}));
    assert_eq!(tree_hash(&server.workspace, false)?, before, "validate changed the workspace");

    let rejected = server.call(
        "PUT",
        "/api/memory/topics/garden/herbs.md",
        Some(&json!({"content": "# Herbs\n\nNo citation here.\n"})),
    )?;
    assert_eq!(
        (rejected.status, rejected.code().as_deref()),
        (400, Some("INVALID_TOPIC_FORMAT")),
        "{}",
        rejected.text()
    );
    assert!(rejected.json()["error"].is_string());
    assert_eq!(tree_hash(&server.workspace, false)?, before, "a rejected edit changed the workspace");
    assert_eq!(server.call("PUT", "/api/memory/topics/garden/herbs.md", Some(&json!({"text": "x"})))?.status, 400);

    let core = server.call("PUT", "/api/memory/core", Some(&json!({"content": herbs("Ada keeps the garden.").replace("# Herbs", "# Core").replace("../../sources", "../sources")})))?;
    assert_eq!(core.status, 200, "{}", core.text());
    let core = server.get("/api/memory/core")?.json();
    assert!(core["content"].as_str().is_some_and(|c| c.contains("Ada keeps the garden.")), "{core}");
    assert!(core["rendered_content"].as_str().is_some_and(|c| c.contains("Ada keeps the garden.")), "{core}");
    assert!(core["rendered_tokens"].as_u64().is_some_and(|t| t > 0));
    assert_eq!(core["injected_tokens"], core["rendered_tokens"]);
    assert_eq!(core["report"]["budget"], 2000, "{core}");
    assert!(core["report"]["tokens_used"].as_u64().is_some_and(|t| t > 0));
    assert!(core["report"]["left_out"].is_array());
    let context = server.get("/api/memory/context")?.json();
    assert!(context["system_prompt"].as_str().is_some_and(|p| p.contains("Ada keeps the garden.")), "{context}");
    let listed = server.get("/api/memory/topics")?.json();
    assert!(listed.as_array().ok_or("list")?.iter().all(|t| t["path"] != "core.md"), "core.md is not listed");

    let delete = server.call("DELETE", "/api/memory/topics/garden/herbs.md", None)?;
    assert_eq!(delete.status, 200, "{}", delete.text());
    assert!(!server.workspace.join("topics/garden/herbs.md").exists());
    assert_eq!(server.call("DELETE", "/api/memory/topics/garden/herbs.md", None)?.status, 404);
    Ok(())
}

#[test]
fn changes_and_tools_go_through_the_registry() -> Result {
    let dir = TempDir::new()?;
    let server = example_server(&dir, &[])?;
    let status = server.call("POST", "/api/tools/memory_status", Some(&json!({})))?;
    assert_eq!(status.status, 200);
    let revision = status.json()["revision"].as_str().ok_or("revision")?.to_owned();

    let stale = json!({"base_revision": "0".repeat(32), "changes": [{"path": "topics/garden/herbs.md", "action": "write", "content": herbs("Mint spreads.")}]});
    let reply = server.call("POST", "/api/memory/changes", Some(&stale))?;
    assert_eq!((reply.status, reply.code().as_deref()), (409, Some("CONCURRENT_UPDATE")), "{}", reply.text());
    assert_eq!(reply.json()["ok"], false);

    let page = server.get("/api/memory/topics/garden/raised-bed.md")?.json();
    let edited = page["content"].as_str().ok_or("content")?.replace("two litres", "three litres");
    let change = json!({"base_revision": revision, "changes": [{"path": "topics/garden/raised-bed.md", "action": "write", "content": edited}]});
    let reply = server.call("POST", "/api/memory/changes", Some(&change))?;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert!(reply.json()["revision"].as_str().is_some_and(|r| r != revision));
    assert!(std::fs::read_to_string(server.workspace.join("topics/garden/raised-bed.md"))?.contains("three litres"));

    let missing = server.call("POST", "/api/memory/changes", Some(&json!({"changes": []})))?;
    assert_eq!(missing.status, 400, "{}", missing.text());
    let not_object = server.call("POST", "/api/memory/changes", Some(&json!([1, 2])))?;
    assert_eq!((not_object.status, not_object.code().as_deref()), (400, Some("INVALID_ARGUMENT")));

    let search = server.call("POST", "/api/tools/memory_search", Some(&json!({"query": "three litres"})))?;
    assert_eq!(search.status, 200);
    assert!(search.json()["output"].as_str().is_some_and(|o| o.contains("raised-bed.md")), "{}", search.text());
    let browse = server.call("POST", "/api/tools/memory_browse", Some(&json!({})))?;
    assert!(browse.json()["output"].as_str().is_some_and(|o| o.contains("file(s)")));
    let escape = server.call("POST", "/api/tools/memory_get", Some(&json!({"path": "../outside.md"})))?;
    assert_eq!((escape.status, escape.code().as_deref()), (403, Some("PATH_OUTSIDE_WORKSPACE")), "{}", escape.text());
    let unknown = server.call("POST", "/api/tools/memory_forget", Some(&json!({})))?;
    assert_eq!((unknown.status, unknown.code().as_deref()), (404, Some("CLI_HTTP_NOT_FOUND")));
    Ok(())
}

#[test]
fn a_citation_opens_its_source_frame() -> Result {
    let dir = TempDir::new()?;
    let server = example_server(&dir, &[])?;
    let reply = server.get(&format!("/api/memory/source?handle={}", HANDLE.replace('#', "%23")))?;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let frame = reply.json();
    assert_eq!(frame["source_id"], "openprogram/sess-garden/g1");
    assert_eq!(frame["path"], "sources/openprogram/_v2/sess-garden.md");
    assert_eq!(frame["trust_state"], "trusted");
    assert!(frame["text"].as_str().is_some_and(|t| t.to_lowercase().contains("tomato")), "{frame}");
    assert!(frame["time"].is_string() && frame["speaker_label"].is_string(), "{frame}");

    let wrong =
        server.get("/api/memory/source?handle=sources/openprogram/_v2/sess-garden.md%23source-0000000000000000")?;
    assert_eq!(wrong.status, 404);
    assert_eq!(server.get("/api/memory/source?handle=sources/openprogram/_v2/sess-garden.md")?.status, 400);
    assert_eq!(server.get("/api/memory/source?handle=topics/garden/raised-bed.md%23source-0")?.status, 403);
    assert_eq!(server.get("/api/memory/source?handle=../../../etc/passwd%23source-0")?.status, 403);
    assert_eq!(server.get("/api/memory/source")?.status, 400);

    // A legacy archive's record (the example's book-club citation): verbatim, its
    // continuation line included, and no speaker believed.
    let legacy =
        server.get("/api/memory/source?handle=../../sources/openprogram/old-notes.md%23source-620b0ae3789da094")?;
    assert_eq!(legacy.status, 200, "{}", legacy.text());
    let frame = legacy.json();
    assert_eq!((frame["legacy"].as_bool(), frame["speaker_trusted"].as_bool()), (Some(true), Some(false)), "{frame}");
    assert_eq!(frame["source_id"], "openprogram/old-notes/n2");
    assert_eq!((frame["line"].as_u64(), frame["speaker_label"].as_str()), (Some(9), Some("assistant")));
    assert!(
        frame["text"].as_str().is_some_and(|t| t.ends_with("She asked for a reading list by December.")),
        "{frame}"
    );
    let unknown = server.get("/api/memory/source?handle=sources/openprogram/old-notes.md%23source-0000000000000000")?;
    assert_eq!(unknown.status, 404);
    Ok(())
}

#[test]
fn turns_append_once_and_the_write_hook_answers() -> Result {
    let dir = TempDir::new()?;
    let sessions = dir.path().join("store.sqlite3");
    let sessions_arg = sessions.display().to_string();
    let server = example_server(&dir, &["--sessions", &sessions_arg])?;
    let turns = json!({"messages": [
        {"id": "u1", "role": "user", "content": "I planted mint.", "timestamp": 1_790_000_000.0,
         "authority_tier": "owner", "principal_id": "owner"},
        {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "Noted."}]},
    ]});
    let first = server.call("POST", "/api/sessions/s-1/messages", Some(&turns))?;
    assert_eq!(first.status, 200, "{}", first.text());
    assert_eq!((first.json()["received"].clone(), first.json()["appended"].clone()), (json!(2), json!(2)));
    let again = server.call("POST", "/api/sessions/s-1/messages", Some(&turns))?;
    assert_eq!(again.json()["appended"], 0, "append is idempotent by id");
    assert!(sessions.exists());
    for bad in [
        json!({}),
        json!({"messages": [{"role": "user"}]}),
        json!({"messages": [{"id": "x", "role": "user", "timestamp": true}]}),
    ] {
        let reply = server.call("POST", "/api/sessions/s-1/messages", Some(&bad))?;
        assert_eq!((reply.status, reply.code().as_deref()), (400, Some("INVALID_ARGUMENT")), "{bad}");
    }

    let write = server.call("POST", "/api/memory/write", Some(&json!({"session_id": "s-1"})))?;
    assert_eq!(write.status, 200, "{}", write.text());
    let answer = write.json();
    match answer["written"].as_bool() {
        Some(true) => {}
        Some(false) => assert!(answer["failure"]["code"].as_str().is_some_and(|c| !c.is_empty()), "{answer}"),
        None => return Err(format!("no written flag: {answer}").into()),
    }
    // Forced, the turns are due, and no writer model is configured: a recorded failure.
    let forced = server.call("POST", "/api/memory/write", Some(&json!({"session_id": "s-1", "force": true})))?.json();
    assert_eq!(forced["written"], false, "{forced}");
    assert!(forced["failure"]["reason"].is_string());
    assert_eq!(server.call("POST", "/api/memory/write", Some(&json!({"force": "yes"})))?.status, 400);
    Ok(())
}

#[test]
fn sigterm_stops_the_server_cleanly() -> Result {
    let dir = TempDir::new()?;
    let server = example_server(&dir, &[])?;
    assert_eq!(server.get("/api/memory/status")?.status, 200);
    let log = std::sync::Arc::clone(&server.stderr);
    let token = server.token.clone();
    let code = server.terminate()?;
    assert_eq!(code, Some(0));
    let log = log.lock().map(|l| l.clone()).unwrap_or_default();
    assert!(log.contains("scriptorium serve: stopped"), "{log}");
    assert!(!token.is_empty() && !log.contains(&token), "the token never reaches the log");
    Ok(())
}

/// A tool answer with a `TxError` keeps its body.
#[test]
fn tool_errors_keep_the_tx_error_body() -> Result {
    let dir = TempDir::new()?;
    let server = example_server(&dir, &[])?;
    let reply = server.call("POST", "/api/tools/memory_update", Some(&json!({"base_revision": "nope"})))?;
    assert_eq!(reply.status, 400, "{}", reply.text());
    let body: Value = reply.json();
    assert_eq!(body["ok"], false);
    assert!(body["error"]["message"].is_string());
    Ok(())
}

#[test]
fn search_ranks_with_the_page_filters() -> Result {
    let dir = TempDir::new()?;
    let server = example_server(&dir, &[])?;
    let all = server.get("/api/memory/search?q=tomatoes")?;
    assert_eq!(all.status, 200, "{}", all.text());
    let rows = all.json()["results"].as_array().ok_or("results")?.clone();
    assert!(rows.iter().any(|r| r["path"] == "topics/garden/raised-bed.md"), "{}", all.text());
    assert!(rows.iter().any(|r| r["path"].as_str().is_some_and(|p| p.starts_with("sources/"))), "sources too");
    assert!(rows.iter().all(|r| r["trust_state"].is_string() && r["anchor"].is_string()));
    let topics = server.get("/api/memory/search?q=tomatoes&path_prefix=topics/")?.json();
    let topic_rows = topics["results"].as_array().ok_or("results")?;
    assert!(
        !topic_rows.is_empty()
            && topic_rows.iter().all(|r| r["path"].as_str().is_some_and(|p| p.starts_with("topics/")))
    );
    let one = server.get("/api/memory/search?q=tomatoes&top_k=1")?.json();
    assert_eq!(one["results"].as_array().map(Vec::len), Some(1));
    let late = server.get("/api/memory/search?q=tomatoes&date_from=2030-01-01")?.json();
    assert_eq!(late["results"], json!([]), "{late}");
    assert_eq!(server.get("/api/memory/search?q=tomatoes&date_from=2026-99")?.status, 400);
    assert_eq!(server.get("/api/memory/search?q=tomatoes&top_k=0")?.status, 400);
    assert_eq!(server.get("/api/memory/search")?.status, 400);
    Ok(())
}

#[test]
fn core_is_read_under_the_write_lock() -> Result {
    use std::time::{Duration, Instant};

    use scriptorium_transaction::WriteLock;

    let dir = TempDir::new()?;
    let server = example_server(&dir, &[])?;
    // Warm first, so the only wait below is the route's own lock.
    let before = server.get("/api/memory/core")?;
    assert_eq!(before.status, 200, "{}", before.text());
    // Another writer holds the lock (spec 02 §8.4: core is read under it, 5 s): the read
    // waits for the release instead of reading a half-installed master and render.
    let held = WriteLock::acquire(&server.workspace.join(".scriptorium"), Duration::from_secs(5))?;
    let hold = Duration::from_millis(300);
    let release = std::thread::spawn(move || {
        std::thread::sleep(hold);
        drop(held);
    });
    let started = Instant::now();
    let during = server.get("/api/memory/core")?;
    let waited = started.elapsed();
    release.join().map_err(|_| "the releasing thread panicked")?;
    assert_eq!(during.status, 200, "{}", during.text());
    assert!(waited >= hold, "the read did not wait for the lock: {waited:?}");
    assert_eq!(during.json(), before.json());
    Ok(())
}
