//! `scriptorium search`: BM25 over the workspace through the persistent index.
//!
//! One query prints its hits for a person (`path#anchor`, date, speaker, trust, score,
//! text) or as JSON; `--queries FILE` runs one query per line and prints one JSON line
//! per query with the time the search took inside this process (index opening not
//! included), so benchmarks measure the engine, not process start-up.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use scriptorium_backend_api::layers::retrieval::{
    Bm25Options, ErrorCode, Filters, Hit, INDEX_TOP_K_MAX, Index, Score, hit_anchor,
};
use serde_json::{Map, Value, json};

use crate::Outcome;
use crate::error::{CliError, CliErrorCode};
use crate::output::{print, print_json};
use crate::workspace::Workspace;

/// Arguments of `search`.
#[derive(Debug, Args)]
pub(crate) struct SearchArgs {
    /// The query (omit it with --queries).
    #[arg(required_unless_present = "queries", conflicts_with = "queries")]
    pub(crate) query: Option<String>,
    /// Run every line of FILE as a query (blank lines skipped); prints one JSON line per
    /// query: `{"query", "elapsed_us", "results"}`.
    #[arg(long, value_name = "FILE")]
    pub(crate) queries: Option<PathBuf>,
    /// The workspace root (default: `$SCRIPTORIUM_WORKSPACE`, else the platform data
    /// directory + `scriptorium/memory`).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// Print the hits as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    /// How many hits to return (1 to 50; anything else is INVALID_ARGUMENT).
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub(crate) top_k: usize,
    /// Only source records of this speaker (id, display name or label).
    #[arg(long, value_name = "S")]
    pub(crate) speaker: Option<String>,
    /// Only events under this path (`health` means `topics/health`).
    #[arg(long, value_name = "P")]
    pub(crate) path_prefix: Option<String>,
    /// Only events dated from this day, month or year on (`YYYY[-MM[-DD]]`).
    #[arg(long, value_name = "D")]
    pub(crate) from: Option<String>,
    /// Only events dated up to the end of this day, month or year.
    #[arg(long, value_name = "D")]
    pub(crate) to: Option<String>,
    /// Rank by the BM25 score alone, without the rule adjustments.
    #[arg(long)]
    pub(crate) no_rerank: bool,
}

/// Run `search`.
pub(crate) fn run(args: &SearchArgs) -> Result<Outcome, CliError> {
    if !(1..=INDEX_TOP_K_MAX).contains(&args.top_k) {
        return Err(CliError::invalid_argument(format!("--top-k must be 1 to {INDEX_TOP_K_MAX}, not {}", args.top_k)));
    }
    let workspace = Workspace::locate(args.workspace.as_deref())?;
    let options = Bm25Options {
        top_k: args.top_k,
        rerank: !args.no_rerank,
        filters: Filters {
            path_prefix: args.path_prefix.clone(),
            date_from: args.from.clone(),
            date_to: args.to.clone(),
            speaker: args.speaker.clone(),
            include_sources: true,
        },
    };
    let queries = match &args.queries {
        Some(file) => std::fs::read_to_string(file).map_err(|err| CliError::read(file, &err))?,
        None => String::new(),
    };
    let spinner =
        crate::progress::index_is_cold(&workspace.root).then(|| crate::progress::spinner("building the search index"));
    let index = Index::open(&workspace.root);
    if let Some(spinner) = spinner {
        spinner.finish_and_clear();
    }
    let index = index.map_err(retrieval_error)?;
    if args.queries.is_some() {
        let mut out = String::new();
        for query in queries.lines().map(str::trim).filter(|q| !q.is_empty()) {
            let started = Instant::now();
            let hits = index.search(query, &options).map_err(retrieval_error)?;
            let elapsed_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            let results: Vec<Value> = hits.iter().map(hit_json).collect();
            let line = json!({ "query": query, "elapsed_us": elapsed_us, "results": results });
            out.push_str(&line.to_string());
            out.push('\n');
        }
        print(&out)?;
        return Ok(Outcome::Clean);
    }
    let query = args.query.as_deref().unwrap_or_default();
    if query.trim().is_empty() {
        return Err(retrieval_error_of(ErrorCode::BlankQuery, "query is required"));
    }
    let hits = index.search(query, &options).map_err(retrieval_error)?;
    if args.json {
        print_json(&json!({ "query": query, "results": hits.iter().map(hit_json).collect::<Vec<_>>() }))?;
    } else {
        print(&human(query, &hits))?;
    }
    Ok(Outcome::Clean)
}

