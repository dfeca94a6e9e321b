//! JSON text as Python's `json.dumps` writes it with default separators (`", "`,
//! `": "`), which the byte-exact views need and serde_json's compact form lacks.

/// A string literal, non-ASCII raw (`ensure_ascii=False`): serde_json escapes exactly
/// the characters Python does in that mode.
pub(crate) fn string(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

/// A list of strings: `["a", "b"]`.
pub(crate) fn string_list<S: AsRef<str>>(items: &[S]) -> String {
    let inner: Vec<String> = items.iter().map(|item| string(item.as_ref())).collect();
    format!("[{}]", inner.join(", "))
}
