//! Embedding search behind the [`Embedder`] trait (decision 12, spec 02 §6.7): cosine
//! similarity between the query and each candidate's text, with the path-prefix and
//! date filters. BM25 stays the default; no model ships with this crate.
//!
//! Document vectors are computed lazily, once per index and model, and dropped whenever
//! the index changes. Any embedder failure is `EMBEDDING_UNAVAILABLE`: there is never a
//! silent fallback to BM25.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::{Error, ErrorCode};
use crate::filter::{Filters, Selection};
use crate::index::Index;
use crate::round::round6;

/// A text embedding model.
pub trait Embedder {
    /// A stable name of the model: cached document vectors are reused only for the same name.
    fn model_id(&self) -> &str;

    /// One vector per text, in order, all of the same dimension.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// Why an embedder could not produce vectors (model missing, load or inference error).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmbedError {
    message: String,
}

impl EmbedError {
    /// An error with a short human-readable message.
    pub fn new(message: impl Into<String>) -> Self {
        EmbedError { message: message.into() }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for EmbedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EmbedError {}

/// The document vectors of one model, by slot.
#[derive(Debug)]
struct DocVectors {
    model: String,
    by_slot: HashMap<u32, Vec<f32>>,
}

/// The lazily filled document vectors of an index.
#[derive(Debug, Default)]
pub(crate) struct VectorCache {
    vectors: Mutex<Option<Arc<DocVectors>>>,
}

impl VectorCache {
    /// Forget every vector (the index changed).
    pub(crate) fn clear(&mut self) {
        *self.vectors.get_mut().unwrap_or_else(PoisonError::into_inner) = None;
    }

    fn get(&self, index: &Index, embedder: &dyn Embedder) -> Result<Arc<DocVectors>, Error> {
        let mut cached = self.vectors.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(vectors) = cached.as_ref().filter(|v| v.model == embedder.model_id()) {
            return Ok(Arc::clone(vectors));
        }
        let mut slots = Vec::new();
        let mut texts = Vec::new();
        for file in index.files().values() {
            for (slot, entry) in index.live_slots(*file) {
                let event = &entry.event;
                // A record changed behind the index is an error, never another text.
                let content = event.read_content().map_err(|why| why.into_error(event.path()))?;
                slots.push(slot);
                texts.push(format!(
                    "{} {} {} {}",
                    content,
                    event.path(),
                    event.context.headings.join(" "),
                    event.date().unwrap_or("")
                ));
            }
        }
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = embed_checked(embedder, &refs)?;
        let fresh = Arc::new(DocVectors {
            model: embedder.model_id().to_owned(),
            by_slot: slots.into_iter().zip(vectors).collect(),
        });
        *cached = Some(Arc::clone(&fresh));
        Ok(fresh)
    }
}

fn embed_checked(embedder: &dyn Embedder, texts: &[&str]) -> Result<Vec<Vec<f32>>, Error> {
    let vectors = embedder.embed(texts).map_err(|e| {
        Error::new(ErrorCode::EmbeddingUnavailable, format!("embedding model {} failed", embedder.model_id()))
            .with_source(e)
    })?;
    if vectors.len() != texts.len() {
        return Err(Error::new(
            ErrorCode::EmbeddingUnavailable,
            format!(
                "embedding model {} returned {} vectors for {} texts",
                embedder.model_id(),
                vectors.len(),
                texts.len()
            ),
        ));
    }
    Ok(vectors)
}

/// Cosine similarity in `f64`; 0 when either vector is zero or the dimensions differ.
fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut norm_a, mut norm_b) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        norm_a += x * x;
        norm_b += y * y;
    }
    if norm_a == 0.0 || norm_b == 0.0 { 0.0 } else { dot / (norm_a.sqrt() * norm_b.sqrt()) }
}

/// The best `top_k` candidate slots by similarity (rounded to 6 decimals), sorted by
/// `(−similarity, path, line, event_id)`.
///
/// Errors: [`ErrorCode::SpeakerWithEmbedding`] when the filters name a speaker (results
/// carry no trusted speaker to filter on), [`ErrorCode::EmbeddingUnavailable`] when the
/// embedder fails, bad date windows as for BM25.
pub(crate) fn embedding_ranking(
    index: &Index,
    query: &str,
    filters: &Filters,
    top_k: usize,
    embedder: &dyn Embedder,
) -> Result<Vec<(u32, f64)>, Error> {
    let selection = Selection::new(filters)?;
    if selection.has_speaker() {
        return Err(Error::new(
            ErrorCode::SpeakerWithEmbedding,
            "speaker filter is not supported for embedding search",
        ));
    }
    if selection.is_nothing() {
        return Ok(Vec::new());
    }
    let candidates = index.candidates(&selection);
    let vectors = index.vectors.get(index, embedder)?;
    let query_vector = embed_checked(embedder, &[query])?.into_iter().next().unwrap_or_default();
    let mut ranked: Vec<(u32, f64)> = vectors
        .by_slot
        .iter()
        .filter(|(slot, _)| candidates.set.contains(**slot))
        .map(|(slot, vector)| (*slot, round6(cosine(&query_vector, vector))))
        .collect();
    let key = |slot: u32| index.slot(slot).map(|entry| (entry.event.path(), entry.event.line, entry.event.event_id()));
    let order =
        |a: &(u32, f64), b: &(u32, f64)| -> Ordering { b.1.total_cmp(&a.1).then_with(|| key(a.0).cmp(&key(b.0))) };
    ranked.sort_by(order);
    ranked.truncate(top_k);
    Ok(ranked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_parallel_orthogonal_and_zero_vectors() {
        assert!((cosine(&[1.0, 2.0], &[2.0, 4.0]) - 1.0).abs() < 1e-12);
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 1.0]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 1.0]), 0.0);
        assert_eq!(cosine(&[1.0], &[1.0, 1.0]), 0.0);
    }

    #[test]
    fn embed_error_keeps_its_message() {
        let error = EmbedError::new("model files missing");
        assert_eq!(error.message(), "model files missing");
        assert_eq!(error.to_string(), "model files missing");
    }
}
