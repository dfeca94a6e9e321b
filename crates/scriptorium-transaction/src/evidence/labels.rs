//! Replace `new-source-…` label tokens in edit text with the ids their evidence was
//! archived under (spec 02 §4.2).
//!
//! A token is the longest run `new-source-[a-z0-9-]+` at its position, so a declared
//! label that is a prefix of a longer token never replaces part of it: `new-source-a`
//! does not turn `new-source-ab` into `<id>b`. That is the "longest label first" rule,
//! made strict: a token that is not exactly a declared label is `MISSING_SOURCE`
//! rather than a partial replacement.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::{Error, ErrorCode};

/// The prefix every evidence label and label token starts with.
pub(crate) const LABEL_PREFIX: &str = "new-source-";

/// Whether `label` fully matches `new-source-[a-z0-9-]+`.
pub(crate) fn is_label(label: &str) -> bool {
    label.strip_prefix(LABEL_PREFIX).is_some_and(|rest| !rest.is_empty() && rest.bytes().all(is_label_byte))
}

fn is_label_byte(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'
}

/// Replace every `new-source-…` token in `text` by its archived source id.
///
/// `source_ids` maps each declared label to its source id. A token with no declared
/// label fails with `MISSING_SOURCE`; its details list the undeclared tokens
/// (`labels`, in order of first use) and the declared labels (`declared`, sorted).
///
/// ```
/// use std::collections::BTreeMap;
/// use scriptorium_transaction::substitute_source_labels;
///
/// let ids = BTreeMap::from([("new-source-a".to_owned(), "claude-code/t/m".to_owned())]);
/// assert_eq!(substitute_source_labels("Sources: new-source-a.", &ids)?, "Sources: claude-code/t/m.");
/// assert!(substitute_source_labels("new-source-ab", &ids).is_err());
/// # Ok::<(), scriptorium_transaction::Error>(())
/// ```
pub fn substitute_source_labels(text: &str, source_ids: &BTreeMap<String, String>) -> Result<String, Error> {
    let mut out = String::with_capacity(text.len());
    let mut missing: Vec<&str> = Vec::new();
    let mut rest = text;
    while let Some(found) = rest.find(LABEL_PREFIX) {
        // `find` and an ASCII-only count both land on character boundaries.
        let (before, from_token) = rest.split_at_checked(found).unwrap_or((rest, ""));
        out.push_str(before);
        let suffix = from_token.get(LABEL_PREFIX.len()..).unwrap_or_default();
        let token_len = LABEL_PREFIX.len() + suffix.bytes().take_while(|&b| is_label_byte(b)).count();
        let (token, after) = from_token.split_at_checked(token_len).unwrap_or((from_token, ""));
        match source_ids.get(token) {
            Some(id) => out.push_str(id),
            None if token.len() == LABEL_PREFIX.len() => out.push_str(token),
            None => {
                if !missing.contains(&token) {
                    missing.push(token);
                }
                out.push_str(token);
            }
        }
        rest = after;
    }
    out.push_str(rest);
    if missing.is_empty() {
        return Ok(out);
    }
    let message = format!("undeclared source label: {}", missing.join(", "));
    let declared: Vec<Value> = source_ids.keys().map(|label| Value::from(label.as_str())).collect();
    Err(Error::new(ErrorCode::MissingSource, message)
        .with_detail("labels", missing.into_iter().map(Value::from).collect::<Vec<_>>())
        .with_detail("declared", declared))
}
