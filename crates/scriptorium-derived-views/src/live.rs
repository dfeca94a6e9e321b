//! [`LiveViews`]: the timeline, relations and recent-events views kept between builds as
//! ordered pieces (a timeline file's entries, a relations member, a recent-events key), so
//! that removing and adding the units of one edited topic file re-renders only the pieces
//! they touch. Each key carries the order the full render sorts by, so the pieces come
//! out in the same order whatever order the units went in: incremental equals full.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use scriptorium_topic_markdown::Unit;

use crate::recent::recent_row;
use crate::relations::{document, member};
use crate::timeline::{UnitEntries, render_file};

/// A unit's place in parse order: its file, compared component by component as
/// `parse_tree` orders files (`a/z.md` before `a.md`), then its index in that file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TreePos {
    pub(crate) path: String,
    pub(crate) index: usize,
}

impl Ord for TreePos {
    fn cmp(&self, other: &Self) -> Ordering {
        self.path.split('/').cmp(other.path.split('/')).then(self.index.cmp(&other.index))
    }
}

impl PartialOrd for TreePos {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// One timeline file: entries keyed by (first source ref, memory id, entry index in its
/// unit), which is the full render's stable sort when memory ids are unique; the
/// rendered bytes, `None` until rendered after a change.
#[derive(Debug, Default)]
struct TimelineFile {
    entries: BTreeMap<(String, String, usize), String>,
    bytes: Option<Vec<u8>>,
}

/// A backlinks member: the linking ids and their rendering, `None` after a change.
#[derive(Debug, Default)]
struct Backlinks {
    from: BTreeSet<String>,
    rendered: Option<String>,
}

/// The views of a set of units whose memory ids are unique.
#[derive(Debug, Default)]
pub(crate) struct LiveViews {
    timeline: BTreeMap<String, TimelineFile>,
    outbound: BTreeMap<String, String>,
    backlinks: BTreeMap<String, Backlinks>,
    relations: Option<String>,
    recent: BTreeSet<(i64, TreePos)>,
}

impl LiveViews {
    /// Add the timeline `entries` and recent-events key of the unit at `pos` with creation
    /// rank `rank`; its relations go in with [`add_relations`](Self::add_relations).
    pub(crate) fn add(&mut self, pos: TreePos, entries: &UnitEntries, rank: i64) {
        for (n, (path, entry)) in entries.iter().enumerate() {
            let file = self.timeline.entry(path.clone()).or_default();
            file.entries.insert((entry.first_ref.clone(), entry.memory_id.clone(), n), entry.text.clone());
            file.bytes = None;
        }
        self.recent.insert((rank, pos));
    }

    /// Take out what [`add`](Self::add) put in for the same arguments.
    pub(crate) fn remove(&mut self, pos: TreePos, entries: &UnitEntries, rank: i64) {
        for (n, (path, entry)) in entries.iter().enumerate() {
            if let Some(file) = self.timeline.get_mut(path) {
                file.entries.remove(&(entry.first_ref.clone(), entry.memory_id.clone(), n));
                file.bytes = None;
                if file.entries.is_empty() {
                    self.timeline.remove(path);
                }
            }
        }
        self.recent.remove(&(rank, pos));
    }

    /// Add the outbound links of `unit` and its backlinks.
    pub(crate) fn add_relations(&mut self, unit: &Unit) {
        let targets: BTreeSet<&str> = unit.relation_targets.iter().map(String::as_str).collect();
        self.outbound.insert(unit.memory_id.clone(), member(&unit.memory_id, targets.iter().copied()));
        for target in targets {
            let links = self.backlinks.entry(target.to_owned()).or_default();
            links.from.insert(unit.memory_id.clone());
            links.rendered = None;
        }
        self.relations = None;
    }

    /// Take out what [`add_relations`](Self::add_relations) put in for `unit`.
    pub(crate) fn remove_relations(&mut self, unit: &Unit) {
        self.outbound.remove(&unit.memory_id);
        for target in &unit.relation_targets {
            if let Some(links) = self.backlinks.get_mut(target) {
                links.from.remove(&unit.memory_id);
                links.rendered = None;
                if links.from.is_empty() {
                    self.backlinks.remove(target);
                }
            }
        }
        self.relations = None;
    }

