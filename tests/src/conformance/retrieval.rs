//! Retrieval: the BM25 index of `_resources/bm25-world` (every event after v2 preference
//! and trust resolution), ranked searches over it, the tokenizer and the path-prefix rule.

use serde_json::{Value, json};

use scriptorium_archive_format::AuthorityTier;
use scriptorium_retrieval::{
    Bm25Options, Filters, Hit, Index, MemoryEvent, Score, event_matches_path_prefix, normalize_path_prefix, tokenize,
};

use super::{Case, Outcome, diff_json, function_of, undispatched};

/// `bm25_index`, `bm25_search`, `fn_bm25_tokenize`, `fn_path_prefix`.
pub(super) fn run(case: &Case) -> Outcome {
    Outcome::from_check(match case.kind.as_str() {
        "bm25_index" => check_index(case),
        "bm25_search" => check_search(case),
        "fn_bm25_tokenize" => check_tokenize(case),
        "fn_path_prefix" => check_path_prefix(case),
        other => Err(format!("not a retrieval kind: {other}")),
    })
}

fn workspace_index(case: &Case) -> Result<Index, String> {
    let workspace = case.input.get("workspace").and_then(Value::as_str).ok_or("input without workspace")?;
    Index::from_workspace(&case.resource(workspace)).map_err(|e| e.to_string())
}

fn check_index(case: &Case) -> Result<(), String> {
    let index = workspace_index(case)?;
    let got: Vec<Value> = index.events().map(event_json).collect();
    let want = case.expected.get("events").ok_or("expected without events")?;
    diff_json("events", &Value::Array(got), want)
}

fn check_search(case: &Case) -> Result<(), String> {
    let index = workspace_index(case)?;
    let params = case.input.get("params").ok_or("input without params")?;
    let text = |key: &str| params.get(key).and_then(Value::as_str).map(str::to_owned);
    let query = text("query").ok_or("params without query")?;
    let options = Bm25Options {
        top_k: params.get("top_k").and_then(Value::as_u64).map_or(8, |k| usize::try_from(k).unwrap_or(usize::MAX)),
        rerank: params.get("rerank").and_then(Value::as_bool).unwrap_or(true),
        filters: Filters {
            path_prefix: text("path_prefix"),
            date_from: text("date_from"),
            date_to: text("date_to"),
            speaker: text("speaker"),
            include_sources: params.get("include_sources").and_then(Value::as_bool).unwrap_or(true),
        },
    };
    let got = match index.search(&query, &options) {
        Ok(hits) => json!({"ok": true, "results": hits.iter().map(hit_json).collect::<Vec<_>>()}),
        // The message is the reference's; the Python exception type is informational (FORMAT.md).
        Err(error) => json!({"ok": false, "error": {"message": error.message(), "type": "ValueError"}}),
    };
    diff_json("search", &got, &case.expected)
}

fn check_tokenize(case: &Case) -> Result<(), String> {
    let function = function_of(case)?;
    if function != "retrieval.bm25.tokenize" {
        return Err(undispatched(function));
    }
    let cases = case.input.get("cases").and_then(Value::as_array).ok_or("input without cases")?;
    let got: Vec<Value> = cases
        .iter()
        .map(|text| text.as_str().map(|text| json!(tokenize(text))).ok_or("a case is not a string"))
        .collect::<Result<_, _>>()?;
    diff_json("results", &Value::Array(got), case.expected.get("results").ok_or("expected without results")?)
}

fn check_path_prefix(case: &Case) -> Result<(), String> {
    let function = function_of(case)?;
    if !["retrieval.bm25.event_matches_path_prefix", "retrieval.bm25._normalize_path_prefix"].contains(&function) {
        return Err(undispatched(function));
    }
    let cases = case.input.get("cases").and_then(Value::as_array).ok_or("input without cases")?;
    let mut got = Vec::new();
    for (n, input) in cases.iter().enumerate() {
        let arg = |i: usize| input.get(i).and_then(Value::as_str).ok_or(format!("cases[{n}]: argument {i} missing"));
        got.push(match function {
            "retrieval.bm25.event_matches_path_prefix" => json!(event_matches_path_prefix(arg(0)?, arg(1)?)),
            "retrieval.bm25._normalize_path_prefix" => {
                let prefix = input.as_str().ok_or(format!("cases[{n}] is not a string"))?;
                json!(normalize_path_prefix(prefix))
            }
            other => return Err(undispatched(other)),
        });
    }
    diff_json("results", &Value::Array(got), case.expected.get("results").ok_or("expected without results")?)
}

/// An event in the reference's `MemoryEvent` JSON shape (no date is `""`).
pub(super) fn event_json(event: &MemoryEvent) -> Value {
    json!({
        "authority_tier": event.authority_tier.map(AuthorityTier::as_str),
        "content": event.content,
        "date": event.date.as_deref().unwrap_or(""),
        "dates": event.dates,
        "event_id": event.event_id,
        "headings": event.headings,
        "line": event.line,
        "path": event.path,
        "principal_id": event.principal_id,
        "refs": event.refs,
        "speaker_display": event.speaker_display,
        "speaker_id": event.speaker_id,
        "speaker_kind": event.speaker_kind,
        "speaker_label": event.speaker_label,
        "speaker_trusted": event.speaker_trusted,
        "trust_state": event.trust_state.as_str(),
        "visibility": event.visibility,
    })
}

/// A search row: the event plus its scores.
fn hit_json(hit: &Hit) -> Value {
    let mut row = event_json(&hit.event);
    if let (Value::Object(fields), Score::Bm25(score)) = (&mut row, &hit.score) {
        fields.insert("final_score".into(), json!(score.final_score));
        fields.insert("bm25_score".into(), json!(score.bm25_score));
        fields.insert("lexical_score".into(), json!(score.lexical_score));
        fields.insert("rule_adjustment".into(), json!(score.rule_adjustment));
        fields.insert("rule_features".into(), json!(score.rule_features));
    }
    row
}