/// A retrieval error as the CLI reports it: bad input is `CLI_BAD_QUERY`, a read
/// failure `CLI_READ_FAILED`; the message starts with the retrieval code.
pub(crate) fn retrieval_error(err: scriptorium_backend_api::layers::retrieval::Error) -> CliError {
    let mut message = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(cause) = source {
        message.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    let code = if err.code() == ErrorCode::ReadFailed { CliErrorCode::ReadFailed } else { CliErrorCode::BadQuery };
    CliError::new(code, message)
}

fn retrieval_error_of(code: ErrorCode, message: &str) -> CliError {
    CliError::new(CliErrorCode::BadQuery, format!("{code}: {message}"))
}

fn human(query: &str, hits: &[Hit]) -> String {
    if hits.is_empty() {
        return format!("no results for {query:?}\n");
    }
    let mut out = String::new();
    for (rank, hit) in (1..).zip(hits) {
        let event = &hit.event;
        let mut about: Vec<String> = Vec::new();
        if let Some(date) = &event.date {
            about.push(date.clone());
        }
        // A speaker that no trusted `speaker-id` line vouches for is only a hint, and its
        // record's trust must not read as the speaker's.
        if event.speaker_label.is_empty() || event.speaker_trusted {
            if !event.speaker_label.is_empty() {
                about.push(event.speaker_label.clone());
            }
            about.push(event.trust_state.as_str().to_owned());
        } else {
            about.push(format!("untrusted speaker hint: {}", event.speaker_label));
            about.push(format!("record {}", event.trust_state.as_str()));
        }
        about.push(format!("score {:.6}", hit.score.value()));
        out.push_str(&format!("{rank}. {}{}  ({})\n", event.path, hit_anchor(event), about.join(", ")));
        for line in event.content.lines() {
            out.push_str(&format!("   {line}\n"));
        }
    }
    out
}

/// A hit as a JSON row: the spec's result fields (§6.5) plus the BM25 breakdown.
pub(crate) fn hit_json(hit: &Hit) -> Value {
    let event = &hit.event;
    let mut row = Map::new();
    let mut put = |key: &str, value: Value| {
        row.insert(key.to_owned(), value);
    };
    put("event_id", json!(event.event_id));
    put("path", json!(event.path));
    put("anchor", json!(hit_anchor(event)));
    put("line", json!(event.line));
    put("headings", json!(event.headings));
    put("date", json!(event.date));
    put("dates", json!(event.dates));
    put("content", json!(event.content));
    put("refs", json!(event.refs));
    put("speaker_id", json!(event.speaker_id));
    put("speaker_display", json!(event.speaker_display));
    put("speaker_label", json!(event.speaker_label));
    put("speaker_trusted", json!(event.speaker_trusted));
    put("trust_state", json!(event.trust_state.as_str()));
    put("speaker_kind", json!(event.speaker_kind));
    put("principal_id", json!(event.principal_id));
    put("authority_tier", json!(event.authority_tier.map(|tier| tier.as_str())));
    match &hit.score {
        Score::Bm25(score) => {
            put("final_score", json!(score.final_score));
            put("bm25_score", json!(score.bm25_score));
            put("lexical_score", json!(score.lexical_score));
            put("rule_adjustment", json!(score.rule_adjustment));
            put("rule_features", json!(score.rule_features));
        }
        Score::Similarity(value) => put("similarity", json!(value)),
        Score::Fused(value) => put("final_score", json!(value)),
    }
    Value::Object(row)
}
