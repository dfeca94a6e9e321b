//! `relations.json`: outbound links of every unit and backlinks of every target
//! (spec 01 §8.3).

use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};

use scriptorium_topic_markdown::Unit;

use crate::json::{string, string_list};

/// The file's bytes: one line, keys sorted, plus LF.
pub fn render_relations<U: Borrow<Unit>>(units: &[U]) -> String {
    let mut outbound: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut backlinks: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for unit in units.iter().map(Borrow::borrow) {
        let targets = outbound.entry(unit.memory_id.as_str()).or_default();
        for target in &unit.relation_targets {
            targets.insert(target.as_str());
            backlinks.entry(target.as_str()).or_default().insert(unit.memory_id.as_str());
        }
    }
    format!("{{\"backlinks\": {}, \"outbound\": {}}}\n", object(&backlinks), object(&outbound))
}

fn object(map: &BTreeMap<&str, BTreeSet<&str>>) -> String {
    let members: Vec<String> = map
        .iter()
        .map(|(key, values)| format!("{}: {}", string(key), string_list(&values.iter().collect::<Vec<_>>())))
        .collect();
    format!("{{{}}}", members.join(", "))
}
