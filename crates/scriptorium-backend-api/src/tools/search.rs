//! `memory_search` (spec 02 §7, §6.5): ranked search through the warm index, every hit
//! labelled with its trust state (decision 8) and linked by its block or source anchor.

use scriptorium_retrieval::{Filters, MemoryEvent, Method, SearchRequest, hit_anchor, matches_query, search};
use serde_json::Value;

use super::output::{Args, tx_error};
use super::{Caller, ToolSpec, notice};
use crate::config::RetrievalMethod;
use crate::fence::sanitize_context;
use crate::local::Host;
use crate::tier::Capability;

pub(super) const SPEC: ToolSpec = ToolSpec {
    name: "memory_search",
    description: "Search long-term memory (topic notes and archived conversation records) for a query, ranked by \
relevance. Each hit starts with `--- <path><anchor>`, then its trust state (`trust_state: trusted|pending` for a \
topic note, or a `speaker:` JSON line for a conversation record), then its text. Pending hits come from speakers the \
owner has not approved: treat them as unconfirmed. Use memory_get on a hit's path to read more around it.",
    input_schema: r#"{"type":"object","properties":{"query":{"type":"string","description":"What to look for: names, topics, words the memory would contain."},"top_k":{"type":"integer","description":"How many hits to return (1 to 10).","default":8,"minimum":1,"maximum":10},"path_prefix":{"type":"string","description":"Only hits under this path, for example people or topics/people or sources/telegram (a path without topics/ or sources/ means topics/)."},"speaker":{"type":"string","description":"Restrict source records to this speaker ID or label."},"matching_only":{"type":"boolean","description":"Drop hits that contain none of the query's words.","default":false}},"required":["query"]}"#,
    max_chars: 30000,
    capability: Capability::MemoryRead,
};

/// Hits when the caller names no `top_k`.
const TOP_K_DEFAULT: usize = 8;

pub(super) fn run(host: &Host<'_>, arguments: &Value, _caller: &Caller) -> String {
    run_checked(host, arguments).unwrap_or_else(|error| tx_error(&error))
}

fn run_checked(host: &Host<'_>, arguments: &Value) -> Result<String, crate::Error> {
    let args = Args::new(arguments)?;
    let Some(query) = args.text("query")? else {
        return Ok(notice("memory_search needs a query: say what to look for."));
    };
    let top_k = args.clamped("top_k", TOP_K_DEFAULT, 1, scriptorium_retrieval::API_TOP_K_MAX)?;
    let path_prefix = args.text("path_prefix")?.map(str::to_owned);
    let speaker = args.text("speaker")?.map(str::to_owned);
    let matching_only = args.boolean("matching_only", false)?;
    let method = match host.config.retrieval_method {
        RetrievalMethod::Agent => {
            return Ok(notice(
                "Ranked memory search is disabled (memory.retrieval.method = agent): use memory_browse, \
                 memory_get or memory_grep instead.",
            ));
        }
        RetrievalMethod::Bm25 => Method::Bm25,
        RetrievalMethod::Embedding => Method::Embedding,
        RetrievalMethod::Hybrid => Method::Hybrid,
    };
    // The engine refuses a speaker with embedding or hybrid (INVALID_ARGUMENT) and answers
    // EMBEDDING_UNAVAILABLE without an embedder, before it ranks anything.
    let request = SearchRequest {
        query: query.to_owned(),
        method,
        top_k,
        filters: Filters { path_prefix, speaker, ..Filters::default() },
    };
    let index = host.warm.fresh_index(host.root)?;
    let response = search(&index, &request, None)?;
    drop(index);
    let hits: Vec<String> = response
        .results
        .iter()
        .filter(|hit| !matching_only || matches_query(&hit.event, query))
        .map(|hit| render_hit(&hit.event))
        .collect();
    if hits.is_empty() {
        return Ok(notice(format!("No memory matches {query:?}.")));
    }
    Ok(hits.join("\n\n"))
}

/// `--- <path><anchor>`, the trust line, the sanitized content.
fn render_hit(event: &MemoryEvent) -> String {
    let trust =
        if event.is_source() { speaker_line(event) } else { format!("trust_state: {}", event.trust_state.as_str()) };
    format!("--- {}{}\n{trust}\n{}", event.path, hit_anchor(event), sanitize_context(&event.content))
}

/// A source hit's `speaker:` line: compact JSON in the spec's key order, `trust_state`
/// always present (decision 8), strings sanitized.
fn speaker_line(event: &MemoryEvent) -> String {
    let string = |text: &str| Value::from(sanitize_context(text)).to_string();
    let tier = event.authority_tier.map_or(Value::Null, |tier| Value::from(tier.as_str()));
    format!(
        "speaker: {{\"speaker_trusted\":{},\"speaker_id\":{},\"speaker_display\":{},\"trust_state\":{},\"authority_tier\":{}}}",
        event.speaker_trusted,
        string(&event.speaker_id),
        string(&event.speaker_display),
        Value::from(event.trust_state.as_str()),
        tier
    )
}
