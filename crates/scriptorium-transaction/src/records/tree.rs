//! The staged topic tree as parsed documents while record ops run, and the fresh
//! footnote labels new evidence gets.

use std::collections::{BTreeMap, BTreeSet};

use scriptorium_topic_markdown::TopicDocument;

use super::edit::{Found, defined_ids, find_paragraph};
use crate::error::{Error, ErrorCode};

/// The staged topic files as parsed documents, and which of them were edited.
pub(super) struct Tree {
    pub(super) documents: BTreeMap<String, TopicDocument>,
    pub(super) changed: BTreeSet<String>,
}

impl Tree {
    pub(super) fn load(topics: &BTreeMap<String, Vec<u8>>) -> Result<Self, Error> {
        let mut documents = BTreeMap::new();
        // Only topic files hold records; a caller passing more of the stage loses nothing.
        for (path, bytes) in topics.iter().filter(|(path, _)| path.starts_with("topics/") && path.ends_with(".md")) {
            let document = TopicDocument::parse(path, bytes).map_err(|violation| {
                Error::new(ErrorCode::InvalidTopicFormat, violation.detail().to_owned()).with_path(path.clone())
            })?;
            documents.insert(path.clone(), document);
        }
        Ok(Tree { documents, changed: BTreeSet::new() })
    }

    /// The file and paragraph carrying `id`.
    pub(super) fn locate(&self, id: &str) -> Option<(String, Found)> {
        self.documents.iter().find_map(|(path, document)| find_paragraph(document, id).map(|f| (path.clone(), f)))
    }

    /// The lines of `path` (empty for a file that does not exist yet).
    pub(super) fn lines(&self, path: &str) -> Vec<String> {
        self.documents.get(path).map(|d| d.lines().to_vec()).unwrap_or_default()
    }

    pub(super) fn document(&self, path: &str) -> TopicDocument {
        self.documents.get(path).cloned().unwrap_or_else(|| TopicDocument::from_lines(path, Vec::new()))
    }

    pub(super) fn set(&mut self, path: &str, lines: Vec<String>) {
        self.documents.insert(path.to_owned(), TopicDocument::from_lines(path, lines));
        self.changed.insert(path.to_owned());
    }
}

/// Fresh local footnote labels `new-evidence-record-<n>` (the reference's spelling, seen
/// in the vectors' `evidence_ids`), unique across the whole tree: the normalizer maps
/// each label once for all files, so a label reused in two files would share an id.
pub(super) struct Labels {
    taken: BTreeSet<String>,
    next: usize,
}

impl Labels {
    pub(super) fn new(tree: &Tree) -> Self {
        // Cited labels count too: a citation without a definition would claim the new one.
        let cited =
            tree.documents.values().flat_map(|d| d.paragraphs().flat_map(|(_, p)| p.cited()).map(str::to_owned));
        let taken = tree.documents.values().flat_map(|d| defined_ids(d).map(str::to_owned)).chain(cited).collect();
        Labels { taken, next: 1 }
    }

    pub(super) fn fresh(&mut self) -> String {
        loop {
            let label = format!("new-evidence-record-{}", self.next);
            self.next += 1;
            if self.taken.insert(label.clone()) {
                return label;
            }
        }
    }
}
