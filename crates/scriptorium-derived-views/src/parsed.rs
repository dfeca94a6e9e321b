//! The parsed topic files a [`ViewsCache`](crate::ViewsCache) keeps, with the id counts
//! and violation total that tell whether the whole tree is valid without merging it.

use std::collections::{BTreeMap, HashMap};

use scriptorium_topic_markdown::Unit;

use crate::timeline::UnitEntries;

/// Every parsed topic file, with how often each id occurs across them and the total
/// violations, kept in step on every insert and removal.
#[derive(Debug, Default)]
pub(crate) struct Topics {
    files: BTreeMap<String, ParsedFile>,
    id_counts: HashMap<String, usize>,
    /// Ids held by more than one unit.
    duplicates: usize,
    violations: usize,
}

impl Topics {
    /// Every cached file by path.
    pub(crate) fn files(&self) -> &BTreeMap<String, ParsedFile> {
        &self.files
    }

    /// How many ids more than one unit holds.
    pub(crate) fn duplicates(&self) -> usize {
        self.duplicates
    }

    /// Violations of every cached file together.
    pub(crate) fn violations(&self) -> usize {
        self.violations
    }

    /// Cache `file` at `path`; returns the file it replaces.
    pub(crate) fn insert(&mut self, path: String, file: ParsedFile) -> Option<ParsedFile> {
        self.count(&file, true);
        let old = self.files.insert(path, file);
        if let Some(old) = &old {
            self.count(old, false);
        }
        old
    }

    pub(crate) fn remove(&mut self, path: &str) -> Option<ParsedFile> {
        let old = self.files.remove(path);
        if let Some(old) = &old {
            self.count(old, false);
        }
        old
    }

    fn count(&mut self, file: &ParsedFile, add: bool) {
        if add {
            self.violations += file.violations;
        } else {
            self.violations = self.violations.saturating_sub(file.violations);
        }
        for unit in &file.units {
            if add {
                let count = self.id_counts.entry(unit.memory_id.clone()).or_insert(0);
                *count += 1;
                if *count == 2 {
                    self.duplicates += 1;
                }
            } else if let Some(count) = self.id_counts.get_mut(&unit.memory_id) {
                *count = count.saturating_sub(1);
                if *count == 1 {
                    self.duplicates = self.duplicates.saturating_sub(1);
                } else if *count == 0 {
                    self.id_counts.remove(&unit.memory_id);
                }
            }
        }
    }
}

/// One topic file parsed on its own, strictly, with the timeline entries of each unit.
#[derive(Debug)]
pub(crate) struct ParsedFile {
    pub(crate) bytes: Vec<u8>,
    pub(crate) units: Vec<Unit>,
    pub(crate) timeline: Vec<UnitEntries>,
    pub(crate) violations: usize,
}

#[cfg(test)]
mod tests {
    use scriptorium_topic_markdown::{MemorySources, Mode, SourceResolver, parse_tree};

    use super::*;

    fn file(text: &str) -> ParsedFile {
        let resolver = SourceResolver::new(MemorySources::new());
        let (_, units, violations) =
            parse_tree([("topics/x.md", text.as_bytes())], &resolver, Mode::Lenient).into_parts();
        ParsedFile { bytes: text.as_bytes().to_vec(), units, timeline: Vec::new(), violations: violations.len() }
    }

    #[test]
    fn duplicates_are_counted_across_files_and_go_when_a_copy_goes() {
        let mut topics = Topics::default();
        topics.insert("topics/a.md".to_owned(), file("# A\n\nOne. ^aaaa0001\n\nTwo. ^bbbb0002\n"));
        assert_eq!(topics.duplicates(), 0);
        topics.insert("topics/b.md".to_owned(), file("# B\n\nAgain. ^aaaa0001\n"));
        assert_eq!(topics.duplicates(), 1);
        // Replacing b.md's only copy with a new id ends the duplicate.
        let old = topics.insert("topics/b.md".to_owned(), file("# B\n\nNew. ^cccc0003\n"));
        assert_eq!(old.map(|old| old.units.len()), Some(1));
        assert_eq!(topics.duplicates(), 0);
        topics.insert("topics/c.md".to_owned(), file("# C\n\nThird. ^cccc0003\n"));
        assert_eq!(topics.duplicates(), 1);
        topics.remove("topics/b.md");
        assert_eq!((topics.duplicates(), topics.files().len()), (0, 2));
    }
}