    /// Every timeline file: path, bytes and whether this call rendered them (the file
    /// changed since the last call), rendering the files that changed.
    pub(crate) fn timeline(&mut self) -> impl Iterator<Item = (&String, &Vec<u8>, bool)> {
        self.timeline.iter_mut().map(|(path, file)| {
            let rendered = file.bytes.is_none();
            let bytes = file
                .bytes
                .get_or_insert_with(|| render_file(path, file.entries.values().map(String::as_str)).into_bytes());
            (path, &*bytes, rendered)
        })
    }

    /// Whether `path` is a timeline file of these views.
    pub(crate) fn has_timeline_file(&self, path: &str) -> bool {
        self.timeline.contains_key(path)
    }

    /// `relations.json`, rendered again only after a change.
    pub(crate) fn relations(&mut self) -> &str {
        let LiveViews { outbound, backlinks, relations, .. } = self;
        relations.get_or_insert_with(|| {
            for (target, links) in backlinks.iter_mut() {
                if links.rendered.is_none() {
                    links.rendered = Some(member(target, links.from.iter().map(String::as_str)));
                }
            }
            document(
                backlinks.values().filter_map(|links| links.rendered.as_deref()),
                outbound.values().map(String::as_str),
            )
        })
    }

    /// `recent_events.jsonl`: the last `limit` keys, oldest first, each unit looked up
    /// by its place with `unit_at`.
    pub(crate) fn recent<'u>(&self, limit: usize, unit_at: impl Fn(&TreePos) -> Option<&'u Unit>) -> String {
        let mut last: Vec<&(i64, TreePos)> = self.recent.iter().rev().take(limit).collect();
        last.reverse();
        last.into_iter().filter_map(|(rank, pos)| unit_at(pos).map(|unit| recent_row(unit, *rank))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(path: &str, index: usize) -> TreePos {
        TreePos { path: path.to_owned(), index }
    }

    #[test]
    fn places_follow_parse_tree_order_not_byte_order() {
        // Byte order puts `a.md` first ('.' < '/'); parse_tree visits `a/z.md` first.
        assert!(pos("topics/a/z.md", 0) < pos("topics/a.md", 0));
        assert!(pos("topics/a.md", 1) < pos("topics/a.md", 2));
        assert!(pos("topics/b/c.md", 9) < pos("topics/b-c.md", 0));
    }

    #[test]
    fn a_unit_taken_out_leaves_the_views_as_before_it_went_in() {
        let text = "# T\n\nSee [it](b.md#^bbbb0002) again. ^aaaa0001\n";
        let sources = scriptorium_topic_markdown::MemorySources::new();
        let resolver = scriptorium_topic_markdown::SourceResolver::new(sources);
        let parsed = scriptorium_topic_markdown::parse_tree(
            [("topics/a.md", text.as_bytes())],
            &resolver,
            scriptorium_topic_markdown::Mode::Lenient,
        );
        let unit = parsed.into_parts().1.into_iter().next().expect("one unit");
        assert_eq!(unit.relation_targets, ["bbbb0002"], "{unit:?}");
        let mut views = LiveViews::default();
        let empty = views.relations().to_owned();
        views.add_relations(&unit);
        assert_eq!(
            views.relations(),
            "{\"backlinks\": {\"bbbb0002\": [\"aaaa0001\"]}, \"outbound\": {\"aaaa0001\": [\"bbbb0002\"]}}\n"
        );
        views.add(pos("topics/a.md", 0), &UnitEntries::new(), 7);
        assert_eq!(views.recent(1, |_| Some(&unit)).matches("\"created_order\": 7").count(), 1);
        views.remove(pos("topics/a.md", 0), &UnitEntries::new(), 7);
        views.remove_relations(&unit);
        assert_eq!(views.relations(), empty);
        assert_eq!(views.recent(50, |_| Some(&unit)), "");
        assert_eq!(views.timeline().count(), 0);
    }
}
