//! The shapes every tool answers in: a `TxError`, a notice, and the character cap.

use serde_json::{Map, Value, json};

use crate::error::Error;

/// The `TxError` JSON of spec 02 §7: `{"ok":false,"error":{"code","message","path"[,"details"]}}`.
pub(crate) fn tx_error(error: &Error) -> String {
    let mut body = Map::new();
    body.insert("code".to_owned(), Value::from(error.code().as_str()));
    body.insert("message".to_owned(), Value::from(error.message()));
    body.insert("path".to_owned(), error.path().map_or(Value::Null, Value::from));
    json!({"ok": false, "error": Value::Object(body)}).to_string()
}

/// A short notice for the model (not an error object).
pub(crate) fn notice(text: impl Into<String>) -> String {
    text.into()
}

/// `output` cut to at most `max_chars` characters, never inside a character.
pub(crate) fn cap_chars(output: String, max_chars: usize) -> String {
    match output.char_indices().nth(max_chars) {
        Some((cut, _)) => output[..cut].to_owned(),
        None => output,
    }
}
