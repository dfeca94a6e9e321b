//! Whether a hit holds a query token at all: BM25+'s δ gives every candidate a floor
//! score, so a ranked hit may match nothing (decision "automatic recall and zero-match hits").

use std::collections::HashSet;

use crate::event::MemoryEvent;
use crate::index::for_each_field_token;
use crate::tokenize::tokenize;

/// Whether any token of `query` occurs in `event`'s document text (content, path without
/// `topics/`, headings, dates), tokenized as the index tokenizes it.
///
/// A hit whose content the search API cut ([`crate::CONTENT_MAX_CHARS`]) is judged on the
/// cut text, so a token only past the cut does not count: the check never keeps a hit
/// that matches nothing.
pub fn matches_query(event: &MemoryEvent, query: &str) -> bool {
    let tokens: HashSet<String> = tokenize(query).into_iter().collect();
    let mut found = false;
    for_each_field_token(event, |token, _| found |= tokens.contains(token));
    found
}
