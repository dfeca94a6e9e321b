//! Evidence for the page: the exact source frame a citation points at, and the dry run
//! of a topic edit (its validation errors with line numbers; nothing installed).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use scriptorium_backend_api::layers::archive_format::{
    SpeakerView, is_v2_source_path, legacy_record, parse_bytes, source_anchor, split_record_header,
};
use scriptorium_backend_api::{HandEdit, sanitize_context};
use serde_json::{Value, json};

use super::body::{JsonBody, required_text};
use super::error::{ApiError, backend_error};
use super::routes_memory::Params;
use super::state::{State as Shared, blocking};
use super::{hand_edit, paths};

type AppState = State<Arc<Shared>>;

/// `GET /api/memory/source?handle=sources/…/_v2/<thread>.md#source-<16 hex>`: the frame's
/// verbatim record, speaker, time and trust. The handle is a citation's link target
/// (a leading `../` run, as topic files write it, is dropped first). A legacy archive's
/// record (`sources/<p>/<t>.md#source-…`, `sources/D<c>.md#d<c>-<t>`) answers with
/// `legacy: true` and no verified speaker.
pub(crate) async fn source(State(state): AppState, Query(query): Params) -> Result<Response, ApiError> {
    let handle = query.get("handle").ok_or_else(|| ApiError::bad_query("handle is required"))?.clone();
    let (raw_path, anchor) = handle
        .split_once('#')
        .ok_or_else(|| ApiError::bad_query("a handle is <path>#source-<hex>, as a citation links it"))?;
    let mut trimmed = raw_path;
    while let Some(rest) = trimmed.strip_prefix("../") {
        trimmed = rest;
    }
    let path = paths::relative(trimmed)?;
    if !path.starts_with("sources/") {
        return Err(ApiError::forbidden(paths::OUTSIDE, "a handle names a source archive under sources/"));
    }
    let anchor = anchor.to_owned();
    let root = state.root.clone();
    let value = blocking(move || -> Result<Value, ApiError> {
        let file = paths::on_disk(&root, &path)?.ok_or_else(ApiError::not_found)?;
        let bytes = std::fs::read(&file).map_err(|err| ApiError::internal(format!("cannot read {path}: {err}")))?;
        if !is_v2_source_path(&path) {
            return legacy_frame(&path, &String::from_utf8_lossy(&bytes), &anchor);
        }
        let parsed = parse_bytes(&bytes, &path);
        let frame = parsed
            .frames
            .iter()
            .find(|frame| source_anchor(frame.source_id) == anchor)
            .ok_or_else(ApiError::not_found)?;
        let meta = frame.effective_meta();
        let first_line = frame.record_text.split('\n').next().unwrap_or("");
        let header = split_record_header(first_line);
        let speaker_id = frame.speaker_id.as_deref().unwrap_or("");
        let speaker = header.as_ref().map(|header| SpeakerView::from_frame(speaker_id, header.label));
        Ok(json!({
            "handle": format!("{path}#{anchor}"),
            "path": path,
            "source_id": frame.source_id,
            "line": frame.record_start + 1,
            "text": sanitize_context(frame.record_text),
            "time": header.as_ref().map(|header| header.timestamp),
            "speaker_id": speaker.as_ref().map(|s| s.speaker_id.clone()),
            "speaker_display": speaker.as_ref().map(|s| s.speaker_display.clone()),
            "speaker_label": speaker.as_ref().map(|s| s.speaker_label.clone()),
            "speaker_trusted": meta.trust_state.as_str() == "trusted",
            "trust_state": meta.trust_state.as_str(),
            "authority_tier": meta.authority_tier.map(|tier| tier.as_str()),
            "principal_id": meta.principal_id,
            "speaker_kind": meta.speaker_kind,
            "legacy": false,
        }))
    })
    .await??;
    Ok(Json(value).into_response())
}

/// A legacy record as the source route answers it: the header's time and label, trusted
/// as legacy events are (spec 01 §3.2) but with its speaker never verified.
fn legacy_frame(path: &str, text: &str, anchor: &str) -> Result<Value, ApiError> {
    let record = legacy_record(path, text, anchor).ok_or_else(ApiError::not_found)?;
    let first_line = record.record_text.split('\n').next().unwrap_or("");
    let header = split_record_header(first_line);
    Ok(json!({
        "handle": format!("{path}#{anchor}"),
        "path": path,
        "source_id": record.source_id,
        "line": record.line,
        "text": sanitize_context(&record.record_text),
        "time": header.as_ref().map(|header| header.timestamp),
        "speaker_id": null,
        "speaker_display": null,
        "speaker_label": header.as_ref().map(|header| header.label),
        "speaker_trusted": false,
        "trust_state": "trusted",
        "authority_tier": null,
        "principal_id": null,
        "speaker_kind": null,
        "legacy": true,
    }))
}

/// `POST /api/memory/validate {path, content}`: every check an install of this hand
/// edit would run, then stop before the install. `{valid:true}` or
/// `{valid:false, error:{code, message, details:{violations:[{code, path, line, …}]}}}`.
pub(crate) async fn validate(State(state): AppState, body: JsonBody) -> Result<Response, ApiError> {
    let body = body.object()?;
    let path = paths::relative(required_text(&body, "path")?)?;
    if !path.starts_with("topics/") || !path.ends_with(".md") {
        return Err(ApiError::forbidden(paths::OUTSIDE, "only topics/**.md files can be edited"));
    }
    if paths::crosses_link(&state.root, &path) {
        return Err(ApiError::forbidden(paths::OUTSIDE, "the path goes through a symbolic link"));
    }
    let content = required_text(&body, "content")?.to_owned();
    let edit = HandEdit { dry_run: true, ..HandEdit::one(path, Some(content), "memory: validate") };
    let outcome = blocking(move || hand_edit::apply(&state, &edit)).await?;
    let value = match outcome {
        Ok(_) => json!({"valid": true}),
        Err(error) => {
            let mut answer = json!({"valid": false});
            let rendered = backend_error(&error);
            answer["error"] = rendered.into_body()["error"].clone();
            answer
        }
    };
    Ok(Json(value).into_response())
}
